package worker

import (
	"strings"
	"testing"

	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// plainByProperties is the test plainCommand replaced: the decoded
// command's Queueable properties and debounce owner read one by one. A
// command plainCommand calls plain must be plain by it.
func plainByProperties(t *testing.T, serialized string) (plain, decoded bool) {
	t.Helper()
	v, err := phpserialize.UnserializeString(serialized)
	if err != nil || v.Kind != phpserialize.KindObject {
		return false, false
	}
	cmd := &payload.Command{Object: v}
	q := cmd.Queueable()
	return !strings.Contains(serialized, modelIdentifierClass) && len(q.Middleware) == 0 && len(q.Chained) == 0 &&
		len(q.ChainCatchCallbacks) == 0 && q.BatchID == nil && debounceOwner(cmd) == "", true
}

func decoded(t testing.TB, serialized string) *payload.Command {
	t.Helper()
	v, err := phpserialize.UnserializeString(serialized)
	if err != nil {
		t.Fatal(err)
	}
	return &payload.Command{Object: v}
}

func serializedCommand(t testing.TB, props []phpserialize.Entry, shape payload.Shape) string {
	t.Helper()
	b, err := phpserialize.Serialize(payload.NewCommand(`App\Jobs\Plain`, props, payload.Dispatch{Shape: shape}))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPlainCommand(t *testing.T) {
	closure := phpserialize.Object(`Laravel\SerializableClosure\SerializableClosure`, phpserialize.Public("serializable", phpserialize.String("x")))
	middleware := phpserialize.List(phpserialize.Object(`Illuminate\Queue\Middleware\WithoutOverlapping`))
	model := phpserialize.Object(`Illuminate\Contracts\Database\ModelIdentifier`,
		phpserialize.Public("class", phpserialize.String(`App\Models\User`)), phpserialize.Public("id", phpserialize.Int(1)))
	for _, tc := range []struct {
		name  string
		props []phpserialize.Entry
		plain bool
	}{
		{"no property", nil, true},
		{"own properties", []phpserialize.Entry{phpserialize.Public("name", phpserialize.String("x")), phpserialize.Public("n", phpserialize.Int(3))}, true},
		{"middleware", []phpserialize.Entry{phpserialize.Public("middleware", middleware)}, false},
		{"protected middleware", []phpserialize.Entry{phpserialize.Protected("middleware", middleware)}, false},
		{"private middleware", []phpserialize.Entry{phpserialize.Private(`App\Jobs\Plain`, "middleware", middleware)}, false},
		{"chained", []phpserialize.Entry{phpserialize.Public("chained", phpserialize.List(phpserialize.String(`O:8:"App\Next":0:{}`)))}, false},
		{"chain catch callbacks", []phpserialize.Entry{phpserialize.Public("chainCatchCallbacks", phpserialize.List(closure))}, false},
		{"batch id", []phpserialize.Entry{phpserialize.Public("batchId", phpserialize.String("9f0c"))}, false},
		{"empty batch id", []phpserialize.Entry{phpserialize.Public("batchId", phpserialize.String(""))}, false},
		{"debounce owner", []phpserialize.Entry{phpserialize.Public("debounceOwner", phpserialize.String("tok"))}, false},
		{"model", []phpserialize.Entry{phpserialize.Public("user", model)}, false},
		// The command's own properties count, not text in a string or a
		// nested object's property.
		{"key inside a string", []phpserialize.Entry{phpserialize.Public("note", phpserialize.String(`s:10:"middleware";a:1:{i:0;N;}`))}, true},
		{"nested object's middleware", []phpserialize.Entry{phpserialize.Public("inner", phpserialize.Object(`App\Inner`, phpserialize.Public("middleware", middleware)))}, true},
		// A value PHP's defaults never are: the full path decides.
		{"empty string middleware", []phpserialize.Entry{phpserialize.Public("middleware", phpserialize.String(""))}, false},
	} {
		for _, shape := range []payload.Shape{payload.Shape8, payload.Shape94, payload.Shape13} {
			s := serializedCommand(t, tc.props, shape)
			got := plainCommand(decoded(t, s), s)
			if got != tc.plain {
				t.Errorf("%s (shape %d): plainCommand = %v, want %v\n%s", tc.name, shape, got, tc.plain, s)
			}
			if ref, ok := plainByProperties(t, s); !ok || got && !ref {
				t.Errorf("%s (shape %d): plainCommand = %v, the properties say %v (decoded %v)\n%s", tc.name, shape, got, ref, ok, s)
			}
		}
	}
}

// FuzzPlainCommand: a command plainCommand calls plain is plain by its
// decoded properties (the converse need not hold: the full path then
// decides as before).
func FuzzPlainCommand(f *testing.F) {
	f.Add(serializedCommand(f, nil, payload.Shape8))
	f.Add(serializedCommand(f, nil, payload.Shape13))
	f.Add(`O:14:"App\Jobs\Plain":1:{s:10:"middleware";R:1;}`)
	f.Add(`O:14:"App\Jobs\Plain":2:{s:1:"a";a:1:{i:0;i:1;}s:10:"middleware";r:2;}`)
	f.Add(`O:14:"App\Jobs\Plain":1:{s:13:"` + "\x00*\x00" + `middleware";a:1:{i:0;i:1;}}`)
	f.Add(`O:14:"App\Jobs\Plain":1:{s:7:"batchId";s:1:"x";}`)
	f.Fuzz(func(t *testing.T, s string) {
		ref, ok := plainByProperties(t, s)
		if !ok || !plainCommand(decoded(t, s), s) {
			return
		}
		if !ref {
			t.Fatalf("plainCommand says plain, the properties do not:\n%q", s)
		}
	})
}
