package otelsetup

import (
	"context"
	"os"
	"strings"
	"testing"
)

// clearOTel empties every OTEL_* variable for the test.
func clearOTel(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "OTEL_") {
			t.Setenv(name, "")
		}
	}
}

func setenv(t *testing.T, vars map[string]string) {
	t.Helper()
	clearOTel(t)
	for k, v := range vars {
		t.Setenv(k, v)
	}
}

// TestOffUnlessAskedFor: without an endpoint or OTEL_TRACES_EXPORTER=otlp
// nothing is set up; OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER=none win
// over an endpoint.
func TestOffUnlessAskedFor(t *testing.T) {
	for _, vars := range []map[string]string{
		{},
		{"OTEL_SERVICE_NAME": "shop-worker"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"},
	} {
		setenv(t, vars)
		s, err := FromEnv(context.Background(), nil)
		if err != nil || s.Enabled() || s.Provider != nil {
			t.Errorf("%v: enabled %v, provider %v, err %v; want off", vars, s.Enabled(), s.Provider, err)
		}
	}
	for _, vars := range []map[string]string{
		{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
		{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"},
		{"OTEL_TRACES_EXPORTER": "otlp"},
		{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
	} {
		setenv(t, vars)
		s, err := FromEnv(context.Background(), nil)
		if err != nil || !s.Enabled() {
			t.Errorf("%v: enabled %v, err %v; want on", vars, s.Enabled(), err)
			continue
		}
		_ = s.Shutdown(context.Background())
	}
}

// TestBadValuesAreStartErrors: what the SDK would drop with a note on
// stderr stops the command at start, naming the variable, and never
// prints a header's value.
func TestBadValuesAreStartErrors(t *testing.T) {
	const key = "SeCr3t-api-key-42"
	on := "http://127.0.0.1:4318"
	for _, tc := range []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"OTEL_SDK_DISABLED": "yes"}, "OTEL_SDK_DISABLED"},
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, "OTEL_TRACES_EXPORTER"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": on, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": on, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "udp"}, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": on, "OTEL_EXPORTER_OTLP_HEADERS": "api-key=" + key + ",broken"}, "OTEL_EXPORTER_OTLP_HEADERS: entry 2"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": on, "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "api-key=" + key + "%zz"}, `the value of "api-key"`},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": on, "OTEL_TRACES_SAMPLER": "jaeger_remote"}, "OTEL_TRACES_SAMPLER"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": on, "OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "1.5"}, "OTEL_TRACES_SAMPLER_ARG"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": on, "OTEL_PROPAGATORS": "tracecontext,b3"}, `OTEL_PROPAGATORS: "b3"`},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": on, "OTEL_RESOURCE_ATTRIBUTES": "team"}, "OTEL_RESOURCE_ATTRIBUTES"},
	} {
		setenv(t, tc.vars)
		s, err := FromEnv(context.Background(), nil)
		if err == nil {
			_ = s.Shutdown(context.Background())
			t.Errorf("%v: no error", tc.vars)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want it to name %s", tc.vars, err, tc.want)
		}
		if strings.Contains(err.Error(), key) {
			t.Errorf("%v: the error prints a header's value: %v", tc.vars, err)
		}
	}
}

// TestEndpointAsLogged: the endpoint the start line shows has no
// credentials or query.
func TestEndpointAsLogged(t *testing.T) {
	setenv(t, map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://user:pw-123@collector.example:4318/v1/traces?token=abc"})
	s, err := FromEnv(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Shutdown(context.Background())
	if s.Endpoint != "https://collector.example:4318/v1/traces" || s.Protocol != ProtocolHTTP {
		t.Errorf("endpoint %q protocol %q", s.Endpoint, s.Protocol)
	}
}
