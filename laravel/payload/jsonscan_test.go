package payload

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// scanSeeds are every payload fixture plus documents on the edges of what
// scanObject takes.
func scanSeeds(t testing.TB) [][]byte {
	paths, err := filepath.Glob(filepath.Join(payloadsDir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no payload fixtures: %v", err)
	}
	var out [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	for _, s := range []string{
		`{}`, ` {"a":1} `, `{"a":1}}`, `{"a":1,"a":2}`, `{"\u0061":1}`, `{"é":1}`, `{"a":-0.5e+3}`, `{"a":01}`,
		`{"a":"\ud83d\ude00 \ud800 \udc00x \u00e9 \/ \b\f\n\r\t"}`, "{\"a\":\"\xff\xfe\"}", `{"a":[1,{"b":[]},"c",true,false,null]}`,
		`{"a":1,}`, `{"a" 1}`, `[1]`, `null`, `{"a":"x` + "\x01" + `"}`, `{"a":"\x"}`, `{"a":tru}`, `{"a":1.}`, `{"a":1e}`,
		`{"a":1} x`, strings.Repeat(`{"a":`, 600) + `1` + strings.Repeat(`}`, 600),
	} {
		out = append(out, []byte(s))
	}
	return out
}

// checkScanAgainstStd asserts that whatever scanObject accepts,
// encoding/json reads the same way: same members, same value bytes,
// nothing after the object.
func checkScanAgainstStd(t *testing.T, doc []byte) {
	obj, ok := scanObject(doc)
	if !ok {
		return
	}
	var want map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(doc))
	if err := dec.Decode(&want); err != nil || want == nil || dec.More() {
		t.Fatalf("scanObject took %q, encoding/json does not: %v", doc, err)
	}
	if len(obj) != len(want) {
		t.Fatalf("%q: %d members, encoding/json %d", doc, len(obj), len(want))
	}
	for _, f := range obj {
		if !bytes.Equal(f.raw, want[f.key]) {
			t.Fatalf("%q: member %q is %q, encoding/json %q", doc, f.key, f.raw, want[f.key])
		}
	}
}

// checkUnquoteAgainstStd asserts UnquoteJSON decodes every string it takes
// to what encoding/json decodes, and takes every valid string.
func checkUnquoteAgainstStd(t *testing.T, lit []byte) {
	got, ok := UnquoteJSON(lit)
	var want string
	err := json.Unmarshal(lit, &want)
	switch {
	case ok && err != nil:
		t.Fatalf("UnquoteJSON took %q, encoding/json: %v", lit, err)
	case ok && got != want:
		t.Fatalf("UnquoteJSON(%q) = %q, encoding/json %q", lit, got, want)
	case !ok && err == nil && len(lit) > 1 && lit[0] == '"' && lit[len(lit)-1] == '"':
		// Only exact literals reach UnquoteJSON: encoding/json also takes
		// surrounding whitespace.
		t.Fatalf("UnquoteJSON refused the valid string %q", lit)
	}
}

// checkSharedTexts decodes every string member of doc into one texts
// buffer sized for doc, as Parse does, and only then compares each with
// encoding/json: a later string (or a refused one) written over an earlier
// one's bytes, or a buffer that moved under them, shows here.
func checkSharedTexts(t *testing.T, doc []byte, obj jsonObject) {
	buf := newTexts(len(doc))
	var got []string
	var lits [][]byte
	for _, f := range obj {
		if len(f.raw) == 0 || f.raw[0] != '"' {
			continue
		}
		if s, ok := buf.unquote(f.raw); ok {
			got = append(got, s)
			lits = append(lits, f.raw)
		}
		// A literal cut short is refused; its partial bytes must not
		// reach the strings already made.
		buf.unquote(f.raw[:len(f.raw)-1])
	}
	for i, lit := range lits {
		var want string
		if err := json.Unmarshal(lit, &want); err != nil || got[i] != want {
			t.Fatalf("%q: member %q decoded in a shared buffer reads %q, encoding/json %q (%v)", doc, lit, got[i], want, err)
		}
	}
}

func TestStringsSharingABufferKeepTheirBytes(t *testing.T) {
	// Invalid UTF-8 decodes to three bytes per byte, so these strings
	// outgrow a buffer sized for the document and move it.
	doc := []byte("{\"a\":\"\xff\xff\xff\",\"b\":\"x\\u00e9\xfe\xfe\",\"c\":\"plain\",\"d\":\"\",\"e\":\"\xff\\n\xff\"}")
	obj, ok := scanObject(doc)
	if !ok {
		t.Fatalf("scanObject declines %q", doc)
	}
	checkSharedTexts(t, doc, obj)
	for _, doc := range scanSeeds(t) {
		if obj, ok := scanObject(doc); ok {
			checkSharedTexts(t, doc, obj)
		}
	}
}

func TestScanObjectAgreesWithEncodingJSON(t *testing.T) {
	taken := 0
	for _, doc := range scanSeeds(t) {
		checkScanAgainstStd(t, doc)
		if _, ok := scanObject(doc); ok {
			taken++
		}
	}
	// Every real payload must take the fast path, or it gains nothing.
	for _, name := range []string{"noop.json", "chain-catch.json", "encrypted-aes-256-cbc.json", "l7-object.json", "l13-object.json"} {
		if _, ok := scanObject(readPayloadFixture(t, name)); !ok {
			t.Errorf("scanObject declines the fixture %s", name)
		}
	}
	if taken == 0 {
		t.Fatal("scanObject took no document")
	}
}

func TestUnquoteAgreesWithEncodingJSON(t *testing.T) {
	for _, doc := range scanSeeds(t) {
		obj, ok := scanObject(doc)
		if !ok {
			continue
		}
		for _, f := range obj {
			if len(f.raw) > 0 && f.raw[0] == '"' {
				checkUnquoteAgainstStd(t, f.raw)
			}
		}
	}
	for _, s := range []string{`"\ud83d"`, `"\ud83dx"`, `"\ud83d\u0041"`, `"\udc00\ud800"`, "\"\xed\xa0\x80\"", `"\u"`, `"abc`, `abc`, `"a"b"`} {
		checkUnquoteAgainstStd(t, []byte(s))
	}
}

func FuzzScanObject(f *testing.F) {
	for _, s := range scanSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkScanAgainstStd(t, doc)
		checkNestedScan(t, doc)
		if obj, ok := scanObject(doc); ok {
			checkSharedTexts(t, doc, obj)
			for _, m := range obj {
				if len(m.raw) > 0 && m.raw[0] == '"' {
					checkUnquoteAgainstStd(t, m.raw)
				}
			}
		}
	})
}

