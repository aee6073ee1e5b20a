package sqsproto

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// skeleton is laravel/laravel's config/queue.php sqs connection, as
// config() returns it with the env() values given.
func skeleton(over map[string]any) map[string]any {
	c := map[string]any{
		"driver": "sqs", "key": "AKIAEXAMPLE", "secret": "s3cret", "prefix": "https://sqs.us-east-1.amazonaws.com/your-account-id",
		"queue": "default", "suffix": nil, "region": "us-east-1", "after_commit": false,
	}
	for k, v := range over {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return c
}

// TestQueueURLIsSqsQueueGetQueue: prefix + name + suffix, the suffix once,
// before ".fifo"; a URL as it is; the default queue for "".
func TestQueueURLIsSqsQueueGetQueue(t *testing.T) {
	c := Config{Queue: "default", Prefix: "https://sqs.eu-west-1.amazonaws.com/123/", Suffix: "-prod"}
	cases := map[string]string{
		"":                 "https://sqs.eu-west-1.amazonaws.com/123/default-prod",
		"emails":           "https://sqs.eu-west-1.amazonaws.com/123/emails-prod",
		"emails-prod":      "https://sqs.eu-west-1.amazonaws.com/123/emails-prod",
		"orders.fifo":      "https://sqs.eu-west-1.amazonaws.com/123/orders-prod.fifo",
		"orders-prod.fifo": "https://sqs.eu-west-1.amazonaws.com/123/orders-prod.fifo",
		"https://sqs.us-east-2.amazonaws.com/9/other": "https://sqs.us-east-2.amazonaws.com/9/other",
	}
	for name, want := range cases {
		if got := c.QueueURL(name); got != want {
			t.Errorf("QueueURL(%q) = %q, want %q", name, got, want)
		}
	}
	if got := (Config{Queue: "q", Prefix: "http://x/1"}).QueueURL(""); got != "http://x/1/q" {
		t.Errorf("no suffix: %q", got)
	}
}

// TestFromLaravelReadsTheConnection: the skeleton's array gives static
// credentials, SqsConnector's timeouts and the endpoint; "retries",
// "http", "profile", "overflow" are read; unknown SDK options are named.
func TestFromLaravelReadsTheConnection(t *testing.T) {
	c, err := FromLaravel("sqs", skeleton(map[string]any{
		"endpoint": "http://127.0.0.1:4566", "retries": float64(5), "profile": "work",
		"http":     map[string]any{"timeout": float64(30), "connect_timeout": float64(2.5)},
		"overflow": map[string]any{"enabled": true, "store": "redis", "delete_after_processing": false},
		"debug":    true,
	}), LaravelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Credentials == nil || c.Credentials.Key != "AKIAEXAMPLE" || c.Credentials.Secret.Reveal() != "s3cret" {
		t.Errorf("credentials %v", c.Credentials)
	}
	if c.Region != "us-east-1" || c.Endpoint != "http://127.0.0.1:4566" || c.Profile != "work" || c.MaxAttempts != 6 {
		t.Errorf("config %+v", c)
	}
	if c.HTTPTimeout != 30*time.Second || c.ConnectTimeout != 2500*time.Millisecond {
		t.Errorf("timeouts %s %s", c.HTTPTimeout, c.ConnectTimeout)
	}
	if !c.Overflow.Enabled || c.Overflow.Store != "redis" || c.Overflow.DeleteAfterProcessing {
		t.Errorf("overflow %+v", c.Overflow)
	}
	if fmt.Sprint(c.Ignored) != "[debug]" {
		t.Errorf("ignored %v", c.Ignored)
	}
	for _, printed := range []string{fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), fmt.Sprint(c.Credentials)} {
		if strings.Contains(printed, "s3cret") {
			t.Fatalf("the secret printed: %s", printed)
		}
	}
	d, err := FromLaravel("sqs", skeleton(map[string]any{"key": nil, "secret": nil}), LaravelOptions{})
	if err != nil || d.Credentials != nil || d.Provider != "" || d.HTTPTimeout != DefaultHTTPTimeout {
		t.Errorf("without key and secret: %+v %v (want the default chain)", d, err)
	}
}

// TestFromLaravelCredentialProviders: "credentials" naming ecs or
// instance wins over key and secret (13.6+); false is anonymous; another
// name is Laravel's "Invalid credential provider" error.
func TestFromLaravelCredentialProviders(t *testing.T) {
	for v, want := range map[any]string{"ecs": "ecs", "instance": "instance", false: "anonymous"} {
		c, err := FromLaravel("sqs", skeleton(map[string]any{"credentials": v}), LaravelOptions{})
		if err != nil || c.Provider != want || c.Credentials != nil {
			t.Errorf("credentials %v: provider %q credentials %v err %v", v, c.Provider, c.Credentials, err)
		}
	}
	c, err := FromLaravel("sqs", skeleton(map[string]any{"credentials": map[string]any{"provider": "ecs", "timeout": float64(2)}}), LaravelOptions{})
	if err != nil || c.Provider != "ecs" {
		t.Errorf("provider array: %+v %v", c, err)
	}
	_, err = FromLaravel("sqs", skeleton(map[string]any{"credentials": "vault"}), LaravelOptions{})
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "Invalid credential provider [vault]") {
		t.Errorf("unknown provider: %v", err)
	}
}

