package phpserialize

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

const fixtureDir = "../../testdata/serialized"

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustUnserialize(t testing.TB, b []byte) *Value {
	t.Helper()
	v, err := Unserialize(b)
	if err != nil {
		t.Fatalf("Unserialize(%q): %v", shorten(b), err)
	}
	return v
}

func mustSerialize(t testing.TB, v *Value) []byte {
	t.Helper()
	b, err := Serialize(v)
	if err != nil {
		t.Fatalf("Serialize: %v", err)
	}
	return b
}

func shorten(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

func TestFixturesRoundTripByteExact(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtureDir, "*.ser"))
	if err != nil || len(files) < 25 {
		t.Fatalf("want the PHP fixtures (run php testdata/php/gen-serialized.php), got %d files, err %v", len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			in := readFixture(t, filepath.Base(f))
			v, canonical, err := unserialize(in)
			if err != nil {
				t.Fatal(err)
			}
			if !canonical {
				t.Error("PHP output reported as non-canonical")
			}
			if out := mustSerialize(t, v); !bytes.Equal(out, in) {
				t.Errorf("round trip differs\n got: %q\nwant: %q", shorten(out), shorten(in))
			}
		})
	}
}

func TestBigStringMatchesPHP(t *testing.T) {
	var want struct {
		Length int    `json:"length"`
		SHA256 string `json:"sha256"`
	}
	if err := json.Unmarshal(readFixture(t, "big-string.json"), &want); err != nil {
		t.Fatal(err)
	}
	pattern := make([]byte, 256)
	for i := range pattern {
		pattern[i] = byte(i)
	}
	big := bytes.Repeat(pattern, 4096)
	ser := mustSerialize(t, Bytes(big))
	sum := sha256.Sum256(ser)
	if len(ser) != want.Length || hex.EncodeToString(sum[:]) != want.SHA256 {
		t.Fatalf("serialized 1 MiB string: len %d sha %x, PHP: len %d sha %s", len(ser), sum, want.Length, want.SHA256)
	}
	v := mustUnserialize(t, ser)
	if !bytes.Equal(v.Str, big) {
		t.Fatal("1 MiB string bytes differ after Unserialize")
	}
}

func TestStringsAreRawBytes(t *testing.T) {
	v := mustUnserialize(t, readFixture(t, "strings.ser"))
	want := map[string]string{
		"empty":            "",
		"utf8":             "h\u00e9llo w\u00f6rld \U0001F600",
		"quotes":           `it's "quoted"`,
		"terminator":       "a\";}b",
		"nul":              "a\x00b\x00",
		"crlf":             "line1\r\nline2\n",
		"invalid-utf8":     "\xff\xfe\xc3",
		"backslash-escape": `\x41`,
		"windows-path":     `C:\new`,
	}
	for k, w := range want {
		got, err := v.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		if got.Kind != KindString || string(got.Str) != w {
			t.Errorf("%s: got %v %q, want %q", k, got.Kind, got.Str, w)
		}
	}
}

func TestCallerMayReuseInputBuffer(t *testing.T) {
	in := []byte(`a:1:{s:3:"key";s:5:"value";}`)
	v := mustUnserialize(t, in)
	for i := range in {
		in[i] = 'X'
	}
	got, err := v.Get("key")
	if err != nil || string(got.Str) != "value" {
		t.Fatalf("after overwriting the input: %v %q", err, got.Str)
	}
}

func TestArraysKeepKeysAndOrder(t *testing.T) {
	v := mustUnserialize(t, readFixture(t, "arrays.ser"))
	sparse, _ := v.Get("sparse")
	var keys []int64
	for _, e := range sparse.Entries {
		keys = append(keys, e.Key.Int)
	}
	if len(keys) != 3 || keys[0] != 0 || keys[1] != 5 || keys[2] != 2 {
		t.Errorf("sparse keys %v, want [0 5 2]", keys)
	}
	neg, _ := v.Get("negative")
	if neg.Entries[1].Key.Int != -9223372036854775808 {
		t.Errorf("PHP_INT_MIN key: %v", neg.Entries[1].Key)
	}
	max, _ := v.Get("max")
	if max.Entries[0].Key.Int != 9223372036854775807 {
		t.Errorf("PHP_INT_MAX key: %v", max.Entries[0].Key)
	}
	empty, _ := v.Get("empty")
	if empty.Kind != KindArray || len(empty.Entries) != 0 {
		t.Errorf("empty array: %+v", empty)
	}
}