func FuzzUnquoteJSON(f *testing.F) {
	for _, s := range []string{`"a"`, `"\u00e9\ud83d\ude00"`, "\"\xff\"", `"\ud800\ud800"`, `"\\\"\/"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, lit []byte) { checkUnquoteAgainstStd(t, lit) })
}

// plainRun agrees with a byte-by-byte reading at every offset and length
// (the eight-byte steps and the tail).
func TestPlainRunAgreesWithByteByByte(t *testing.T) {
	slow := func(b []byte, ascii bool) int {
		for i, c := range b {
			if c == '"' || c == '\\' || c < 0x20 || (ascii && c >= 0x80) {
				return i
			}
		}
		return len(b)
	}
	specials := []byte{'"', '\\', 0x00, 0x1f, 0x20, 0x7f, 0x80, 0xc3, 0xff, '!', '[', ']'}
	for length := 0; length <= 24; length++ {
		for at := 0; at < length; at++ {
			for _, c := range specials {
				for _, fill := range []byte{'a', 0xe9, 0x21} {
					b := bytes.Repeat([]byte{fill}, length)
					b[at] = c
					for _, ascii := range []bool{false, true} {
						if got, want := plainRun(b, ascii), slow(b, ascii); got != want {
							t.Fatalf("plainRun(%q, %v) = %d, want %d", b, ascii, got, want)
						}
					}
				}
			}
		}
	}
}

func FuzzPlainRun(f *testing.F) {
	f.Add([]byte(`O:8:\"App\\Jobs\":1:{s:1:\"i\";i:1;}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, ascii := range []bool{false, true} {
			n := plainRun(b, ascii)
			for i, c := range b[:n] {
				if c == '"' || c == '\\' || c < 0x20 || (ascii && c >= 0x80) {
					t.Fatalf("plainRun(%q, %v) = %d passes byte %d (%#x)", b, ascii, n, i, c)
				}
			}
			if n < len(b) {
				c := b[n]
				if !(c == '"' || c == '\\' || c < 0x20 || (ascii && c >= 0x80)) {
					t.Fatalf("plainRun(%q, %v) = %d stops at a plain byte %#x", b, ascii, n, c)
				}
			}
		}
	})
}

