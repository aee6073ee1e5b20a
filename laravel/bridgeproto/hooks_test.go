package bridgeproto

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

var fixedOptions = Options{LaravelVersion: "8.83", Now: time.Unix(1700000000, 0), UUID: "11111111-2222-4333-8444-555555555555"}

const failedPayload = `{"uuid":"u-1","displayName":"App\\Jobs\\X","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\X","command":"O:10:\"App\\Jobs\\X\":0:{}"}}`

// TestFailureHooksPayload: the payload dispatch() writes for a
// RunFailureHooks object on 8.x, its command holding every property in
// the class's declaration order.
func TestFailureHooksPayload(t *testing.T) {
	raw, err := FailureHooksPayload(Failure{
		Payload: []byte(failedPayload), Connection: "database", Queue: "go", JobID: "12", Attempts: 3,
		ExceptionClass: `Illuminate\Queue\MaxAttemptsExceededException`, ExceptionMessage: "Ünïcode \"quoted\"",
		BatchCallbacks: []string{"catch", "finally"},
	}, fixedOptions)
	if err != nil {
		t.Fatal(err)
	}
	command := `O:38:"Laraworker\Bridge\Jobs\RunFailureHooks":9:{` +
		`s:7:"payload";s:` + strconv.Itoa(len(failedPayload)) + `:"` + failedPayload + `";` +
		`s:14:"connectionName";s:8:"database";s:9:"queueName";s:2:"go";s:5:"jobId";i:12;s:8:"attempts";i:3;` +
		`s:14:"exceptionClass";s:45:"Illuminate\Queue\MaxAttemptsExceededException";` +
		`s:16:"exceptionMessage";s:18:"Ünïcode "quoted"";` +
		`s:14:"batchCallbacks";a:2:{i:0;s:5:"catch";i:1;s:7:"finally";}s:5:"tries";i:1;}`
	p, err := payload.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if p.Data.Command != command {
		t.Errorf("command\n got %s\nwant %s", p.Data.Command, command)
	}
	want := `{"uuid":"11111111-2222-4333-8444-555555555555","displayName":"Laraworker\\Bridge\\Jobs\\RunFailureHooks",` +
		`"job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":1,"maxExceptions":null,"failOnTimeout":false,` +
		`"backoff":null,"timeout":null,"retryUntil":null,"data":{"commandName":"Laraworker\\Bridge\\Jobs\\RunFailureHooks","command":`
	if !strings.HasPrefix(string(raw), want) {
		t.Errorf("payload\n got %s\nwant prefix %s", raw, want)
	}
}

// TestHookPayloadKeysPerVersion: the key set follows the app's version,
// as dispatch() writes it there.
func TestHookPayloadKeysPerVersion(t *testing.T) {
	for _, c := range []struct {
		version string
		has     []string
		hasNot  []string
	}{
		{"8.83", nil, []string{"createdAt", "delay", "deleteWhenMissingModels"}},
		{"12.10", nil, []string{"createdAt"}},
		{"12.11.0", []string{"createdAt", "delay"}, []string{"deleteWhenMissingModels"}},
		{"12.67", []string{"createdAt", "delay"}, []string{"deleteWhenMissingModels"}},
		{"13.26.1", []string{"createdAt", "delay", "deleteWhenMissingModels"}, nil},
	} {
		o := fixedOptions
		o.LaravelVersion = c.version
		raw, err := BatchCallbacksPayload(BatchCallbacks{BatchID: "b-1", Which: []string{"then"}}, o)
		if err != nil {
			t.Fatalf("%s: %v", c.version, err)
		}
		p, err := payload.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range c.has {
			if !p.Has(k) {
				t.Errorf("%s: no %s in %s", c.version, k, raw)
			}
		}
		for _, k := range c.hasNot {
			if p.Has(k) {
				t.Errorf("%s: %s in %s", c.version, k, raw)
			}
		}
		if atLeast(c.version, "12.51") != p.Data.Has("batchId") {
			t.Errorf("%s: data.batchId present %v", c.version, p.Data.Has("batchId"))
		}
	}
}

