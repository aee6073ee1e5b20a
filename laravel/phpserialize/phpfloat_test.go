package phpserialize

import (
	"encoding/hex"
	"encoding/json"
	"math"
	"testing"
)

// TestFloatFormattingMatchesPHP compares every float in the PHP-generated
// manifest (edge cases, powers of ten around the exponent thresholds and
// 2000 random bit patterns) with PHP's serialize() text, both ways.
func TestFloatFormattingMatchesPHP(t *testing.T) {
	var manifest []struct {
		PHP  string `json:"php"`
		Bits string `json:"bits"`
	}
	if err := json.Unmarshal(readFixture(t, "floats.json"), &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest) < 2000 {
		t.Fatalf("manifest has only %d floats", len(manifest))
	}
	for _, m := range manifest {
		raw, err := hex.DecodeString(m.Bits)
		if err != nil || len(raw) != 8 {
			t.Fatalf("bad bits %q", m.Bits)
		}
		var bits uint64
		for _, b := range raw {
			bits = bits<<8 | uint64(b)
		}
		f := math.Float64frombits(bits)
		if got := string(AppendPHPFloat(nil, f)); got != m.PHP {
			t.Errorf("bits %s: got %s, PHP wrote %s", m.Bits, got, m.PHP)
		}
		v := mustUnserialize(t, []byte("d:"+m.PHP+";"))
		if !sameFloat(v.Float, f) || len(v.Str) != 0 {
			t.Errorf("d:%s; decoded to %v (kept text %q), want bits %s", m.PHP, v.Float, v.Str, m.Bits)
		}
	}
}

func TestFloatExampleFromIssue(t *testing.T) {
	want := "a:10:{i:0;d:1000000000000000;i:1;d:10000000000000000;i:2;d:1.0E+17;i:3;d:0.30000000000000004;i:4;d:1.5E-7;i:5;d:-0;i:6;d:1.0E+25;i:7;d:2;i:8;d:0.0001;i:9;d:100;}"
	if got := string(readFixture(t, "floats-example.ser")); got != want {
		t.Fatalf("fixture differs from the issue's PHP output: %s", got)
	}
	tenth, fifth := 0.1, 0.2 // variables: Go constant arithmetic would be exact
	v := List(Float(1e15), Float(1e16), Float(1e17), Float(tenth+fifth), Float(1.5e-7), Float(math.Copysign(0, -1)),
		Float(1e25), Float(2), Float(0.0001), Float(100))
	if got := string(mustSerialize(t, v)); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestEditedFloatDropsKeptText(t *testing.T) {
	v := mustUnserialize(t, []byte("d:0.10;"))
	if string(v.Str) != "0.10" {
		t.Fatalf("kept text %q", v.Str)
	}
	v.Float = 0.25
	if got := string(mustSerialize(t, v)); got != "d:0.25;" {
		t.Fatalf("after edit: %s", got)
	}
	i := mustUnserialize(t, []byte("i:+5;"))
	i.Int = 6
	if got := string(mustSerialize(t, i)); got != "i:6;" {
		t.Fatalf("after int edit: %s", got)
	}
}

// TestFloatParsingMatchesPHP replays what PHP's unserialize() accepted after
// "d:" and the float it produced; accepted text must also round-trip.
func TestFloatParsingMatchesPHP(t *testing.T) {
	var cases []struct {
		Text string `json:"text"`
		OK   bool   `json:"ok"`
		Bits string `json:"bits"`
	}
	if err := json.Unmarshal(readFixture(t, "float-parse.json"), &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		in := "d:" + c.Text + ";"
		v, err := Unserialize([]byte(in))
		if (err == nil) != c.OK {
			t.Errorf("%q: error %v, PHP accepted: %v", in, err, c.OK)
			continue
		}
		if err != nil {
			continue
		}
		if got := hexBits(v.Float); got != c.Bits && !(math.IsNaN(v.Float) && c.Text == "NAN") {
			t.Errorf("%q: bits %s, PHP %s", in, got, c.Bits)
		}
		if out := string(mustSerialize(t, v)); out != in {
			t.Errorf("%q: round trip %q", in, out)
		}
	}
}

func hexBits(f float64) string {
	var b [8]byte
	bits := math.Float64bits(f)
	for i := range b {
		b[i] = byte(bits >> (56 - 8*i))
	}
	return hex.EncodeToString(b[:])
}