// checkNestedScan: splitting "data" in the top-level pass gives what
// splitting its bytes afterwards gives, and declines nothing more.
func checkNestedScan(t *testing.T, doc []byte) {
	t.Helper()
	obj, ok := scanObject(doc)
	pobj, data, pok := scanPayload(doc, "data", nil)
	if ok != pok || !reflect.DeepEqual(obj, pobj) {
		t.Fatalf("scanPayload(%q) = %v, %v; scanObject %v, %v", doc, pobj, pok, obj, ok)
	}
	checkDecodingScan(t, doc, pobj, data, pok)
	if !ok {
		return
	}
	raw := obj.member("data").raw
	want, wantOK := jsonObject(nil), false
	if len(raw) > 0 && raw[0] == '{' {
		want, wantOK = scanObject(raw)
	}
	if (data != nil) != wantOK || !reflect.DeepEqual(data, want) && wantOK {
		t.Fatalf("data of %q split as %v; scanObject of its bytes %v, %v", doc, data, want, wantOK)
	}
}

// checkDecodingScan: scanning with texts declines and splits exactly as
// without (obj, data, ok), and every string member it decoded reads as
// encoding/json reads its bytes, checked once the whole document is
// decoded (so that no string was written over by a later one).
func checkDecodingScan(t *testing.T, doc []byte, obj, data jsonObject, ok bool) {
	t.Helper()
	buf := newTexts(len(doc))
	dobj, ddata, dok := scanPayload(doc, "data", &buf)
	if dok != ok || !sameMembers(dobj, obj) || !sameMembers(ddata, data) {
		t.Fatalf("decoding scan of %q = %v, %v, %v; without decoding %v, %v, %v", doc, dobj, ddata, dok, obj, data, ok)
	}
	for _, f := range append(dobj, ddata...) {
		isString := len(f.raw) > 0 && f.raw[0] == '"'
		if f.decoded != isString {
			t.Fatalf("%q: member %q decoded = %v", doc, f.key, f.decoded)
		}
		var want string
		if isString && (json.Unmarshal(f.raw, &want) != nil || f.text != want) {
			t.Fatalf("%q: member %q decoded as %q, encoding/json %q", doc, f.key, f.text, want)
		}
	}
}

// sameMembers compares keys and value bytes, not decoded texts.
func sameMembers(a, b jsonObject) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if a[i].key != b[i].key || !bytes.Equal(a[i].raw, b[i].raw) {
			return false
		}
	}
	return true
}

func TestNestedScanAgreesWithScanningData(t *testing.T) {
	for _, doc := range []string{
		`{"uuid":"u","data":{"commandName":"A","command":"O:1:\"A\":0:{}"}}`,
		`{"data":{}}`,
		`{"data":[1]}`,
		`{"data":"s"}`,
		`{"data":{"a":1,"a":2}}`,
		`{"data":{"\u0061":1}}`,
		`{"x":{"data":{"b":1}},"data":{"c":{"data":{}}}}`,
		`{"data":{"c":1},"data":{"d":2}}`,
		`{}`,
	} {
		checkNestedScan(t, []byte(doc))
	}
}
