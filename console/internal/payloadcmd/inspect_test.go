package payloadcmd_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/console/internal/clitest"
	"github.com/laraworker/laraworker/console/internal/testapp"
)

func payloadFile(name string) string {
	return filepath.Join("..", "..", "..", "testdata", "payloads", name)
}

func TestInspectPayloadPrintsFieldsAndTheCommandTree(t *testing.T) {
	out, errOut, code := clitest.RunStdin(t, "", "inspect", "--env", emptyEnv(t), "--compact", payloadFile("models.json"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Kind    string         `json:"kind"`
		Payload map[string]any `json:"payload"`
		Command struct {
			Class      string                     `json:"class"`
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"command"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if doc.Kind != "payload" || doc.Payload["displayName"] != `App\Jobs\ModelsJob` || doc.Command.Class != `App\Jobs\ModelsJob` {
		t.Fatalf("document %+v", doc)
	}
	sawModel := false
	for _, value := range doc.Command.Properties {
		if strings.Contains(string(value), `"model":"App\\Models\\`) {
			sawModel = true
		}
	}
	if !sawModel {
		t.Fatalf("model identifiers are not rendered as models:\n%s", out)
	}
}

func TestInspectDecryptsWithTheKey(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "app.key")
	os.WriteFile(keyFile, []byte(testapp.FixtureKey+"\n"), 0o600)
	out, errOut, code := clitest.RunStdin(t, "", "inspect", "--env", emptyEnv(t), "--compact", "--key-file", keyFile, payloadFile("encrypted-aes-256-cbc.json"))
	if code != 0 || !strings.Contains(out, `"encrypted":true`) || !strings.Contains(out, `"class":"App\\Jobs\\EncryptedJob"`) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	_, errOut, code = clitest.RunStdin(t, "", "inspect", "--env", emptyEnv(t), payloadFile("encrypted-aes-256-cbc.json"))
	if code != 1 || !strings.Contains(errOut, "no APP_KEY") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("without a key: exit %d, %q", code, errOut)
	}
	wrong := "base64:" + strings.Repeat("A", 43) + "="
	wrongFile := filepath.Join(t.TempDir(), ".env")
	os.WriteFile(wrongFile, []byte("APP_NAME=x\nAPP_KEY="+wrong+"\n"), 0o600)
	_, errOut, code = clitest.RunStdin(t, "", "inspect", "--env", emptyEnv(t), "--key-file", wrongFile, payloadFile("encrypted-aes-256-cbc.json"))
	if code != 1 || !strings.Contains(errOut, "The MAC is invalid.") || strings.Contains(errOut, wrong) {
		t.Fatalf("wrong key: exit %d, %q", code, errOut)
	}
	_, errOut, code = clitest.RunStdin(t, "", "inspect", "--env", emptyEnv(t), "--key", testapp.FixtureKey, payloadFile("encrypted-aes-256-cbc.json"))
	if code != 2 || strings.Contains(errOut, testapp.FixtureKey) {
		t.Fatalf("--key (a secret in argv) must be refused as a usage error, without echoing it: exit %d, %q", code, errOut)
	}
}

func TestInspectBareSerializedValueFromStdin(t *testing.T) {
	out, errOut, code := clitest.RunStdin(t, `a:2:{i:0;E:11:"Suit:Hearts";s:1:"d";d:1.0E+25;}`, "inspect", "--env", emptyEnv(t), "--compact", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := `{"kind":"serialized","value":{"array":[{"key":0,"value":{"enum":"Suit","case":"Hearts"}},{"key":"d","value":1.0e+25}]}}`
	if strings.TrimSpace(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
}

func TestInspectBadInputIsOneLineWithTheOffset(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`a:2:{i:0;i:1;}`, "at byte"},
		{`{"uuid":"x","data":{"command":"O:8:\"stdClass\":1:{"}}`, "data.command"},
		{`{"uuid":`, "invalid JSON"},
		{``, "empty input"},
	} {
		out, errOut, code := clitest.RunStdin(t, c.in, "inspect", "--env", emptyEnv(t), "-")
		if code != 1 || out != "" || !strings.Contains(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q (want one line with %q)", c.in, code, out, errOut, c.want)
		}
	}
}

// emptyEnv is an empty .env: no key from a developer's ./.env, no app.
func emptyEnv(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestInspect1267ShowsKeysAsStored: a real 12.67 payload is shown with its
// own keys in their order (illuminate:log:context kept, no
// deleteWhenMissingModels invented), floats as PHP writes them (2.0 stays
// a float), and with --class-file the declared properties 9.4+ left out.
func TestInspect1267ShowsKeysAsStored(t *testing.T) {
	for _, c := range []struct {
		file, keys string
	}{
		{"scalars.json", `"uuid","displayName","job","maxTries","maxExceptions","failOnTimeout","backoff","timeout","retryUntil","data","createdAt","delay"`},
		{"unique.json", `"uuid","displayName","job","maxTries","maxExceptions","failOnTimeout","backoff","timeout","retryUntil","data","createdAt","illuminate:log:context","delay"`},
	} {
		out, errOut, code := clitest.RunStdin(t, "", "inspect", "--env", emptyEnv(t), "--compact",
			"--class-file", clitest.Write(t, "classes.json", classFile1267+"\n"), filepath.Join("..", "..", "..", "testdata", "laravel-12.67", "payloads", c.file))
		if c.file == "unique.json" {
			// UniqueJob is not in the class file: inspect says so.
			if code == 0 || !strings.Contains(errOut, `no entry for App\Jobs\UniqueJob`) {
				t.Errorf("unique.json without a class entry: exit %d %s", code, errOut)
			}
			out, errOut, code = clitest.RunStdin(t, "", "inspect", "--env", emptyEnv(t), "--compact",
				filepath.Join("..", "..", "..", "testdata", "laravel-12.67", "payloads", c.file))
		}
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.file, code, errOut)
		}
		var doc struct {
			Payload json.RawMessage `json:"payload"`
			Absent  []string        `json:"absent"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(doc.Payload))
		var keys []string
		dec.Token()
		for dec.More() {
			k, _ := dec.Token()
			keys = append(keys, `"`+k.(string)+`"`)
			var skip json.RawMessage
			dec.Decode(&skip)
		}
		if got := strings.Join(keys, ","); got != c.keys {
			t.Errorf("%s: keys %s\nwant %s", c.file, got, c.keys)
		}
		if c.file == "scalars.json" {
			if !strings.Contains(out, `"whole":2.0,`) || !strings.Contains(out, `"ratio":0.1,`) {
				t.Errorf("floats are not shown as PHP's: %s", out)
			}
			if strings.Join(doc.Absent, ",") != "untouchedDefault" {
				t.Errorf("absent %v, want [untouchedDefault]", doc.Absent)
			}
		}
		if c.file == "unique.json" && !strings.Contains(out, `"illuminate:log:context":{"data":[],"hidden":{"laravel_unique_job_cache_store":"s:8:\"database\";"`) {
			t.Errorf("the context is not shown as stored: %s", out)
		}
	}
}
