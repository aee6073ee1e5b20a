package phpserialize

import (
	"errors"
	"math"
	"strings"
	"testing"
)

type modelRef struct {
	Class      string   `php:"class"`
	ID         int      `php:"id"`
	Relations  []string `php:"relations"`
	Connection string   `php:"connection"`
	Collection *string  `php:"collectionClass"`
}

type podcastOptions struct {
	Bitrate   uint16            `php:"bitrate"`
	Normalize bool              `php:"normalize"`
	Gain      float32           `php:"gain"`
	Format    []byte            `php:"format"`
	Chapters  map[int]string    `php:"chapters"`
	Headers   map[string]string `php:"headers"`
}

type podcastJob struct {
	PodcastID  int64          `php:"podcastId"`
	Podcast    modelRef       `php:"podcast"`
	APIToken   string         `php:"apiToken"`
	Tags       []string       `php:"tags"`
	Options    podcastOptions `php:"options"`
	Queue      *string        `php:"queue"`
	Delay      *int           `php:"delay"`
	Middleware []any          `php:"middleware"`
	Chained    []*Value       `php:"chained"`
	Timeout    float64        `php:"timeout"`
	Tries      uint8          `php:"tries"`
	BatchID    string         `php:"batchId"`
	Ignored    string         `php:"-"`
	Missing    string         `php:"notInPayload,optional"`
}

func TestDecodeJobCommand(t *testing.T) {
	v := mustUnserialize(t, readFixture(t, "job-command.ser"))
	job := podcastJob{Missing: "kept"}
	if err := Decode(v, &job); err != nil {
		t.Fatal(err)
	}
	if job.PodcastID != 4711 || job.Podcast.Class != `App\Models\Podcast` || job.Podcast.ID != 4711 ||
		strings.Join(job.Podcast.Relations, ",") != "episodes,episodes.guests,owner" || job.Podcast.Collection != nil {
		t.Errorf("podcast fields: %+v", job)
	}
	if job.APIToken != "tok\x00en-\xff-\U0001F399" {
		t.Errorf("private apiToken: %q", job.APIToken)
	}
	if len(job.Tags) != 4 || job.Tags[3] != "quote\";}" {
		t.Errorf("tags: %q", job.Tags)
	}
	o := job.Options
	if o.Bitrate != 192 || !o.Normalize || o.Gain != -3.5 || string(o.Format) != "mp3" ||
		o.Chapters[1800] != "Outro" || o.Headers["Accept"] != "audio/mpeg" {
		t.Errorf("options: %+v", o)
	}
	if job.Queue == nil || *job.Queue != "podcasts" || job.Delay == nil || *job.Delay != 30 {
		t.Errorf("queue/delay: %v %v", job.Queue, job.Delay)
	}
	if job.Middleware == nil || len(job.Middleware) != 0 {
		t.Errorf("middleware: %#v", job.Middleware)
	}
	if len(job.Chained) != 2 || !strings.HasPrefix(string(job.Chained[0].Str), `O:32:"App\Jobs\SendPodcastNotification"`) {
		t.Errorf("chained: %v", job.Chained)
	}
	if job.Timeout != 120.5 || job.Tries != 3 || job.BatchID == "" || job.Missing != "kept" {
		t.Errorf("rest: %+v", job)
	}
	// The chained command is itself a serialized job.
	next := mustUnserialize(t, job.Chained[0].Str)
	var notification struct {
		Podcast  modelRef `php:"podcast"`
		Channels []string `php:"channels"`
	}
	if err := Decode(next, &notification); err != nil || notification.Channels[1] != "slack" {
		t.Errorf("chained job: %+v %v", notification, err)
	}
}

