package phpjson

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"math"
	"os"
	"testing"
)

// phpJSONCases is testdata/json/cases.json, written by real PHP
// (testdata/php/gen-json.php).
type phpJSONCases struct {
	Strings []struct {
		InputBase64      string `json:"input_base64"`
		UnescapedUnicode string `json:"unescaped_unicode"`
		Default          string `json:"default"`
	} `json:"strings"`
	Floats []struct {
		Bits string `json:"bits"`
		JSON string `json:"json"`
	} `json:"floats"`
	RefusedStrings []struct {
		InputBase64      string `json:"input_base64"`
		UnescapedUnicode bool   `json:"unescaped_unicode"`
		Encoded          bool   `json:"encoded"`
		Error            string `json:"error"`
	} `json:"refused_strings"`
	RefusedFloats []struct {
		Bits    string `json:"bits"`
		Encoded bool   `json:"encoded"`
		Error   string `json:"error"`
	} `json:"refused_floats"`
}

func loadJSONCases(t *testing.T) phpJSONCases {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/json/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var c phpJSONCases
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Strings) == 0 || len(c.Floats) == 0 || len(c.RefusedStrings) == 0 || len(c.RefusedFloats) == 0 {
		t.Fatal("cases.json is missing cases; rerun php testdata/php/gen-json.php")
	}
	return c
}

func floatFromBits(t *testing.T, h string) float64 {
	t.Helper()
	bits, err := hex.DecodeString(h)
	if err != nil || len(bits) != 8 {
		t.Fatalf("bad bits %q", h)
	}
	return math.Float64frombits(binary.BigEndian.Uint64(bits))
}

func TestStringsMatchPHP(t *testing.T) {
	for _, c := range loadJSONCases(t).Strings {
		in, err := base64.StdEncoding.DecodeString(c.InputBase64)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendString(nil, string(in), UnescapedUnicode)
		if err != nil || string(got) != c.UnescapedUnicode {
			t.Errorf("%q with JSON_UNESCAPED_UNICODE: got %s (%v), PHP wrote %s", in, got, err, c.UnescapedUnicode)
		}
		got, err = AppendString(nil, string(in), 0)
		if err != nil || string(got) != c.Default {
			t.Errorf("%q without flags: got %s (%v), PHP wrote %s", in, got, err, c.Default)
		}
	}
}

// TestHandWrittenStrings are PHP 8.2 json_encode outputs kept from the
// laravel package's former copy of the escaper.
func TestHandWrittenStrings(t *testing.T) {
	cases := []struct{ in, unescaped, escaped string }{
		{`App\Jobs\Foo`, `"App\\Jobs\\Foo"`, `"App\\Jobs\\Foo"`},
		{"a/b \"q\"\n\t\x01", `"a\/b \"q\"\n\t\u0001"`, `"a\/b \"q\"\n\t\u0001"`},
		{"Café 😀 \u2028", "\"Café 😀 \\u2028\"", `"Caf\u00e9 \ud83d\ude00 \u2028"`},
	}
	for _, c := range cases {
		if got, err := String(c.in, UnescapedUnicode); err != nil || got != c.unescaped {
			t.Errorf("unescaped %q: %s (%v) want %s", c.in, got, err, c.unescaped)
		}
		if got, err := String(c.in, 0); err != nil || got != c.escaped {
			t.Errorf("escaped %q: %s (%v) want %s", c.in, got, err, c.escaped)
		}
	}
}

func TestAppendStringKeepsPrefix(t *testing.T) {
	got, err := AppendString([]byte(`{"k":`), "v/", 0)
	if err != nil || string(got) != `{"k":"v\/"` {
		t.Fatalf("%s %v", got, err)
	}
}

func TestStringList(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, `[]`},
		{[]string{}, `[]`},
		{[]string{"a"}, `["a"]`},
		{[]string{"é/1", "b"}, `["\u00e9\/1","b"]`},
	} {
		if got, err := StringList(c.in, 0); err != nil || got != c.want {
			t.Errorf("%q: %s (%v), want %s", c.in, got, err, c.want)
		}
	}
	if _, err := StringList([]string{"ok", "\xff"}, 0); err != ErrMalformedUTF8 {
		t.Errorf("invalid UTF-8 in a list: %v", err)
	}
}

func TestFloatsMatchPHP(t *testing.T) {
	for _, c := range loadJSONCases(t).Floats {
		f := floatFromBits(t, c.Bits)
		got, err := AppendFloat(nil, f)
		if err != nil || string(got) != c.JSON {
			t.Errorf("%v: got %s (%v), PHP wrote %s", f, got, err, c.JSON)
		}
	}
}

// TestRefusalsMatchPHP: what json_encode refuses, Go refuses with PHP's
// json_last_error_msg() text.
func TestRefusalsMatchPHP(t *testing.T) {
	c := loadJSONCases(t)
	for _, r := range c.RefusedStrings {
		in, err := base64.StdEncoding.DecodeString(r.InputBase64)
		if err != nil {
			t.Fatal(err)
		}
		var flags Flags
		if r.UnescapedUnicode {
			flags = UnescapedUnicode
		}
		got, err := AppendString(nil, string(in), flags)
		if (err == nil) != r.Encoded {
			t.Errorf("%q (flags %d): got %s, %v; PHP encoded: %v", in, flags, got, err, r.Encoded)
			continue
		}
		if err != nil && (err != ErrMalformedUTF8 || err.Error() != r.Error) {
			t.Errorf("%q: error %q, PHP said %q", in, err, r.Error)
		}
	}
	for _, r := range c.RefusedFloats {
		f := floatFromBits(t, r.Bits)
		got, err := AppendFloat(nil, f)
		if (err == nil) != r.Encoded || (err != nil && err.Error() != r.Error) {
			t.Errorf("%v: got %s, %v; PHP encoded: %v with %q", f, got, err, r.Encoded, r.Error)
		}
	}
}