// TestFromLaravelRefusesWhatItCannotServe: no queue, a bad endpoint, a
// bad retries value, another driver: a ConfigError naming the cause.
func TestFromLaravelRefusesWhatItCannotServe(t *testing.T) {
	cases := map[string]map[string]any{
		`no "queue"`:     skeleton(map[string]any{"queue": ""}),
		`"endpoint"`:     skeleton(map[string]any{"endpoint": "localhost:4566"}),
		`"retries"`:      skeleton(map[string]any{"retries": "many"}),
		`not sqs`:        skeleton(map[string]any{"driver": "redis"}),
		`"http.timeout"`: skeleton(map[string]any{"http": map[string]any{"timeout": "soon"}}),
	}
	for want, conn := range cases {
		_, err := FromLaravel("sqs", conn, LaravelOptions{})
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v", want, err)
		}
	}
}

// TestPointerBodies: only an object whose "@pointer" is a non-empty
// string is a pointer.
func TestPointerBodies(t *testing.T) {
	if k, ok := Pointer([]byte(`{"@pointer":"laravel:sqs-payloads:6f1e"}`)); !ok || k != "laravel:sqs-payloads:6f1e" {
		t.Errorf("pointer: %q %v", k, ok)
	}
	for _, body := range []string{`{"uuid":"x","displayName":"@pointer"}`, `{"@pointer":1}`, `[]`, `{"@pointer":""}`, `not json`} {
		if _, ok := Pointer([]byte(body)); ok {
			t.Errorf("%s read as a pointer", body)
		}
	}
}

// TestVaporAttempts: "attempts" read and written in place, added where
// missing, the other bytes kept.
func TestVaporAttempts(t *testing.T) {
	raw := []byte(`{"uuid":"u","attempts":0,"data":{"attempts":9}}`)
	if n, ok := VaporAttempts(raw); !ok || n != 0 {
		t.Errorf("attempts %d %v", n, ok)
	}
	out, err := SetAttempts(raw, 2)
	if err != nil || string(out) != `{"uuid":"u","attempts":2,"data":{"attempts":9}}` {
		t.Errorf("SetAttempts: %s %v", out, err)
	}
	out, err = SetAttempts([]byte(`{"uuid":"u"}`), 1)
	if err != nil || string(out) != `{"uuid":"u","attempts":1}` {
		t.Errorf("SetAttempts without the key: %s %v", out, err)
	}
	if _, ok := VaporAttempts([]byte(`{"uuid":"u","data":{"attempts":3}}`)); ok {
		t.Error("a nested attempts read as the payload's")
	}
	if _, err := SetAttempts([]byte(`[1]`), 1); !errors.Is(err, ErrBadPayload) {
		t.Errorf("not an object: %v", err)
	}
}