func TestDecodeErrorsNamePathAndTypes(t *testing.T) {
	v := mustUnserialize(t, readFixture(t, "job-command.ser"))
	cases := []struct {
		out  any
		want string
	}{
		{&struct {
			X int `php:"batchId"`
		}{}, `phpserialize: property "batchId": cannot decode PHP string into Go int`},
		{&struct {
			O struct {
				B int8 `php:"bitrate"`
			} `php:"options"`
		}{}, `phpserialize: property "options.bitrate": PHP int 192 overflows Go int8`},
		{&struct {
			T []int `php:"tags"`
		}{}, `phpserialize: property "tags[0]": cannot decode PHP string into Go int`},
		{&struct {
			C []string `php:"chapters,optional"`
		}{}, ``}, // not present at top level, optional: no error
		{&struct {
			C []string `php:"chapters"`
		}{}, `phpserialize: property "chapters": not in the serialized value, and field C declares no default (Laravel 9.4+ leaves out properties that hold their declared default: tag it php:"chapters,default=<JSON>" with the PHP default, or php:"chapters,optional")`},
		{&struct {
			O struct {
				C []string `php:"chapters"`
			} `php:"options"`
		}{}, `phpserialize: property "options.chapters": PHP array with keys other than 0..n-1 cannot become Go []string`},
		{&struct {
			P string `php:"podcast"`
		}{}, `phpserialize: property "podcast": cannot decode PHP object Illuminate\Contracts\Database\ModelIdentifier into Go string`},
		{&struct {
			D int `php:"delay"`
		}{}, ``},
		{&struct {
			N uint `php:"podcastId"`
		}{}, ``},
	}
	for _, c := range cases {
		err := Decode(v, c.out)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
	neg := mustUnserialize(t, []byte(`a:1:{s:1:"n";i:-1;}`))
	var u struct {
		N uint64 `php:"n"`
	}
	if err := Decode(neg, &u); err == nil || !strings.Contains(err.Error(), "PHP int -1 overflows Go uint64") {
		t.Errorf("negative into uint: %v", err)
	}
	if err := Decode(neg, u); err == nil {
		t.Error("non-pointer accepted")
	}
}

func TestDecodeAmbiguousProperty(t *testing.T) {
	v := mustUnserialize(t, readFixture(t, "visibility.ser"))
	var out struct {
		Secret string `php:"secret"`
	}
	if err := Decode(v, &out); err == nil || !strings.Contains(err.Error(), `"secret": ambiguous`) {
		t.Fatalf("got %v", err)
	}
}

// stamp stands in for the Laravel types other files decode with the hook.
type stamp struct{ text string }

func (s *stamp) DecodePHP(v *Value) error {
	if v.Kind != KindString {
		return errors.New("want a string stamp")
	}
	s.text = "stamp:" + string(v.Str)
	return nil
}

func TestDecodeHook(t *testing.T) {
	v := mustUnserialize(t, []byte(`a:3:{s:1:"a";s:1:"x";s:1:"b";s:1:"y";s:1:"c";i:1;}`))
	var out struct {
		A stamp  `php:"a"`
		B *stamp `php:"b"`
	}
	if err := Decode(v, &out); err != nil || out.A.text != "stamp:x" || out.B.text != "stamp:y" {
		t.Fatalf("%+v %v", out, err)
	}
	var bad struct {
		C stamp `php:"c"`
	}
	err := Decode(v, &bad)
	if err == nil || err.Error() != `phpserialize: property "c": want a string stamp` {
		t.Fatalf("hook error: %v", err)
	}
}

func TestDecodeAnyAndFollowRefs(t *testing.T) {
	v := mustUnserialize(t, readFixture(t, "ref-shared-object.ser"))
	var out map[string]any
	if err := Decode(v, &out); err != nil {
		t.Fatal(err)
	}
	second, ok := out["second"].(map[string]any)
	if !ok || second["name"] != "shared" {
		t.Fatalf("second: %#v", out["second"])
	}
	list, ok := out["list"].([]any)
	if !ok || len(list) != 1 {
		t.Fatalf("list: %#v", out["list"])
	}
	n, err := Natural(mustUnserialize(t, readFixture(t, "numbers.ser")))
	if err != nil {
		t.Fatal(err)
	}
	nums := n.([]any)
	if nums[0] != int64(math.MaxInt64) || nums[5] != 0.1 {
		t.Fatalf("numbers: %#v", nums[:6])
	}
	vis, err := Natural(mustUnserialize(t, readFixture(t, "visibility.ser")))
	if err != nil {
		t.Fatal(err)
	}
	m := vis.(map[string]any)
	if m["prot"] != "q" || m["\x00Fixtures\\Child\x00secret"] != "child-secret" || m["\x00Fixtures\\Base\x00secret"] != "base-secret" {
		t.Fatalf("visibility: %#v", m)
	}
}

func TestDecodeCycleErrors(t *testing.T) {
	v := mustUnserialize(t, readFixture(t, "ref-self-array.ser"))
	var out any
	if err := Decode(v, &out); err == nil || !strings.Contains(err.Error(), "nesting deeper") {
		t.Fatalf("cycle: %v", err)
	}
	self := mustUnserialize(t, readFixture(t, "ref-self-object.ser"))
	var raw struct {
		Name string `php:"name"`
		Self *Value `php:"self"`
	}
	if err := Decode(self, &raw); err != nil || raw.Self != self || raw.Name != "me" {
		t.Fatalf("raw self: %+v %v", raw, err)
	}
}

// TestDecodeSharedReferencesStayCheap: each object refers twice to the one
// before it, so expanding references naively would visit 2^60 values.
func TestDecodeSharedReferencesStayCheap(t *testing.T) {
	const levels = 60
	in := `a:` + itoa(levels) + `:{i:0;O:8:"stdClass":0:{}`
	prev := 2 // slot of the previous object: the array is 1, object i is 3i
	for i := 1; i < levels; i++ {
		in += `i:` + itoa(i) + `;O:8:"stdClass":2:{s:1:"a";r:` + itoa(prev) + `;s:1:"b";r:` + itoa(prev) + `;}`
		prev = 3 * i
	}
	in += `}`
	v := mustUnserialize(t, []byte(in))
	if _, err := Natural(v); err != nil {
		t.Fatalf("Natural: %v", err)
	}
	type node struct {
		A *node `php:"a,optional"`
		B *node `php:"b,optional"`
	}
	var out []node
	err := Decode(v, &out)
	if err == nil || !strings.Contains(err.Error(), "references expand too far") {
		t.Fatalf("Decode into a tree type: %v", err)
	}
	// [R:X, R:X] inside X itself: a branching cycle.
	cyc := mustUnserialize(t, []byte(`a:1:{i:0;a:2:{i:0;R:2;i:1;R:2;}}`))
	if _, err := Natural(cyc); err == nil {
		t.Fatal("branching cycle converted")
	}
}

func TestDecodeCollectionsAsTheirItems(t *testing.T) {
	// collect(['a', 'b']) and collect(['x' => 1]) as PHP 8.2 serializes them.
	v := mustUnserialize(t, []byte(`a:2:{s:4:"list";O:29:"Illuminate\Support\Collection":2:{s:8:"`+"\x00*\x00"+`items";a:2:{i:0;s:1:"a";i:1;s:1:"b";}s:28:"`+"\x00*\x00"+`escapeWhenCastingToString";b:0;}s:3:"map";O:29:"Illuminate\Support\Collection":2:{s:8:"`+"\x00*\x00"+`items";a:1:{s:1:"x";i:1;}s:28:"`+"\x00*\x00"+`escapeWhenCastingToString";b:0;}}`))
	var out struct {
		List []string
		Map  map[string]int
	}
	if err := Decode(v, &out); err != nil {
		t.Fatal(err)
	}
	if strings.Join(out.List, ",") != "a,b" || out.Map["x"] != 1 {
		t.Fatalf("decoded %+v", out)
	}
}

func TestDecodeFieldMatching(t *testing.T) {
	v := mustUnserialize(t, []byte(`a:2:{s:9:"podcastId";i:7;s:5:"Title";s:1:"t";}`))
	var untagged struct {
		PodcastID int
		Title     string
	}
	if err := Decode(v, &untagged); err != nil || untagged.PodcastID != 7 || untagged.Title != "t" {
		t.Fatalf("untagged fields match case-insensitively: %+v %v", untagged, err)
	}
	var tagged struct {
		Title string `php:"title"` // PHP names are case-sensitive
	}
	if err := Decode(v, &tagged); err == nil || !strings.Contains(err.Error(), `property "title"`) {
		t.Fatalf("a tag matches its name exactly: %v", err)
	}
	var badTag struct {
		Title string `php:"Title,requried"`
	}
	if err := Decode(v, &badTag); err == nil || !strings.Contains(err.Error(), `unknown option "requried"`) {
		t.Fatalf("an unknown tag option: %v", err)
	}
	var badDefault struct {
		Other string `php:"other,default=hd"`
	}
	if err := Decode(v, &badDefault); err == nil || !strings.Contains(err.Error(), "default=hd is not a JSON literal") {
		t.Fatalf("a default that is not JSON: %v", err)
	}
	var defaults struct {
		Other []int `php:"other,default=[1,2]"`
	}
	if err := Decode(v, &defaults); err != nil || len(defaults.Other) != 2 || defaults.Other[1] != 2 {
		t.Fatalf("default=[1,2] (a literal with a comma): %+v %v", defaults, err)
	}
	// A PHP default written as json_encode writes it: an empty array is []
	// for a map too.
	var phpDefaults struct {
		Other map[string]string `php:"other,default=[]"`
		More  map[int]string    `php:"more,default=[\"a\",\"b\"]"`
	}
	if err := Decode(v, &phpDefaults); err != nil || phpDefaults.Other == nil || len(phpDefaults.Other) != 0 || phpDefaults.More[1] != "b" {
		t.Fatalf("default=[] for a map: %+v %v", phpDefaults, err)
	}
}

// TestDecodeDefaultPHP: a default_php= tag holds the default as
// serialize() writes it, for what JSON cannot say: a missing property
// becomes that value (INF, bytes, an enum in an array, an int that stays
// an int in an any); a present one is read from the value; a tag that is
// not serialize()'s output, or a default that does not fit, is an error.
func TestDecodeDefaultPHP(t *testing.T) {
	v := mustUnserialize(t, []byte(`O:3:"Job":1:{s:4:"seen";d:2.5;}`))
	var out struct {
		Seen  float64 `php:"seen,default_php=d:INF;"`
		Limit float64 `php:"limit,default_php=d:-INF;"`
		Raw   string  `php:"raw,default_php=s:3:\"a\x00\xff\";"`
		Mixed any     `php:"mixed,default_php=a:2:{i:0;E:10:\"Suit:Heart\";s:1:\"n\";i:7;}"`
		Ptr   *Value  `php:"ptr,default_php=i:3;"`
	}
	if err := Decode(v, &out); err != nil {
		t.Fatal(err)
	}
	if out.Seen != 2.5 || !math.IsInf(out.Limit, -1) || out.Raw != "a\x00\xff" || out.Ptr == nil || out.Ptr.Int != 3 {
		t.Errorf("decoded %+v", out)
	}
	m, ok := out.Mixed.(map[string]any)
	if e, isEnum := m["0"].(*Value); !ok || !isEnum || e.Case != "Heart" || m["n"] != int64(7) {
		t.Errorf("mixed %#v", out.Mixed)
	}
	var bad struct {
		X int `php:"x,default_php=i:3"`
	}
	if err := Decode(v, &bad); err == nil || !strings.Contains(err.Error(), "default_php=i:3 is not what serialize() writes") {
		t.Errorf("a default_php that is not serialize()'s: %v", err)
	}
	var misfit struct {
		X int `php:"x,default_php=s:1:\"a\";"`
	}
	if err := Decode(v, &misfit); err == nil || !strings.Contains(err.Error(), `default_php=s:1:"a"; does not fit Go int`) {
		t.Errorf("a default_php that does not fit: %v", err)
	}
}
