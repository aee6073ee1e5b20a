package httpguard

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func request(remote string, headers ...string) *http.Request {
	r := httptest.NewRequest("GET", "http://dash.example:8089/", nil)
	r.RemoteAddr = remote
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Add(headers[i], headers[i+1])
	}
	return r
}

func TestProxies(t *testing.T) {
	p, err := ParseProxies([]string{"10.0.0.5", "192.168.0.0/16", "::1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ParseProxies([]string{"proxy.example"}); err == nil || !strings.Contains(err.Error(), "want an IP address") {
		t.Errorf("a name: %v", err)
	}
	for _, c := range []struct {
		name    string
		r       *http.Request
		client  string
		key     string
		secure  bool
		origin  string
		trusted bool
	}{
		{"direct, headers ignored", request("203.0.113.9:5000", "X-Forwarded-For", "1.2.3.4", "X-Forwarded-Proto", "https", "X-Forwarded-Host", "evil.example"),
			"203.0.113.9", "203.0.113.9", false, "http://dash.example:8089", false},
		{"through the proxy", request("10.0.0.5:5000", "X-Forwarded-For", "198.51.100.7", "X-Forwarded-Proto", "https", "X-Forwarded-Host", "dash.example"),
			"198.51.100.7", "198.51.100.7", true, "https://dash.example", true},
		{"a client's own X-Forwarded-For is skipped", request("10.0.0.5:5000", "X-Forwarded-For", "6.6.6.6, 198.51.100.7"),
			"198.51.100.7", "198.51.100.7", false, "http://dash.example:8089", true},
		{"two trusted hops", request("10.0.0.5:5000", "X-Forwarded-For", "198.51.100.7, 192.168.1.1"),
			"198.51.100.7", "198.51.100.7", false, "http://dash.example:8089", true},
		{"the nearest proxy's proto wins", request("10.0.0.5:5000", "X-Forwarded-Proto", "https, http"),
			"10.0.0.5", "10.0.0.5", false, "http://dash.example:8089", true},
		{"garbage hop", request("10.0.0.5:5000", "X-Forwarded-For", "nonsense"),
			"10.0.0.5", "10.0.0.5", false, "http://dash.example:8089", true},
		{"IPv6 by /64", request("[2001:db8:1:2:3:4:5:6]:443"),
			"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64", false, "http://dash.example:8089", false},
	} {
		if got := p.Client(c.r).String(); got != c.client {
			t.Errorf("%s: client %s, want %s", c.name, got, c.client)
		}
		if got := p.ClientKey(c.r); got != c.key {
			t.Errorf("%s: key %s, want %s", c.name, got, c.key)
		}
		if got := p.Secure(c.r); got != c.secure {
			t.Errorf("%s: secure %v", c.name, got)
		}
		if got := p.Origin(c.r); got != c.origin {
			t.Errorf("%s: origin %s, want %s", c.name, got, c.origin)
		}
		if got := p.FromProxy(c.r); got != c.trusted {
			t.Errorf("%s: from proxy %v", c.name, got)
		}
	}
	tlsReq := request("203.0.113.9:5000")
	tlsReq.TLS = &tls.ConnectionState{}
	tlsReq.Host = "dash.example:443"
	if !p.Secure(tlsReq) || p.Origin(tlsReq) != "https://dash.example" {
		t.Errorf("over TLS: secure %v origin %s", p.Secure(tlsReq), p.Origin(tlsReq))
	}
}

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:8089": true, "localhost:1": true, "LOCALHOST": true, "[::1]:9": true, "127.3.4.5": true,
		"evil.example": false, "evil.example:8089": false, "10.0.0.1:80": false, "localhost.evil.example": false, "": false,
	} {
		if got := LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v", host, got)
		}
	}
}

// TestServerBoundsHeaders: a header block over MaxHeaderBytes is refused
// (431) on a real listener.
func TestServerBoundsHeaders(t *testing.T) {
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	ts.Config = NewServer(ts.Config.Handler, 0)
	ts.Start()
	defer ts.Close()
	req, _ := http.NewRequest("GET", ts.URL, nil)
	req.Header.Set("X-Big", strings.Repeat("a", 2*MaxHeaderBytes))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a %d-byte header: %d, want 431", 2*MaxHeaderBytes, resp.StatusCode)
	}
	req.Header.Set("X-Big", strings.Repeat("a", MaxHeaderBytes/2))
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("a header within the bound: %v %v", err, resp)
	}
	resp.Body.Close()
}