func TestNumbersDecode(t *testing.T) {
	v := mustUnserialize(t, readFixture(t, "numbers.ser"))
	ints := []int64{9223372036854775807, -9223372036854775808, 0, -1, 42}
	for i, want := range ints {
		if got := v.Entries[i].Value; got.Kind != KindInt || got.Int != want {
			t.Errorf("entry %d: %+v, want int %d", i, got, want)
		}
	}
}

func TestEnums(t *testing.T) {
	v := mustUnserialize(t, readFixture(t, "enum-backed.ser"))
	if v.Kind != KindEnum || v.Class != `Fixtures\Suit` || v.Case != "Hearts" {
		t.Fatalf("backed enum: %+v", v)
	}
	v = mustUnserialize(t, readFixture(t, "enum-pure.ser"))
	if v.Class != `Fixtures\Status` || v.Case != "Archived" {
		t.Fatalf("pure enum: %+v", v)
	}
	// The same case twice: PHP writes r:2 for the second, pointing at the
	// first E: node.
	v = mustUnserialize(t, readFixture(t, "enum-twice.ser"))
	first, again := v.Entries[0].Value, v.Entries[2].Value
	if again.Kind != KindRef || again.Target != first || again.Deref().Case != "Hearts" {
		t.Fatalf("second Hearts: %+v", again)
	}
}

func TestReferences(t *testing.T) {
	t.Run("shared object", func(t *testing.T) {
		v := mustUnserialize(t, readFixture(t, "ref-shared-object.ser"))
		first, _ := v.Get("first")
		second := v.Entries[1].Value
		list, _ := v.Get("list")
		if second.Kind != KindRef || second.Target != first || list.Entries[0].Value.Target != first {
			t.Fatalf("r: targets do not point at the first object")
		}
	})
	t.Run("alias to scalar", func(t *testing.T) {
		v := mustUnserialize(t, readFixture(t, "ref-scalar.ser"))
		a, c := v.Entries[0].Value, v.Entries[2].Value
		if c.Kind != KindRefAlias || c.Target != a || string(c.Deref().Str) != "scalar" {
			t.Fatalf("R: to scalar: %+v", c)
		}
	})
	t.Run("alias to array", func(t *testing.T) {
		v := mustUnserialize(t, readFixture(t, "ref-array.ser"))
		x, y, z := v.Entries[0].Value, v.Entries[1].Value, v.Entries[2].Value
		if y.Kind != KindRefAlias || y.Target != x || z.Kind != KindArray {
			t.Fatalf("R: to array: %+v", y)
		}
	})
	t.Run("object property pointing at the object", func(t *testing.T) {
		v := mustUnserialize(t, readFixture(t, "ref-self-object.ser"))
		self, err := v.PropKey("self")
		if err != nil || self != v {
			t.Fatalf("self: %v %p want %p", err, self, v)
		}
	})
	t.Run("array containing a reference to itself", func(t *testing.T) {
		v := mustUnserialize(t, readFixture(t, "ref-self-array.ser"))
		inner := v.Entries[0].Value
		if r := inner.Entries[0].Value; r.Kind != KindRefAlias || r.Target != inner {
			t.Fatalf("$a[] = &$a: %+v", r)
		}
	})
	t.Run("Serializable body shares PHP's slots", func(t *testing.T) {
		v := mustUnserialize(t, readFixture(t, "serializable-then-ref.ser"))
		if r := v.Entries[2].Value; r.Target != v.Entries[1].Value {
			t.Fatalf("R:6 after the C: body should point at the int 5, got %+v", r.Target)
		}
		v = mustUnserialize(t, readFixture(t, "serializable-nested.ser"))
		if r := v.Entries[2].Value; r.Target != v.Entries[0].Value {
			t.Fatalf("r:2 after the C: body: %+v", r.Target)
		}
	})
}

