package payload

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
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
	Retry []struct {
		Raw     string `json:"raw"`
		Retried string `json:"retried"`
	} `json:"retry"`
}

func loadJSONCases(t *testing.T) phpJSONCases {
	t.Helper()
	raw, err := os.ReadFile("../testdata/json/cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var c phpJSONCases
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Strings) == 0 || len(c.Floats) == 0 || len(c.Retry) == 0 {
		t.Fatal("cases.json is missing cases")
	}
	return c
}

func TestPHPJSONStringsMatchPHP(t *testing.T) {
	for _, c := range loadJSONCases(t).Strings {
		in, err := base64.StdEncoding.DecodeString(c.InputBase64)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendPHPString(nil, in, true)
		if err != nil || string(got) != c.UnescapedUnicode {
			t.Errorf("%q with JSON_UNESCAPED_UNICODE: got %s (%v), PHP wrote %s", in, got, err, c.UnescapedUnicode)
		}
		got, err = appendPHPString(nil, in, false)
		if err != nil || string(got) != c.Default {
			t.Errorf("%q without flags: got %s (%v), PHP wrote %s", in, got, err, c.Default)
		}
	}
}

func TestPHPJSONFloatsMatchPHP(t *testing.T) {
	for _, c := range loadJSONCases(t).Floats {
		bits, err := hex.DecodeString(c.Bits)
		if err != nil {
			t.Fatal(err)
		}
		f := math.Float64frombits(binary.BigEndian.Uint64(bits))
		got, err := appendPHPFloat(nil, f)
		if err != nil || string(got) != c.JSON {
			t.Errorf("%v: got %s (%v), PHP wrote %s", f, got, err, c.JSON)
		}
	}
}

func TestPHPJSONRejectsInvalidUTF8(t *testing.T) {
	if _, err := appendPHPString(nil, []byte("bad \xff byte"), true); !errors.Is(err, ErrMalformedUTF8) {
		t.Fatalf("want ErrMalformedUTF8, got %v", err)
	}
}

func TestReencodeLikeRetryMatchesQueueRetry(t *testing.T) {
	for _, c := range loadJSONCases(t).Retry {
		got, err := ReencodeLikeRetry([]byte(c.Raw), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.Raw, err)
		}
		if string(got) != c.Retried {
			t.Errorf("retry re-encoding differs from PHP\n got: %s\nwant: %s", got, c.Retried)
		}
	}
}

func TestReencodeLikeRetryRefreshesRetryUntil(t *testing.T) {
	until := int64(1900000000)
	got, err := ReencodeLikeRetry([]byte(`{"uuid":"a","retryUntil":5,"data":{}}`), &until)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"uuid":"a","retryUntil":1900000000,"data":[]}`; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