func TestBatchCallbacksPayload(t *testing.T) {
	raw, err := BatchCallbacksPayload(BatchCallbacks{BatchID: "9a1c", Which: []string{"catch", "finally"},
		ExceptionClass: "RuntimeException", ExceptionMessage: "boom"}, fixedOptions)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := payload.Parse(raw)
	want := `O:40:"Laraworker\Bridge\Jobs\RunBatchCallbacks":5:{s:7:"batchId";s:4:"9a1c";` +
		`s:9:"callbacks";a:2:{i:0;s:5:"catch";i:1;s:7:"finally";}s:14:"exceptionClass";s:16:"RuntimeException";` +
		`s:16:"exceptionMessage";s:4:"boom";s:5:"tries";i:1;}`
	if p.Data.Command != want {
		t.Errorf("command\n got %s\nwant %s", p.Data.Command, want)
	}
	raw, err = BatchCallbacksPayload(BatchCallbacks{BatchID: "9a1c", Which: []string{"then", "finally"}}, fixedOptions)
	if err != nil {
		t.Fatal(err)
	}
	p, _ = payload.Parse(raw)
	if !strings.Contains(p.Data.Command, `s:14:"exceptionClass";N;s:16:"exceptionMessage";N;`) {
		t.Errorf("after a success the exception is null: %s", p.Data.Command)
	}
}

// TestHookPayloadErrors: what cannot be a hook job is refused, naming the
// cause.
func TestHookPayloadErrors(t *testing.T) {
	ok := Failure{Payload: []byte(failedPayload), ExceptionClass: "X"}
	for _, c := range []struct {
		name string
		err  func() error
		want string
	}{
		{"payload not JSON", func() error {
			f := ok
			f.Payload = []byte("nope")
			_, err := FailureHooksPayload(f, fixedOptions)
			return err
		}, "failed job's payload"},
		{"no exception class", func() error {
			f := ok
			f.ExceptionClass = ""
			_, err := FailureHooksPayload(f, fixedOptions)
			return err
		}, "exception class"},
		{"then after a failure", func() error {
			f := ok
			f.BatchCallbacks = []string{"then"}
			_, err := FailureHooksPayload(f, fixedOptions)
			return err
		}, `no batch callback "then" after a failure`},
		{"twice", func() error {
			f := ok
			f.BatchCallbacks = []string{"catch", "catch"}
			_, err := FailureHooksPayload(f, fixedOptions)
			return err
		}, "named twice"},
		{"bad version", func() error {
			o := fixedOptions
			o.LaravelVersion = "7.30"
			_, err := FailureHooksPayload(ok, o)
			return err
		}, "Laravel 8 to 13"},
		{"no batch id", func() error {
			_, err := BatchCallbacksPayload(BatchCallbacks{Which: []string{"then"}}, fixedOptions)
			return err
		}, "batch id"},
		{"nothing to run", func() error { _, err := BatchCallbacksPayload(BatchCallbacks{BatchID: "b"}, fixedOptions); return err }, "no batch callbacks"},
		{"catch after a success", func() error {
			_, err := BatchCallbacksPayload(BatchCallbacks{BatchID: "b", Which: []string{"catch"}}, fixedOptions)
			return err
		}, `"catch" after a success`},
		{"message without class", func() error {
			_, err := BatchCallbacksPayload(BatchCallbacks{BatchID: "b", Which: []string{"then"}, ExceptionMessage: "m"}, fixedOptions)
			return err
		}, "without its class"},
	} {
		err := c.err()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error with %q", c.name, err, c.want)
		}
	}
}

// TestJobIDKinds: a database job's id is a PHP int, a Redis job's a string.
func TestJobIDKinds(t *testing.T) {
	for id, want := range map[string]string{"": "N;", "42": "i:42;", "007": `s:3:"007";`, "x5Hk": `s:4:"x5Hk";`} {
		got, _ := phpserialize.Serialize(jobID(id))
		if string(got) != want {
			t.Errorf("jobID(%q) = %s, want %s", id, got, want)
		}
	}
}