// TestNestedContainersInsideCustomBody: values inside a C: body take slots,
// so R:8 after it is the N at slot 8.
func TestNestedContainersInsideCustomBody(t *testing.T) {
	body := `a:3:{i:0;a:1:{i:0;N;}i:1;N;i:2;N;}`
	in := `a:3:{i:0;C:1:"A":` + itoa(len(body)) + `:{` + body + `}i:1;N;i:2;R:8;}`
	v := mustUnserialize(t, []byte(in))
	if r := v.Entries[2].Value; r.Target != v.Entries[1].Value {
		t.Fatalf("R:8 points at %+v", r.Target)
	}
	if out := string(mustSerialize(t, v)); out != in {
		t.Fatalf("round trip: %s", out)
	}
}

// TestCustomInsideCustomBody: slots of a C: body nested in another C: body
// count too (checked against PHP with a Serializable class that calls
// unserialize() on its body).
func TestCustomInsideCustomBody(t *testing.T) {
	inner := `a:2:{i:0;N;i:1;N;}`
	mid := `a:2:{i:0;C:1:"A":` + itoa(len(inner)) + `:{` + inner + `}i:1;N;}`
	// Slots: 1 outer array, 2 outer C, 3 mid array, 4 inner C, 5-7 inner
	// values, 8 the N after the inner C, 9 the N after the outer C.
	in := `a:3:{i:0;C:1:"A":` + itoa(len(mid)) + `:{` + mid + `}i:1;N;i:2;R:9;}`
	v := mustUnserialize(t, []byte(in))
	if r := v.Entries[2].Value; r.Target != v.Entries[1].Value {
		t.Fatalf("R:9 points at %+v", r.Target)
	}
	if out := string(mustSerialize(t, v)); out != in {
		t.Fatalf("round trip: %s", out)
	}
}

func TestObjectsWithIntKeysAndCustom(t *testing.T) {
	v := mustUnserialize(t, readFixture(t, "arrayobject.ser"))
	if v.Kind != KindObject || v.Class != "ArrayObject" || !v.Entries[1].Key.IsInt {
		t.Fatalf("ArrayObject: %+v", v)
	}
	v = mustUnserialize(t, readFixture(t, "serializable-opaque.ser"))
	if v.Kind != KindCustom || v.Class != `Fixtures\Opaque` || string(v.Str) != `raw;}"{body` {
		t.Fatalf("C: %+v", v)
	}
	v = mustUnserialize(t, readFixture(t, "typed-uninitialized.ser"))
	if len(v.Entries) != 1 || v.Entries[0].Key.Str != "set" {
		t.Fatalf("uninitialized typed properties must be absent: %+v", v.Entries)
	}
}

