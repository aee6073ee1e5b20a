package phpserialize

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestTimeMatchesPHP reads DateTime and DateTimeImmutable objects of every
// timezone type and expects the instant and UTC offset PHP itself reported
// for them (testdata/serialized/dates.json).
func TestTimeMatchesPHP(t *testing.T) {
	var want map[string]struct {
		Unix   int64 `json:"unix"`
		Micro  int   `json:"micro"`
		Offset int   `json:"offset"`
	}
	if err := json.Unmarshal(readFixture(t, "dates.json"), &want); err != nil {
		t.Fatal(err)
	}
	dates := mustUnserialize(t, readFixture(t, "dates.ser"))
	if len(dates.Entries) != len(want) || len(want) == 0 {
		t.Fatalf("%d dates, %d expectations", len(dates.Entries), len(want))
	}
	for _, e := range dates.Entries {
		w := want[e.Key.Str]
		got, err := Time(e.Value)
		if err != nil {
			t.Errorf("%s: %v", e.Key.Str, err)
			continue
		}
		_, offset := got.Zone()
		if got.Unix() != w.Unix || got.Nanosecond() != w.Micro*1000 || offset != w.Offset {
			t.Errorf("%s: got %v (unix %d, offset %d), PHP: unix %d.%06d offset %d",
				e.Key.Str, got, got.Unix(), offset, w.Unix, w.Micro, w.Offset)
		}
	}
}

func TestTimeRejectsWhatIsNotADate(t *testing.T) {
	cases := map[string]*Value{
		`want a DateTime object, got string`:           String("2026-01-01"),
		`want a DateTime object, got nothing`:          nil,
		`property "date": no such property`:            Object("stdClass"),
		`DateTime property "date": want a string`:      Object("DateTime", Public("date", Int(5)), Public("timezone", String("UTC"))),
		`DateTime: unknown time zone "Mars/Olympus"`:   Object("DateTime", Public("date", String("2026-01-01 00:00:00.000000")), Public("timezone", String("Mars/Olympus"))),
		`DateTime: date "2026-01-01" is not Y-m-d H:i`: Object("DateTime", Public("date", String("2026-01-01")), Public("timezone", String("UTC"))),
	}
	for want, v := range cases {
		if _, err := Time(v); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want an error containing %q", err, want)
		}
	}
}

func TestEnumCase(t *testing.T) {
	var out struct {
		Suit EnumCase `php:"0"`
	}
	v := mustUnserialize(t, readFixture(t, "enum-twice.ser"))
	if err := Decode(v, &out); err != nil || out.Suit != (EnumCase{Class: `Fixtures\Suit`, Case: "Hearts"}) {
		t.Fatalf("%+v %v", out, err)
	}
	var bad EnumCase
	if err := bad.DecodePHP(String("Hearts")); err == nil || !strings.Contains(err.Error(), "want an enum, got string") {
		t.Fatalf("string as enum: %v", err)
	}
}
