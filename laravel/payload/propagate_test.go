package payload

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// unique1267 is the ShouldBeUnique job a real Laravel 12.67 app wrote:
// its illuminate:log:context holds hidden data only ("data":[]).
func unique1267(t *testing.T) []byte {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/laravel-12.67/payloads/unique.json")
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// rebuild builds p's command again as a job dispatched while p runs,
// with what p carries on, at p's createdAt and with p's uuid: for a
// payload PHP wrote, the bytes PHP would write.
func rebuild(t *testing.T, raw []byte, shape Shape) []byte {
	t.Helper()
	p, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := DecodeCommand(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(*p.CreatedAt, 0)
	carried, err := p.Carry(now)
	if err != nil {
		t.Fatal(err)
	}
	if carried.Sentry != nil {
		// The publish time is the dispatch's own; keep the one written.
		s, _ := p.SentryTrace()
		carried.Sentry.PublishTime = s.PublishTime
	}
	got, err := BuildObjectPayload(cmd.Object, BuildOptions{Shape: shape, UUID: p.UUID, Now: now, Carried: carried})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestCarriedContextIsPHPs: a job that carries Laravel's Context on
// writes it as PHP's dehydrate() and json_encode do, in the place PHP's
// hook puts it (after createdAt, before delay): rebuilding the real
// 12.67 payload gives its bytes.
func TestCarriedContextIsPHPs(t *testing.T) {
	raw := unique1267(t)
	if got := rebuild(t, raw, Shape1251); !bytes.Equal(got, raw) {
		t.Fatalf("carried context differs from PHP's\n got: %s\nwant: %s", got, raw)
	}
}

// TestCarriedContextAfterCJSON: Redis's pop script re-encodes the
// payload with cjson ("\/", an empty side as {}, keys in its own order);
// what is carried on is what PHP's worker writes after json_decode of
// that: data and hidden in dehydrate's order, PHP's escaping, [] for an
// empty side.
func TestCarriedContextAfterCJSON(t *testing.T) {
	raw := unique1267(t)
	php := `"illuminate:log:context":{"data":[],"hidden":{"laravel_unique_job_cache_store":"s:8:\"database\";","laravel_unique_job_key":"s:39:\"laravel_unique_job:App\\Jobs\\UniqueJob:1\";"}}`
	if !bytes.Contains(raw, []byte(php)) {
		t.Fatal("fixture changed")
	}
	cjson := `"illuminate:log:context":{"hidden":{"laravel_unique_job_cache_store":"s:8:\"database\";","laravel_unique_job_key":"s:39:\"laravel_unique_job:App\\Jobs\\UniqueJob:1\";"},"data":{}}`
	rewritten := bytes.Replace(raw, []byte(php), []byte(cjson), 1)
	if got := rebuild(t, rewritten, Shape1251); !bytes.Equal(got, raw) {
		t.Fatalf("carried context differs from PHP's\n got: %s\nwant: %s", got, raw)
	}
}

// withHookKeys is the 12.67 unique job as an app with Context, Sentry's
// Laravel SDK and OpenTelemetry's instrumentation writes it: Sentry's
// hook after the framework's, OpenTelemetry's post hook after both, then
// createPayload's delay.
func withHookKeys(raw []byte, ctx string) []byte {
	hooks := `"illuminate:log:context":` + ctx +
		`,"sentry_baggage_data":"sentry-trace_id=4bf92f3577b34da6a3ce929d0e0e4736,sentry-sample_rate=1,sentry-public_key=abc\/def"` +
		`,"sentry_trace_parent_data":"4bf92f3577b34da6a3ce929d0e0e4736-a2fb4a1d1a96d312-1"` +
		`,"sentry_publish_time":1796032508.123456` +
		`,"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"` +
		`,"tracestate":"rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"`
	at := bytes.Index(raw, []byte(`"illuminate:log:context"`))
	end := bytes.Index(raw, []byte(`,"delay":`))
	out := append([]byte(nil), raw[:at]...)
	out = append(out, hooks...)
	return append(out, raw[end:]...)
}

const visibleContext = `{"data":{"user_id":"i:42;","request_id":"s:36:\"9a1c7e52-54c3-4b7e-9d29-0f1f5d0cfa37\";","locale":"s:5:\"fr_FR\";"},` +
	`"hidden":{"api_token":"s:6:\"s3cr3t\";"}}`

// TestCarriedKeysInPHPsOrder: Context, Sentry's three keys and W3C trace
// context are carried on byte for byte where PHP's hooks write them.
func TestCarriedKeysInPHPsOrder(t *testing.T) {
	raw := withHookKeys(unique1267(t), visibleContext)
	if got := rebuild(t, raw, Shape1251); !bytes.Equal(got, raw) {
		t.Fatalf("carried keys differ from PHP's\n got: %s\nwant: %s", got, raw)
	}
}

// TestCarriedKeysBefore1211: on 11.x (no createdAt, no delay) the hook
// keys come right after data.
func TestCarriedKeysBefore1211(t *testing.T) {
	p, err := Parse(withHookKeys(unique1267(t), visibleContext))
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := DecodeCommand(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.Carry(time.Unix(1796032600, 250000000))
	if err != nil {
		t.Fatal(err)
	}
	got, err := BuildObjectPayload(cmd.Object, BuildOptions{Shape: Shape94, UUID: p.UUID, Carried: c})
	if err != nil {
		t.Fatal(err)
	}
	want := `"data":{"commandName":"App\\Jobs\\UniqueJob","command":"O:18:\"App\\Jobs\\UniqueJob\":1:{s:9:\"productId\";i:1;}"},"illuminate:log:context":` +
		visibleContext + `,"sentry_baggage_data":`
	if !bytes.Contains(got, []byte(want)) {
		t.Fatalf("hook keys not right after data:\n%s", got)
	}
	if !bytes.HasSuffix(got, []byte(`"sentry_publish_time":1796032600.25,"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"}`)) {
		t.Fatalf("publish time or trace context wrong:\n%s", got)
	}
}

// TestEmptyContextIsNotCarried: dehydrate() returns null when both sides
// are empty, and the hook then adds no key.
func TestEmptyContextIsNotCarried(t *testing.T) {
	p, err := Parse(withHookKeys(unique1267(t), `{"data":[],"hidden":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.Carry(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if c.Context != nil {
		t.Fatalf("an empty context is carried: %+v", c.Context)
	}
}

func TestLogContextReadsBothSides(t *testing.T) {
	p, err := Parse(withHookKeys(unique1267(t), visibleContext))
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.LogContext()
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, v := range c.Data {
		keys = append(keys, v.Key)
	}
	if strings.Join(keys, ",") != "user_id,request_id,locale" {
		t.Errorf("data keys %v, want PHP's order", keys)
	}
	if v := c.Get("user_id"); v == nil || v.Kind != phpserialize.KindInt || v.Int != 42 {
		t.Errorf("user_id = %+v, want int 42", v)
	}
	if v := c.GetHidden("api_token"); v == nil || string(v.Str) != "s3cr3t" {
		t.Errorf("hidden api_token = %+v", v)
	}
	if c.Get("api_token") != nil || c.GetHidden("user_id") != nil {
		t.Error("data and hidden are mixed up")
	}
}

// TestLogContextErrorsNameTheEntry: a value PHP's hydrate() could not
// unserialize either is an error naming it.
func TestLogContextErrorsNameTheEntry(t *testing.T) {
	for _, tc := range []struct{ ctx, want string }{
		{`{"data":{"broken":"s:9:\"short\";"},"hidden":[]}`, `illuminate:log:context.data.broken`},
		{`{"data":{"n":5},"hidden":[]}`, `illuminate:log:context.data.n`},
		{`"nope"`, `want an object with data and hidden`},
	} {
		p, err := Parse(withHookKeys(unique1267(t), tc.ctx))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.LogContext(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error naming %s", tc.ctx, err, tc.want)
		}
	}
}

func TestSentryTrace(t *testing.T) {
	p, err := Parse(withHookKeys(unique1267(t), visibleContext))
	if err != nil {
		t.Fatal(err)
	}
	s, ok := p.SentryTrace()
	if !ok || s.Baggage != "sentry-trace_id=4bf92f3577b34da6a3ce929d0e0e4736,sentry-sample_rate=1,sentry-public_key=abc/def" {
		t.Fatalf("SentryTrace = %+v, %v", s, ok)
	}
	if want := time.UnixMicro(1796032508123456); !s.PublishTime.Equal(want) {
		t.Errorf("publish time %v, want %v", s.PublishTime, want)
	}
	trace, span, sampled, ok := s.Parent()
	if !ok || trace != "4bf92f3577b34da6a3ce929d0e0e4736" || span != "a2fb4a1d1a96d312" || sampled == nil || !*sampled {
		t.Errorf("Parent() = %s %s %v %v", trace, span, sampled, ok)
	}
	for tp, ok := range map[string]bool{
		"4bf92f3577b34da6a3ce929d0e0e4736-a2fb4a1d1a96d312":    true,
		"4bf92f3577b34da6a3ce929d0e0e4736-a2fb4a1d1a96d312-0":  true,
		"4bf92f3577b34da6a3ce929d0e0e4736-a2fb4a1d1a96d312-2":  false,
		"00-4bf92f3577b34da6a3ce929d0e0e4736-a2fb4a1d1a96d312": false,
		"": false,
	} {
		if _, _, _, got := (SentryTrace{TraceParent: tp}).Parent(); got != ok {
			t.Errorf("Parent(%q) ok = %v, want %v", tp, got, ok)
		}
	}
	plain, err := Parse(unique1267(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := plain.SentryTrace(); ok {
		t.Error("a payload without Sentry's keys has a Sentry trace")
	}
	if tp, ts := plain.TraceContext(); tp != "" || ts != "" {
		t.Errorf("TraceContext() = %q %q on a payload without one", tp, ts)
	}
}

// TestContextJSON: the visible data renders as the logs carry it; the
// hidden data apart.
func TestContextJSON(t *testing.T) {
	p, err := Parse(withHookKeys(unique1267(t), visibleContext))
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.LogContext()
	if err != nil {
		t.Fatal(err)
	}
	data, err := c.DataJSON()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"user_id":42,"request_id":"9a1c7e52-54c3-4b7e-9d29-0f1f5d0cfa37","locale":"fr_FR"}`; string(data) != want {
		t.Errorf("DataJSON = %s, want %s", data, want)
	}
	hidden, err := c.HiddenJSON()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"api_token":"s3cr3t"}`; string(hidden) != want {
		t.Errorf("HiddenJSON = %s, want %s", hidden, want)
	}
	empty := &LogContext{}
	if b, err := empty.DataJSON(); b != nil || err != nil {
		t.Errorf("empty DataJSON = %s, %v", b, err)
	}
}
