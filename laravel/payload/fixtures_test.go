package payload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// The fixtures in testdata/payloads were written by real Laravel 8.83
// (testdata/laravel/gen-fixtures.sh) or by hand from the spec for 7.x and
// 9-13 key sets; manifest.json says what PHP read back from each.

const payloadsDir = "../../testdata/payloads"

type fixtureManifest struct {
	AppKey   string            `json:"appKey"`
	Keys     map[string]string `json:"keys"`
	Fixtures []fixtureEntry    `json:"fixtures"`
}

type fixtureEntry struct {
	File        string          `json:"file"`
	Kind        string          `json:"kind"`
	Source      string          `json:"source"`
	DisplayName string          `json:"displayName"`
	Job         string          `json:"job"`
	CommandName string          `json:"commandName"`
	Keys        []string        `json:"keys"`
	Payload     json.RawMessage `json:"payload"`
	Data        json.RawMessage `json:"data"`
	Properties  json.RawMessage `json:"properties"`
	Visibility  map[string]string
	Encryption  *struct {
		Cipher string `json:"cipher"`
		Key    string `json:"key"`
	} `json:"encryption"`
	CommandFile string `json:"commandFile"`
	NextFile    string `json:"nextFile"`
	Expect      map[string]json.RawMessage
}

func loadManifest(t testing.TB) fixtureManifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(payloadsDir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m fixtureManifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Fixtures) < 30 {
		t.Fatalf("manifest lists only %d fixtures", len(m.Fixtures))
	}
	return m
}

func readPayloadFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(payloadsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// payloadFixtures are the entries that are jobs.payload documents.
func payloadFixtures(m fixtureManifest) []fixtureEntry {
	var out []fixtureEntry
	for _, f := range m.Fixtures {
		if len(f.Keys) > 0 {
			out = append(out, f)
		}
	}
	return out
}

func encrypterForFixture(t *testing.T, f fixtureEntry, m fixtureManifest) *Encrypter {
	t.Helper()
	key, cipher := m.AppKey, "AES-256-CBC"
	if f.Encryption != nil {
		key, cipher = f.Encryption.Key, f.Encryption.Cipher
	}
	raw, err := ParseKey(key)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := NewEncrypter(raw, cipher)
	if err != nil {
		t.Fatal(err)
	}
	return enc
}

func TestParseEveryFixture(t *testing.T) {
	m := loadManifest(t)
	for _, f := range payloadFixtures(m) {
		t.Run(f.File, func(t *testing.T) {
			raw := readPayloadFixture(t, f.File)
			p, err := Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(p.Raw, raw) {
				t.Fatal("Raw does not hold the exact bytes read")
			}
			for _, k := range f.Keys {
				if !p.Has(k) {
					t.Errorf("key %q not seen", k)
				}
			}
			if p.DisplayName != f.DisplayName || p.Job != f.Job {
				t.Errorf("displayName/job = %q/%q, want %q/%q", p.DisplayName, p.Job, f.DisplayName, f.Job)
			}
			if f.CommandName != "" && p.Data.CommandName != f.CommandName {
				t.Errorf("commandName = %q, want %q", p.Data.CommandName, f.CommandName)
			}
			if !looksLikeUUID(p.UUID) {
				t.Errorf("uuid %q is not a v4 uuid", p.UUID)
			}
			checkPayloadValues(t, p, f.Payload)
		})
	}
}

func looksLikeUUID(s string) bool {
	return len(s) == 36 && s[8] == '-' && s[13] == '-' && s[18] == '-' && s[23] == '-'
}

// checkPayloadValues compares the manifest's expected top-level values with
// what Parse read.
func checkPayloadValues(t *testing.T, p *Payload, want json.RawMessage) {
	t.Helper()
	if len(want) == 0 {
		return
	}
	var exp map[string]any
	if err := json.Unmarshal(want, &exp); err != nil {
		t.Fatal(err)
	}
	got := map[string]any{
		"maxTries": intOrNil(p.MaxTries), "maxExceptions": intOrNil(p.MaxExceptions),
		"failOnTimeout": p.FailOnTimeout, "timeout": intOrNil(p.Timeout), "retryUntil": intOrNil(p.RetryUntil),
		"deleteWhenMissingModels": p.DeleteWhenMissingModels, "createdAt": intOrNil(p.CreatedAt), "delay": intOrNil(p.Delay),
		"timeoutAt": intOrNil(p.TimeoutAt),
	}
	if p.Backoff != nil {
		got["backoff"] = *p.Backoff
	} else {
		got["backoff"] = nil
	}
	for k, v := range exp {
		g, known := got[k]
		if !known {
			continue
		}
		if fmt.Sprint(g) != fmt.Sprint(v) {
			t.Errorf("payload %s = %v, want %v", k, g, v)
		}
	}
}

func intOrNil(p *int64) any {
	if p == nil {
		return nil
	}
	return float64(*p) // as encoding/json decodes numbers into any
}

func TestDecodeCommandOfEveryObjectFixture(t *testing.T) {
	m := loadManifest(t)
	for _, f := range payloadFixtures(m) {
		if f.CommandName == "" {
			continue
		}
		t.Run(f.File, func(t *testing.T) {
			p, err := Parse(readPayloadFixture(t, f.File))
			if err != nil {
				t.Fatal(err)
			}
			cmd, err := DecodeCommand(p, encrypterForFixture(t, f, m))
			if err != nil {
				t.Fatal(err)
			}
			if cmd.Class() != f.CommandName {
				t.Errorf("class %q, want %q", cmd.Class(), f.CommandName)
			}
			if cmd.Encrypted != (f.Encryption != nil) {
				t.Errorf("Encrypted = %v", cmd.Encrypted)
			}
			again, err := cmd.Serialize()
			if err != nil {
				t.Fatal(err)
			}
			if !cmd.Encrypted && string(again) != p.Data.Command {
				t.Errorf("command does not re-encode byte for byte")
			}
			checkProperties(t, cmd.Object, f.Properties)
			for name, vis := range f.Visibility {
				checkVisibility(t, cmd.Object, name, vis)
			}
		})
	}
}

func TestEncryptedFixturesDecryptToTheCommandPHPEncrypted(t *testing.T) {
	m := loadManifest(t)
	n := 0
	for _, f := range payloadFixtures(m) {
		if f.Encryption == nil {
			continue
		}
		n++
		p, err := Parse(readPayloadFixture(t, f.File))
		if err != nil {
			t.Fatal(err)
		}
		cmd, err := DecodeCommand(p, encrypterForFixture(t, f, m))
		if err != nil {
			t.Fatalf("%s: %v", f.File, err)
		}
		plain, _ := cmd.Serialize()
		want := readPayloadFixture(t, strings.TrimSuffix(f.File, ".json")+".command.txt")
		if !bytes.Equal(plain, want) {
			t.Errorf("%s: decrypted command differs from PHP's", f.File)
		}
		if _, err := DecodeCommand(p, nil); err != ErrEncrypted {
			t.Errorf("%s without a key: got %v, want ErrEncrypted", f.File, err)
		}
		wrong, _ := NewEncrypter(bytes.Repeat([]byte{7}, len(mustKey(t, f.Encryption.Key))), f.Encryption.Cipher)
		if _, err := DecodeCommand(p, wrong); err == nil || !strings.Contains(err.Error(), "invalid") && !strings.Contains(err.Error(), "Could not decrypt") {
			t.Errorf("%s with a wrong key: got %v", f.File, err)
		}
	}
	if n != 4 {
		t.Fatalf("want the 4 cipher fixtures, got %d", n)
	}
}

func mustKey(t *testing.T, s string) []byte {
	k, err := ParseKey(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// checkProperties compares a command's properties with the manifest's
// JSON rendering of what PHP unserialized.
func checkProperties(t *testing.T, obj *phpserialize.Value, want json.RawMessage) {
	t.Helper()
	if len(want) == 0 {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(want))
	dec.UseNumber()
	var exp map[string]any
	if err := dec.Decode(&exp); err != nil {
		t.Fatal(err)
	}
	for name, v := range exp {
		prop, err := obj.Prop(name)
		if err != nil {
			t.Errorf("property %s: %v", name, err)
			continue
		}
		got := manifestForm(prop, 0)
		if !reflect.DeepEqual(got, normalizeManifest(v)) {
			t.Errorf("property %s = %#v, want %#v", name, got, normalizeManifest(v))
		}
	}
}

func checkVisibility(t *testing.T, obj *phpserialize.Value, name, want string) {
	t.Helper()
	for _, e := range obj.Entries {
		vis, _, short := phpserialize.SplitPropertyName(e.Key.Str)
		if short == name && vis.String() == want {
			return
		}
	}
	t.Errorf("no %s property %q", want, name)
}

// manifestForm renders a value the way the fixture generator wrote it.
func manifestForm(v *phpserialize.Value, depth int) any {
	v = v.Deref()
	if depth > 50 {
		return "too deep"
	}
	switch v.Kind {
	case phpserialize.KindNull:
		return nil
	case phpserialize.KindBool:
		return v.Bool
	case phpserialize.KindInt:
		return v.Int
	case phpserialize.KindFloat:
		return v.Float
	case phpserialize.KindString:
		return string(v.Str)
	case phpserialize.KindEnum:
		return map[string]any{"$enum": v.Class + "::" + v.Case}
	case phpserialize.KindArray:
		if v.IsList() {
			out := []any{}
			for _, e := range v.Entries {
				out = append(out, manifestForm(e.Value, depth+1))
			}
			return out
		}
		out := map[string]any{}
		for _, e := range v.Entries {
			out[e.Key.String()] = manifestForm(e.Value, depth+1)
		}
		return out
	case phpserialize.KindObject:
		out := map[string]any{"$class": v.Class}
		for _, e := range v.Entries {
			_, _, short := phpserialize.SplitPropertyName(e.Key.Str)
			out[short] = manifestForm(e.Value, depth+1)
		}
		return out
	}
	return fmt.Sprintf("unsupported %s", v.Kind)
}

func normalizeManifest(v any) any {
	switch x := v.(type) {
	case json.Number:
		if strings.ContainsAny(x.String(), ".eE") {
			f, _ := x.Float64()
			return f
		}
		i, err := x.Int64()
		if err != nil {
			return x.String()
		}
		return i
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = normalizeManifest(x[i])
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, val := range x {
			out[k] = normalizeManifest(val)
		}
		return out
	}
	return v
}

func TestNextInChainIsByteIdenticalToPHP(t *testing.T) {
	for _, name := range []string{"chain", "chain-catch"} {
		t.Run(name, func(t *testing.T) {
			cur, err := ParseCommand(readPayloadFixture(t, name+".command.txt"))
			if err != nil {
				t.Fatal(err)
			}
			next, err := NextInChain(cur)
			if err != nil {
				t.Fatal(err)
			}
			got, err := next.Serialize()
			if err != nil {
				t.Fatal(err)
			}
			want := readPayloadFixture(t, name+"-next.reencoded.command.txt")
			if !bytes.Equal(got, want) {
				t.Fatalf("next link differs from PHP's dispatchNextJobInChain\n got: %q\nwant: %q", got, want)
			}
			q := next.Queueable()
			if q.Queue == nil || *q.Queue != "chains" || len(q.Chained) != 1 {
				t.Errorf("next link queue/chained = %v/%d, want chains/1", q.Queue, len(q.Chained))
			}
			last, err := ParseCommand([]byte(q.Chained[0]))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := NextInChain(mustNext(t, next, last)); err != ErrChainEnd {
				t.Errorf("after the last link: got %v, want ErrChainEnd", err)
			}
		})
	}
}

func mustNext(t *testing.T, cur, _ *Command) *Command {
	t.Helper()
	n, err := NextInChain(cur)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestBuildObjectPayloadMatchesPHP rebuilds the payload of a real job from
// its command and uuid: the bytes must be what PHP's createObjectPayload
// wrote, including the next chain link PHP's worker pushed.
func TestBuildObjectPayloadMatchesPHP(t *testing.T) {
	for _, name := range []string{"noop.json", "scalars.json", "options.json", "models.json", "enums-dates.json",
		"delayed.json", "private-props.json", "throws.json", "chain.json", "chain-next.json", "batch-member.json"} {
		t.Run(name, func(t *testing.T) {
			raw := readPayloadFixture(t, name)
			p, err := Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			cmd, err := DecodeCommand(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := BuildObjectPayload(cmd.Object, BuildOptions{UUID: p.UUID})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, raw) {
				t.Fatalf("built payload differs from PHP's\n got: %s\nwant: %s", got, raw)
			}
		})
	}
}

// TestBuildObjectPayloadRefusesInvalidUTF8: PHP's createPayload cannot
// json_encode a command holding bytes that are not UTF-8 (error 5), and
// neither can Go; the error says why.
func TestBuildObjectPayloadRefusesInvalidUTF8(t *testing.T) {
	cmd := phpserialize.Object(`App\Jobs\Raw`, phpserialize.Public("blob", phpserialize.Bytes([]byte{'a', 0xff})))
	if raw, err := BuildObjectPayload(cmd, BuildOptions{}); !errors.Is(err, ErrMalformedUTF8) {
		t.Fatalf("got %s, %v; want ErrMalformedUTF8", raw, err)
	}
}

func TestBuildObjectPayloadShapes(t *testing.T) {
	cmd := phpserialize.Object(`App\Jobs\Ünicode`, phpserialize.Public("tries", phpserialize.Int(3)), phpserialize.Public("backoff", phpserialize.List(phpserialize.Int(1), phpserialize.Int(5))),
		phpserialize.Public("batchId", phpserialize.String("b-1")))
	for _, c := range []struct {
		shape Shape
		keys  string
	}{
		{Shape8, `uuid,displayName,job,maxTries,maxExceptions,failOnTimeout,backoff,timeout,retryUntil,data`},
		{Shape12, `uuid,displayName,job,maxTries,maxExceptions,failOnTimeout,backoff,timeout,retryUntil,data,createdAt,delay`},
		{Shape13, `uuid,displayName,job,maxTries,maxExceptions,failOnTimeout,backoff,timeout,retryUntil,deleteWhenMissingModels,data,createdAt,delay`},
	} {
		raw, err := BuildObjectPayload(cmd, BuildOptions{Shape: c.shape})
		if err != nil {
			t.Fatal(err)
		}
		node, err := decodeOrdered(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(node.keys, ","); got != c.keys {
			t.Errorf("shape %d keys %s, want %s", c.shape, got, c.keys)
		}
		if !bytes.Contains(raw, []byte(`"backoff":"1,5"`)) || !bytes.Contains(raw, []byte(`Ünicode`)) {
			t.Errorf("shape %d: %s", c.shape, raw)
		}
		p, err := Parse(raw)
		if err != nil || *p.MaxTries != 3 {
			t.Fatalf("built payload does not parse back: %v", err)
		}
		if c.shape >= Shape1251 != p.Data.Has("batchId") {
			t.Errorf("shape %d: data.batchId presence wrong", c.shape)
		}
	}
}

func TestModelsDatesAndEnums(t *testing.T) {
	p, err := Parse(readPayloadFixture(t, "models.json"))
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := DecodeCommand(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	models := cmd.Models()
	if len(models) < 2 {
		t.Fatalf("want a model and a collection, got %+v", models)
	}
	var single, many bool
	for _, m := range models {
		if m.Model.Class == "" {
			t.Errorf("model at %s has no class", m.Path)
		}
		if m.Model.IsCollection() {
			many = len(m.Model.ID.([]any)) > 1
		} else {
			single = m.Model.ID != nil
		}
	}
	if !single || !many {
		t.Errorf("models: %+v", models)
	}

	p, err = Parse(readPayloadFixture(t, "enums-dates.json"))
	if err != nil {
		t.Fatal(err)
	}
	cmd, err = DecodeCommand(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	dates := 0
	enums := 0
	for _, e := range cmd.Object.Entries {
		v := e.Value.Deref()
		if IsDate(v) {
			tm, err := phpserialize.Time(v)
			if err != nil {
				t.Errorf("%q: %v", e.Key.Str, err)
			}
			if tm.Year() < 2000 || tm.Location() == nil {
				t.Errorf("%q: odd time %v", e.Key.Str, tm)
			}
			dates++
		}
		if v.Kind == phpserialize.KindEnum {
			var ec phpserialize.EnumCase
			if err := ec.DecodePHP(v); err != nil || ec.Case == "" {
				t.Errorf("enum %q: %v", e.Key.Str, err)
			}
			enums++
		}
	}
	if dates < 3 || enums < 2 {
		t.Errorf("found %d dates and %d enums in %s", dates, enums, cmd.Class())
	}
}

func TestClosureIsRecognised(t *testing.T) {
	p, err := Parse(readPayloadFixture(t, "closure.json"))
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := DecodeCommand(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !cmd.HasClosures() {
		t.Fatal("a queued closure must be reported as holding a PHP closure")
	}
	noop, _ := Parse(readPayloadFixture(t, "noop.json"))
	nc, _ := DecodeCommand(noop, nil)
	if nc.HasClosures() {
		t.Fatal("noop holds no closure")
	}
}

func TestBackoffRules(t *testing.T) {
	three := "1,5,10"
	p := &Payload{Backoff: &three}
	for attempts, want := range map[int64]int64{1: 1, 2: 5, 3: 10, 4: 10, 9: 10, 0: 10} {
		if got := p.BackoffFor(attempts, "0"); got != want {
			t.Errorf("attempts %d: %d, want %d", attempts, got, want)
		}
	}
	delay := int64(30)
	if got := (&Payload{Delay: &delay}).BackoffFor(1, "7"); got != 30 {
		t.Errorf("12.11+ delay fallback: %d, want 30", got)
	}
	if got := (&Payload{}).BackoffFor(2, "3,4"); got != 4 {
		t.Errorf("--backoff: %d, want 4", got)
	}
	if got := BackoffAt(" 12abc", 1); got != 12 {
		t.Errorf("PHP (int) cast: %d", got)
	}
	if got := BackoffAt("99999999999999999999", 1); got != math.MaxInt64 {
		t.Errorf("overflow: %d", got)
	}
}

func TestParseRejectsBadPayloadsClearly(t *testing.T) {
	for in, want := range map[string]string{
		``:                          "invalid JSON",
		`[]`:                        "invalid JSON",
		`{"uuid":"a"} x`:            "trailing data",
		`{"maxTries":"lots"}`:       `key "maxTries"`,
		`{"data":{"command":12}}`:   `key "data.command"`,
		`{"uuid":`:                  "invalid JSON",
		`{"backoff":{"a":1}}`:       `key "backoff"`,
		`{"failOnTimeout":"maybe"}`: `key "failOnTimeout"`,
	} {
		_, err := Parse([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: got %v, want an error mentioning %q", in, err, want)
		}
	}
	p, err := Parse([]byte(`{"uuid":"u","maxTries":"3","timeout":30.0,"tags":["x"],"data":""}`))
	if err != nil || *p.MaxTries != 3 || *p.Timeout != 30 || p.Extra["tags"] == nil || p.IsObjectJob() {
		t.Fatalf("lenient parse: %+v %v", p, err)
	}
}
