package httpguard

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Proxies are the reverse proxies the operator trusts (--trusted-proxy):
// only a request whose peer is one of them may say, in X-Forwarded-For,
// X-Forwarded-Proto and X-Forwarded-Host, who the client is, whether it
// used TLS and which host it asked for. Anyone else's X-Forwarded-*
// headers are ignored: a client could write them.
type Proxies []netip.Prefix

// ParseProxies reads --trusted-proxy values: an IP address or a CIDR
// range each.
func ParseProxies(values []string) (Proxies, error) {
	var out Proxies
	for _, v := range values {
		v = strings.TrimSpace(v)
		if p, err := netip.ParsePrefix(v); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(v)
		if err != nil {
			return nil, fmt.Errorf("%q: want an IP address (10.0.0.5) or a range (10.0.0.0/8)", v)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

func (p Proxies) trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, pre := range p {
		if pre.Contains(a) {
			return true
		}
	}
	return false
}

// peer is the address the connection comes from.
func peer(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// FromProxy reports whether r came through a trusted proxy.
func (p Proxies) FromProxy(r *http.Request) bool { return len(p) > 0 && p.trusts(peer(r)) }

// Client is the address of whoever sent r: the peer, or, through trusted
// proxies, the rightmost X-Forwarded-For address that is not one of them
// (the addresses left of it were written by the client itself).
func (p Proxies) Client(r *http.Request) netip.Addr {
	a := peer(r)
	if !p.FromProxy(r) {
		return a
	}
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		hops = append(hops, strings.Split(v, ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		h, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return a // the proxy that added this hop is the last one known
		}
		a = h.Unmap()
		if !p.trusts(a) {
			return a
		}
	}
	return a
}

// ClientKey is what the limiter counts a client by: its address, or its
// /64 for IPv6 (one host usually holds a whole /64).
func (p Proxies) ClientKey(r *http.Request) string {
	a := p.Client(r)
	if a.Is6() {
		pre, _ := a.Prefix(64)
		return pre.String()
	}
	return a.String()
}

// lastValue is the last of a header's comma-separated values: the one
// the nearest proxy wrote.
func lastValue(r *http.Request, name string) string {
	vs := r.Header.Values(name)
	if len(vs) == 0 {
		return ""
	}
	parts := strings.Split(vs[len(vs)-1], ",")
	return strings.TrimSpace(parts[len(parts)-1])
}

// Secure reports whether the client reached us over TLS: served over TLS
// here, or a trusted proxy says X-Forwarded-Proto: https.
func (p Proxies) Secure(r *http.Request) bool {
	if r.TLS != nil {
		return true
	}
	return p.FromProxy(r) && strings.EqualFold(lastValue(r, "X-Forwarded-Proto"), "https")
}

// Origin is the origin the client's browser sees this server at:
// scheme://host[:port], the port left out when it is the scheme's
// default, as browsers write the Origin header.
func (p Proxies) Origin(r *http.Request) string {
	host := r.Host
	if p.FromProxy(r) {
		if h := lastValue(r, "X-Forwarded-Host"); h != "" {
			host = h
		}
	}
	scheme := "http"
	if p.Secure(r) {
		scheme = "https"
	}
	return NormalizeOrigin(scheme + "://" + host)
}

// NormalizeOrigin lowercases an origin and drops its scheme's default
// port, so two spellings of one origin compare equal.
func NormalizeOrigin(o string) string {
	o = strings.ToLower(o)
	for scheme, port := range map[string]string{"http://": ":80", "https://": ":443"} {
		if strings.HasPrefix(o, scheme) {
			return strings.TrimSuffix(o, port)
		}
	}
	return o
}

// LoopbackHost reports whether a Host header names this machine
// (localhost or a loopback address). A server without credentials on a
// loopback address answers only those: a page of another site that
// points its own name at 127.0.0.1 (DNS rebinding) sends that name.
func LoopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
