package onceset

import (
	"strconv"
	"strings"
	"testing"
)

func TestOnceForSaysEachTopicAndNameOnce(t *testing.T) {
	var o Set
	long := strings.Repeat("App\\Jobs\\", 40) // longer than OnceFor's stack buffer
	for _, name := range []string{`App\Jobs\A`, long} {
		if !o.OnceFor("norecord", name) {
			t.Fatalf("%q: first OnceFor said it was known", name)
		}
		if o.OnceFor("norecord", name) || o.Once("norecord\x00"+name) {
			t.Fatalf("%q: asked again, OnceFor or Once said it was new", name)
		}
		if !o.Has("norecord\x00" + name) {
			t.Fatalf("%q: Has does not see what OnceFor marked", name)
		}
	}
	if !o.OnceFor("record", `App\Jobs\A`) {
		t.Fatal("another topic with the same name was taken as known")
	}
}

func TestOnceStopsAtItsBound(t *testing.T) {
	var o Set
	for i := 0; i < max; i++ {
		if !o.OnceFor("class", strconv.Itoa(i)) {
			t.Fatalf("key %d of %d was not new", i, max)
		}
	}
	if o.OnceFor("class", "one more") || o.Once("one more") {
		t.Fatal("a key past the bound was remembered")
	}
}
