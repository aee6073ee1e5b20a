package payload

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/laraworker/laraworker/laravel/phpserialize"
)

func TestShapeOfFollowsTheVersions(t *testing.T) {
	cases := []struct {
		major, minor int
		want         Shape
	}{
		{8, 0, Shape8}, {8, 83, Shape8}, {9, 0, Shape8}, {9, 3, Shape8},
		{9, 4, Shape94}, {10, 50, Shape94}, {11, 0, Shape94}, {12, 10, Shape94},
		{12, 11, Shape12}, {12, 50, Shape12},
		{12, 51, Shape1251}, {12, 67, Shape1251},
		{13, 0, Shape13}, {13, 26, Shape13},
	}
	for _, c := range cases {
		if got := ShapeOf(c.major, c.minor); got != c.want {
			t.Errorf("ShapeOf(%d, %d) = %d, want %d", c.major, c.minor, got, c.want)
		}
	}
	if !Shape8.SerializesDefaults() || Shape94.SerializesDefaults() || Shape13.SerializesDefaults() {
		t.Error("only 8.x (and 9.0 to 9.3) serialize default-valued properties")
	}
}

// TestNewCommandMatches1050: Shape94 gives the bytes a real Laravel 10.50
// dispatch() wrote: the job's own properties, no default-valued trait
// property, 8.x's payload keys.
func TestNewCommandMatches1050(t *testing.T) {
	cases := []struct {
		file  string
		class string
		props []phpserialize.Entry
	}{
		{"noop.json", `App\Jobs\NoopJob`, []phpserialize.Entry{phpserialize.Public("record", phpserialize.Bool(true))}},
		{"fails.json", `App\Jobs\AlwaysFails`, []phpserialize.Entry{phpserialize.Public("note", phpserialize.String("fails ✗ 失敗"))}},
		{"unique.json", `App\Jobs\UniqueJob`, []phpserialize.Entry{phpserialize.Public("productId", phpserialize.Int(1))}},
	}
	for _, c := range cases {
		want, err := os.ReadFile("../../testdata/laravel-10.50/payloads/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		p, err := Parse(want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := BuildObjectPayload(NewCommand(c.class, c.props, Dispatch{Shape: Shape94}),
			BuildOptions{Shape: Shape94, UUID: p.UUID, Now: time.Unix(1796133012, 0)})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", c.file, got, want)
		}
	}
}
