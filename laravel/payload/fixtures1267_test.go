package payload

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// payloads1267 are the jobs.payload values a real Laravel 12.67 app wrote
// (testdata/laravel-12.67/payloads), by file name.
func payloads1267(t *testing.T) map[string][]byte {
	t.Helper()
	files, err := filepath.Glob("../../testdata/laravel-12.67/payloads/*.json")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range files {
		base := filepath.Base(f)
		if strings.HasPrefix(base, "_") || strings.HasSuffix(base, ".all.json") || strings.HasSuffix(base, "_row.json") {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[base] = raw
	}
	if len(out) < 15 {
		t.Fatalf("only %d 12.67 payloads found", len(out))
	}
	return out
}

// TestReencodeLikeRetryOn1267: queue:retry's re-encoding of every 12.67
// payload, compared with PHP's own json_encode(json_decode($raw, true)).
func TestReencodeLikeRetryOn1267(t *testing.T) {
	if _, err := exec.LookPath("php"); err != nil {
		t.Skip("php is needed to re-encode as queue:retry does")
	}
	for name, raw := range payloads1267(t) {
		cmd := exec.Command("php", "-r", `echo json_encode(json_decode(stream_get_contents(STDIN), true));`)
		cmd.Stdin = bytes.NewReader(raw)
		want, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: php: %v", name, err)
		}
		got, err := ReencodeLikeRetry(raw, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: retry re-encoding differs from PHP\n got %s\nwant %s", name, got, want)
		}
	}
}

// TestParse1267KeepsEveryKey: Parse reads each 12.67 payload's keys as
// they are: known ones into fields, the rest (illuminate:log:context) in
// Extra, unchanged; Raw is the input.
func TestParse1267KeepsEveryKey(t *testing.T) {
	for name, raw := range payloads1267(t) {
		p, err := Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(p.Raw, raw) {
			t.Errorf("%s: Raw differs", name)
		}
		for _, k := range []string{"uuid", "displayName", "job", "maxTries", "maxExceptions", "failOnTimeout", "backoff", "timeout", "retryUntil", "data", "createdAt", "delay"} {
			if !p.Has(k) {
				t.Errorf("%s: key %s not seen", name, k)
			}
		}
		if p.Has("deleteWhenMissingModels") {
			t.Errorf("%s: a 12.x payload has no deleteWhenMissingModels", name)
		}
		if ctx, ok := p.Extra[ContextKey]; ok && !bytes.Contains(raw, ctx) {
			t.Errorf("%s: the context is not kept byte for byte", name)
		}
	}
}
