package payload

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// The 12.67 fixtures' job classes, mirrored in Go as a user would mirror
// them: each decodes to exactly what the PHP class's handle() reads (the
// values its constructor set, testdata/laravel-12.67/app/Jobs), or fails
// with an error naming the property.

func command1267(t *testing.T, name string) *Command {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "laravel-12.67", "payloads", name))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := DecodeCommand(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cmd
}

// scalarJob mirrors App\Jobs\ScalarJob. Untagged fields match their
// camelCase property case-insensitively.
type scalarJob struct {
	Count    int64
	Big      int64
	Negative int64
	Ratio    float64
	Whole    float64
	Title    string
	URL      string `php:"url"`
	Empty    string
	Flag     bool
	Nothing  *string
	Tags     []string
	Meta     map[string]any
	// public int $untouchedDefault = 5: 9.4+ leaves it out of the payload.
	UntouchedDefault int `php:"untouchedDefault,default=5"`
	ChangedDefault   int `php:"changedDefault,default=5"`
	SecretNote       string
	PrivateCount     int
}

func TestDecode1267ScalarsWithDeclaredDefaults(t *testing.T) {
	var job scalarJob
	if err := command1267(t, "scalars.json").Decode(&job); err != nil {
		t.Fatal(err)
	}
	want := scalarJob{
		Count: 42, Big: math.MaxInt64, Negative: -7, Ratio: 0.1, Whole: 2, Title: "Grüße \"quoted\" \\ back\tslash\nnewline ✓ 日本",
		URL: "https://example.com/a/b?c=d", Empty: "", Flag: true, Tags: []string{"red", "green"},
		UntouchedDefault: 5, ChangedDefault: 6, SecretNote: "protected promoted", PrivateCount: 3,
	}
	if job.Count != want.Count || job.Big != want.Big || job.Negative != want.Negative || job.Ratio != want.Ratio ||
		job.Whole != want.Whole || job.Title != want.Title || job.URL != want.URL || job.Flag != want.Flag ||
		job.Nothing != nil || strings.Join(job.Tags, ",") != "red,green" || job.UntouchedDefault != 5 ||
		job.ChangedDefault != 6 || job.SecretNote != want.SecretNote || job.PrivateCount != 3 {
		t.Fatalf("decoded %+v", job)
	}
	if nested := job.Meta["nested"].(map[string]any); nested["k"] != int64(1) || nested["10"] != "ten" {
		t.Fatalf("meta: %v", job.Meta)
	}
}

// Without a declared default, the omitted property is an error that says
// what to do, not a silent zero.
func TestDecode1267OmittedDefaultIsAnError(t *testing.T) {
	var job struct {
		Count            int64
		UntouchedDefault int `php:"untouchedDefault"`
	}
	err := command1267(t, "scalars.json").Decode(&job)
	var de *phpserialize.DecodeError
	if !errors.As(err, &de) || de.Path != "untouchedDefault" || de.GoType != "int" ||
		!strings.Contains(err.Error(), `php:"untouchedDefault,default=<JSON>"`) {
		t.Fatalf("got %v", err)
	}
	// A typo in a tag is the same error, not a zero.
	var typo struct {
		Count int64 `php:"cuont"`
	}
	if err := command1267(t, "scalars.json").Decode(&typo); err == nil || !strings.Contains(err.Error(), `property "cuont"`) {
		t.Fatalf("a tag typo decoded: %v", err)
	}
}

// scalarDefaults mirrors the class's declared defaults with a method
// instead of tags.
type scalarDefaults struct {
	Count            int64
	UntouchedDefault int
	ChangedDefault   int
}

func (s *scalarDefaults) PHPDefaults() { s.UntouchedDefault, s.ChangedDefault = 5, 5 }

func TestDecode1267DefaultsFromAMethod(t *testing.T) {
	var job scalarDefaults
	if err := command1267(t, "scalars.json").Decode(&job); err != nil {
		t.Fatal(err)
	}
	if job.Count != 42 || job.UntouchedDefault != 5 || job.ChangedDefault != 6 {
		t.Fatalf("decoded %+v", job)
	}
}

// datesEnumsJob mirrors App\Jobs\DatesEnumsJob: Carbon, CarbonImmutable
// and DateTimeImmutable with their zones and microseconds; backed enums by
// case name.
type datesEnumsJob struct {
	When      time.Time
	Immutable time.Time
	Plain     time.Time
	Status    string
	Priority  phpserialize.EnumCase
	History   []string
}

func TestDecode1267DatesAndEnums(t *testing.T) {
	var job datesEnumsJob
	if err := command1267(t, "dates_enums.json").Decode(&job); err != nil {
		t.Fatal(err)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	if want := time.Date(2026, 3, 4, 5, 6, 7, 123456000, berlin); !job.When.Equal(want) || job.When.Location().String() != "Europe/Berlin" {
		t.Errorf("when = %s, want %s", job.When.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	}
	if want := time.Date(2026, 12, 31, 23, 59, 59, 0, time.UTC); !job.Immutable.Equal(want) {
		t.Errorf("immutable = %s", job.Immutable)
	}
	if job.Plain.Format(time.RFC3339) != "2026-01-02T03:04:05+05:30" {
		t.Errorf("plain = %s", job.Plain.Format(time.RFC3339))
	}
	if job.Status != "Paid" || job.Priority != (phpserialize.EnumCase{Class: `App\Enums\Priority`, Case: "High"}) ||
		strings.Join(job.History, ",") != "Pending,Paid,Paid" {
		t.Errorf("enums: %+v", job)
	}
	var wrong struct {
		When int64
	}
	if err := command1267(t, "dates_enums.json").Decode(&wrong); err == nil || !strings.Contains(err.Error(), `cannot decode PHP object Illuminate\Support\Carbon into Go int64`) {
		t.Errorf("a date into an int: %v", err)
	}
}

// modelJob mirrors App\Jobs\ModelJob: a model and an Eloquent collection
// arrive as ModelIdentifiers.
type modelJob struct {
	User   ModelIdentifier
	Others ModelIdentifier
	Reason string
}

func TestDecode1267Models(t *testing.T) {
	var job modelJob
	if err := command1267(t, "models.json").Decode(&job); err != nil {
		t.Fatal(err)
	}
	if job.User.Class != `App\Models\User` || job.User.ID != int64(1) || job.Others.IsCollection() == false || job.Reason != "welcome" {
		t.Fatalf("decoded %+v", job)
	}
	if ids, _ := job.Others.ID.([]any); len(ids) != 2 || ids[0] != int64(2) || ids[1] != int64(3) {
		t.Fatalf("collection ids %v", job.Others.ID)
	}
}