// TestAcceptsWhatPHPAccepts covers input PHP's unserialize() reads but never
// writes; numbers keep their text so the bytes still round-trip.
func TestAcceptsWhatPHPAccepts(t *testing.T) {
	cases := []struct {
		in    string
		check func(*Value) bool
		exact bool
	}{
		{`d:1;`, func(v *Value) bool { return v.Float == 1 }, true},
		{`d:.5e3;`, func(v *Value) bool { return v.Float == 500 }, true},
		{`d:1.;`, func(v *Value) bool { return v.Float == 1 }, true},
		{`d:1e400;`, func(v *Value) bool { return v.Float > 1e308 }, true},
		{`d:1E5;`, func(v *Value) bool { return v.Float == 1e5 }, true},
		{`d:+1.5;`, func(v *Value) bool { return v.Float == 1.5 }, true},
		{`d:0.10;`, func(v *Value) bool { return v.Float == 0.1 }, true},
		{`d:1.0E+25;`, func(v *Value) bool { return v.Float == 1e25 }, true},
		{`d:-INF;`, func(v *Value) bool { return v.Float < -1e308 }, true},
		{`i:+5;`, func(v *Value) bool { return v.Int == 5 }, true},
		{`i:007;`, func(v *Value) bool { return v.Int == 7 }, true},
		{`i:-0;`, func(v *Value) bool { return v.Int == 0 }, true},
		{`s:03:"abc";`, func(v *Value) bool { return string(v.Str) == "abc" }, false},
		{`a:01:{i:0;i:1;}`, func(v *Value) bool { return len(v.Entries) == 1 }, false},
		{`a:1:{i:007;i:1;}`, func(v *Value) bool { return v.Entries[0].Key.Int == 7 }, false},
		{`O:8:"stdClass":1:{i:0;i:1;}`, func(v *Value) bool { return v.Entries[0].Key.IsInt }, true},
		{`a:1:{i:0;R:1;}`, func(v *Value) bool { return v.Entries[0].Value.Target == v }, true},
	}
	for _, c := range cases {
		v, canonical, err := unserialize([]byte(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if !c.check(v) {
			t.Errorf("%s: wrong value %+v", c.in, v)
		}
		out := mustSerialize(t, v)
		if c.exact && string(out) != c.in {
			t.Errorf("%s: round trip gave %s", c.in, out)
		}
		if canonical != c.exact {
			t.Errorf("%s: canonical=%v, want %v", c.in, canonical, c.exact)
		}
	}
}

func TestRejectsInvalidInput(t *testing.T) {
	cases := map[string]string{
		``:                            "unexpected end of input",
		`x`:                           "unknown value type",
		`N`:                           "expected 'N;'",
		`b:2;`:                        "boolean",
		`i:;`:                         "expected digits",
		`i:99999999999999999999;`:     "out of range",
		`i:9223372036854775808;`:      "out of range",
		`i:5`:                         "expected ';' after integer",
		`d:abc;`:                      "invalid float",
		`d:1e;`:                       "invalid float",
		`d:0x10;`:                     "invalid float",
		`d:inf;`:                      "invalid float",
		`s:-1:"";`:                    "expected string length",
		`s:5:"abc";`:                  "exceeds",
		`s:3:"abcd";`:                 "expected '\"' after string",
		`s:99999999999999999999:"a";`: "exceeds the input size",
		`a:1:{i:0;N;i:1;N;}`:          "expected '}'",
		`a:2:{i:0;N;}`:                "more than the remaining input",
		`a:100000000:{}`:              "element count",
		`a:10:{i:0;N;}`:               "more than the remaining input",
		`a:1:{d:1;N;}`:                "key must be an integer or a string",
		`a:1:{N;i:0;N;}`:              "key must be an integer or a string",
		`O:9:"std Class":0:{}`:        "invalid class name",
		`O:0:"":0:{}`:                 "invalid class name",
		`E:4:"Suit";`:                 "not Class:Case",
		`E:5:"Suit:";`:                "not Class:Case",
		`r:1;`:                        "invalid slot",
		`R:1;`:                        "does not exist",
		`a:1:{i:0;r:5;}`:              "does not exist",
		`a:1:{i:0;R:0;}`:              "invalid slot",
		`a:2:{i:0;s:1:"x";i:1;r:2;}`:  "must refer to an object",
		`a:1:{i:0;O:8:"stdClass":1:{s:1:"a";r:1;}}`: "must refer to an object",
		`N;N;`:                                 "trailing data",
		`i:1;garbage`:                          "trailing data",
		`C:1:"A":5:{ab}`:                       "exceeds",
		`a:2:{i:0;C:1:"A":6:{a:0:{}}i:1;r:3;}`: "body of a C: object",
	}
	for in, want := range cases {
		_, err := Unserialize([]byte(in))
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: want *SyntaxError, got %v", in, err)
			continue
		}
		if !strings.Contains(se.Msg, want) {
			t.Errorf("%q: error %q, want it to mention %q", in, err, want)
		}
		if se.Offset < 0 || se.Offset > len(in) {
			t.Errorf("%q: offset %d outside the input", in, se.Offset)
		}
	}
}

func TestSyntaxErrorMessage(t *testing.T) {
	_, err := Unserialize([]byte(`a:1:{s:3:"abc";i:12x}`))
	want := `php unserialize: at byte 19: expected ';' after integer`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

func TestTruncatedJobCommandAlwaysErrors(t *testing.T) {
	cmd := readFixture(t, "job-command.ser")
	for i := 0; i < len(cmd); i++ {
		v, err := Unserialize(cmd[:i])
		if err == nil {
			t.Fatalf("prefix of %d bytes parsed as %+v", i, v)
		}
		var se *SyntaxError
		if !errors.As(err, &se) || se.Offset > i {
			t.Fatalf("prefix of %d bytes: %v", i, err)
		}
	}
}

func TestDeepNestingFailsFast(t *testing.T) {
	const levels = 1_000_000
	in := bytes.Repeat([]byte("a:1:{i:0;"), levels)
	_, err := Unserialize(in)
	if err == nil || !strings.Contains(err.Error(), "nesting deeper") {
		t.Fatalf("got %v", err)
	}
	// Failing fast means at the first level past MaxDepth, not after
	// reading the 9 MB.
	var se *SyntaxError
	if !errors.As(err, &se) || se.Offset > (MaxDepth+1)*len("a:1:{i:0;") {
		t.Fatalf("the error comes at byte %v, past level %d", err, MaxDepth+1)
	}
	// MaxDepth itself is fine.
	ok := append(bytes.Repeat([]byte("a:1:{i:0;"), MaxDepth), 'N', ';')
	ok = append(ok, bytes.Repeat([]byte("}"), MaxDepth)...)
	v := mustUnserialize(t, ok)
	if out := mustSerialize(t, v); !bytes.Equal(out, ok) {
		t.Fatal("depth MaxDepth does not round-trip")
	}
}

func TestHugeCountsDoNotAllocate(t *testing.T) {
	inputs := []string{`a:100000000:{}`, `O:8:"stdClass":99999999:{}`, `s:100000000:"x";`, `C:1:"A":100000000:{}`}
	for _, in := range inputs {
		allocs := testing.AllocsPerRun(10, func() {
			if _, err := Unserialize([]byte(in)); err == nil {
				t.Fatalf("%s parsed", in)
			}
		})
		// The input copies, the decoder and the error; nothing sized by the count.
		if allocs > 12 {
			t.Errorf("%s: %v allocations", in, allocs)
		}
	}
	var ms runtimeMem
	ms.start()
	for range 100 {
		Unserialize([]byte(`a:100000000:{}`))
	}
	if grew := ms.bytes(); grew > 1<<20 {
		t.Errorf("100 parses of a:100000000:{} allocated %d bytes", grew)
	}
}

// TestAllocationIsBoundedByInput checks that memory stays a small multiple
// of the input even for inputs made of the smallest possible values.
func TestAllocationIsBoundedByInput(t *testing.T) {
	const n = 100000
	var b bytes.Buffer
	b.WriteString("a:100000:{")
	for i := range n {
		b.WriteString("i:")
		b.WriteString(itoa(i))
		b.WriteString(";N;")
	}
	b.WriteString("}")
	in := b.Bytes()
	var ms runtimeMem
	ms.start()
	v := mustUnserialize(t, in)
	grew := ms.bytes()
	if len(v.Entries) != n {
		t.Fatal("wrong count")
	}
	if grew > uint64(40*len(in)) {
		t.Errorf("input %d bytes, allocated %d (%.1fx)", len(in), grew, float64(grew)/float64(len(in)))
	}
	t.Logf("input %d bytes, allocated %d (%.1fx)", len(in), grew, float64(grew)/float64(len(in)))
}

func TestLinearWork(t *testing.T) {
	build := func(n int) []byte {
		var b bytes.Buffer
		b.WriteString("a:" + itoa(n) + ":{")
		for i := range n {
			b.WriteString("i:" + itoa(i) + `;C:1:"A":6:{a:0:{}}`)
		}
		b.WriteString("}")
		return b.Bytes()
	}
	// 16x the input must not take anywhere near 256x (quadratic) the
	// work. Bytes allocated count the work without a clock: a quadratic
	// parse copies or rescans what it read.
	small, large := build(10000), build(160000)
	measure := func(in []byte) uint64 {
		var m runtimeMem
		m.start()
		mustUnserialize(t, in)
		return m.bytes()
	}
	bs, bl := measure(small), measure(large)
	if bl > 32*bs {
		t.Errorf("16x input allocated %d vs %d bytes: not linear", bl, bs)
	}
}

// runtimeMem measures bytes allocated between start and bytes.
type runtimeMem struct{ before uint64 }

func (m *runtimeMem) start() {
	var s runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&s)
	m.before = s.TotalAlloc
}

func (m *runtimeMem) bytes() uint64 {
	var s runtime.MemStats
	runtime.ReadMemStats(&s)
	return s.TotalAlloc - m.before
}

func itoa(i int) string { return strconv.Itoa(i) }
