package handlers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/phpjson"
	"github.com/laraworker/laraworker/internal/redact"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/rs/zerolog"
)

const printableASCII = " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"

func randomSecret(r *rand.Rand) string {
	extra := []rune("éñ€✗日😀")
	var b strings.Builder
	for range 8 + r.IntN(33) {
		if r.IntN(6) == 0 {
			b.WriteRune(extra[r.IntN(len(extra))])
		} else {
			b.WriteByte(printableASCII[r.IntN(len(printableASCII))])
		}
	}
	return b.String()
}

// allStrings are every string of a decoded JSON value, keys too.
func allStrings(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		*out = append(*out, x)
	case []any:
		for _, e := range x {
			allStrings(e, out)
		}
	case map[string]any:
		for k, e := range x {
			*out = append(*out, k)
			allStrings(e, out)
		}
	}
}

// TestExecInputHoldsNoSecret: random secrets (printable ASCII and some
// non-ASCII) and an APP_KEY in a job's properties (as PHP's JSON writes
// them: "/" as "\/"), JSON inside a property, its queue and its class:
// the handler's stdin is still valid JSON, no string in it (decoded)
// holds a secret or the key's base64, and LARAWORKER_JOB_QUEUE and _CLASS
// hold none.
func TestExecInputHoldsNoSecret(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 38))
	dir := t.TempDir()
	stdin, env := filepath.Join(dir, "stdin"), filepath.Join(dir, "env")
	script := writeScript(t, "cat > "+stdin+"; env > "+env+"\n")
	for range 40 {
		pw, other := randomSecret(r), randomSecret(r)
		raw := make([]byte, 32)
		for i := range raw {
			raw[i] = byte(r.IntN(256))
		}
		key := "base64:" + base64.StdEncoding.EncodeToString(raw)
		red := redact.New(pw, other, key)
		h, err := BuiltinWith("exec:"+script, ExecOptions{Logger: zerolog.Nop(), Redact: red})
		if err != nil {
			t.Fatal(err)
		}
		inner, _ := phpjson.StringList([]string{pw, key}, 0)
		cmd := phpserialize.Object(`App\Jobs\Leak`, phpserialize.Public("password", phpserialize.String(pw)),
			phpserialize.Public("key", phpserialize.String(strings.TrimPrefix(key, "base64:"))),
			phpserialize.Public("json", phpserialize.String(inner)), phpserialize.Public("url", phpserialize.String(base64.RawURLEncoding.EncodeToString(raw))))
		raw2, err := payload.BuildObjectPayload(cmd, payload.BuildOptions{Shape: payload.ShapeOf(12, 0)})
		if err != nil {
			t.Fatal(err)
		}
		name, _ := phpjson.String(`App\Jobs\Leak `+other, phpjson.UnescapedUnicode)
		raw2 = []byte(strings.Replace(string(raw2), `"displayName":"App\\Jobs\\Leak"`, `"displayName":`+name, 1))
		p, err := payload.Parse(raw2)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Handle(context.Background(), NewJob(9, "q "+pw, 1, p, Env{})); err != nil {
			t.Fatal(err)
		}
		in, _ := os.ReadFile(stdin)
		var doc any
		if err := json.Unmarshal(in, &doc); err != nil {
			t.Fatalf("the handler's stdin is not JSON after redaction: %v\n%s", err, in)
		}
		var strs []string
		allStrings(doc, &strs)
		secrets := []string{pw, other, key, strings.TrimPrefix(key, "base64:"), base64.RawURLEncoding.EncodeToString(raw)}
		for _, s := range strs {
			for _, sec := range secrets {
				if strings.Contains(s, sec) {
					t.Fatalf("the handler's stdin holds a secret %q in %q", sec, s)
				}
			}
		}
		if !strings.Contains(string(in), `"password":"[redacted]"`) {
			t.Fatalf("the readable command does not show the password redacted: %s", in)
		}
		envs, _ := os.ReadFile(env)
		for _, sec := range []string{pw, other} {
			if strings.Contains(string(envs), sec) {
				t.Fatalf("the handler's environment holds a secret: %s", envs)
			}
		}
		if !strings.Contains(string(envs), "LARAWORKER_JOB_QUEUE=q [redacted]") || !strings.Contains(string(envs), `LARAWORKER_JOB_CLASS=App\Jobs\Leak [redacted]`) {
			t.Fatalf("queue and class: %s", envs)
		}
	}
}
