package classaudit

import (
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/phpclass"
)

func ptr(s string) *string { return &s }

func find(t *testing.T, r ClassReport, name string) Item {
	t.Helper()
	for _, it := range r.Items {
		if it.Name == name {
			return it
		}
	}
	t.Fatalf("%s: no item %q in %+v", r.Class, name, r.Items)
	return Item{}
}

func testApp(classes ...phpclass.Class) *phpclass.App {
	return &phpclass.App{Version: "10.50.0", AppDir: "/app", Classes: classes,
		Cache: phpclass.Cache{Default: ptr("redis"), Stores: map[string]*string{"redis": ptr("redis"), "files": ptr("file")}}}
}

// TestAuditWhatSourceCannotSay: middleware() that is not a literal list,
// a list item audit cannot name, a uniqueVia() store it cannot read before
// 11.39: each is named as not carried over, never silently dropped.
func TestAuditWhatSourceCannotSay(t *testing.T) {
	app := testApp(
		phpclass.Class{Name: `App\Jobs\A`, File: "/app/app/Jobs/A.php", Interfaces: map[string]bool{"ShouldQueue": true},
			Middleware: &phpclass.Middleware{Parsed: false, Why: "it decides what to return at run time (several returns or conditions)"}},
		phpclass.Class{Name: `App\Jobs\B`, Interfaces: map[string]bool{"ShouldQueue": true, "ShouldBeUnique": true},
			Methods:    map[string]phpclass.Method{"uniqueVia": {}, "displayName": {}},
			UniqueVia:  &phpclass.UniqueVia{Expr: "Cache::store($this->store)"},
			Middleware: &phpclass.Middleware{Parsed: true, Items: []phpclass.MiddlewareItem{{Kind: "unknown", Expr: "...$this->extra", Why: "spread from another value"}}}},
		phpclass.Class{Name: `App\Jobs\C`, Interfaces: map[string]bool{"ShouldQueue": true, "ShouldBeUnique": true},
			Methods: map[string]phpclass.Method{"uniqueVia": {}}, UniqueVia: &phpclass.UniqueVia{Store: ptr("files"), Expr: "Cache::store('files')"}},
		phpclass.Class{Name: `App\Jobs\D`, Error: "no such class (the app's autoloader does not find it)"},
		phpclass.Class{Name: `App\Jobs\E`},
	)
	r := Audit(app)
	if r.Lost != 4 || r.Unreadable != 1 {
		t.Errorf("lost %d, unreadable %d; want 4 and 1", r.Lost, r.Unreadable)
	}
	a, b, c, e := r.Classes[0], r.Classes[1], r.Classes[2], r.Classes[4]
	if a.File != "app/Jobs/A.php" {
		t.Errorf("file %q, want it relative to the app", a.File)
	}
	if it := find(t, a, "middleware()"); it.Verdict != Lost || !strings.Contains(it.How, "at run time") {
		t.Errorf("unparsed middleware(): %+v", it)
	}
	if it := find(t, b, "?"); it.Verdict != Lost || !strings.Contains(it.How, "spread") {
		t.Errorf("unknown middleware: %+v", it)
	}
	if it := find(t, b, "ShouldBeUnique"); it.Verdict != Lost || !strings.Contains(it.How, "Cache::store($this->store)") {
		t.Errorf("unreadable uniqueVia() on 10.50: %+v", it)
	}
	if it := find(t, b, "displayName()"); it.Verdict != Go || !strings.Contains(it.How, "register the Go handler under that name") {
		t.Errorf("displayName(): %+v", it)
	}
	if it := find(t, c, "ShouldBeUnique"); it.Verdict != Lost || !strings.Contains(it.How, "file driver") {
		t.Errorf("a lock in a file store: %+v", it)
	}
	if it := find(t, e, "ShouldQueue"); it.Verdict != PHP {
		t.Errorf("a class that is not queued: %+v", it)
	}
	if r.Classes[3].Error == "" || len(r.Classes[3].Items) != 0 {
		t.Errorf("unreadable class: %+v", r.Classes[3])
	}
}

// TestVerdictText: the words the table prints.
func TestVerdictText(t *testing.T) {
	for v, want := range map[Verdict]string{Go: "Go", GoDeclared: "Go, when declared", Shared: "Go, shared with PHP",
		Bridge: "PHP through the bridge", PHP: "PHP", Lost: "will not carry over"} {
		if v.Text() != want {
			t.Errorf("%s: %q", v, v.Text())
		}
	}
}

// TestDeleteWhenMissingModelsAttribute: #[DeleteWhenMissingModels] counts
// from Laravel 11.3; before, Laravel ignores it and so does Go.
func TestDeleteWhenMissingModelsAttribute(t *testing.T) {
	c := phpclass.Class{Name: `App\Jobs\A`, Interfaces: map[string]bool{"ShouldQueue": true},
		Attributes: []phpclass.Attribute{{Name: `Illuminate\Queue\Attributes\DeleteWhenMissingModels`}}}
	app := testApp(c)
	app.Version = "11.2.0"
	if it := find(t, AuditClass(app, &app.Classes[0]), "#[DeleteWhenMissingModels]"); it.Verdict != Go || !strings.Contains(it.How, "ignores it") {
		t.Errorf("11.2: %+v", it)
	}
	app.Version = "11.3.0"
	if it := find(t, AuditClass(app, &app.Classes[0]), "deleteWhenMissingModels"); it.Verdict != GoDeclared || it.Declared != "#[DeleteWhenMissingModels]" {
		t.Errorf("11.3: %+v", it)
	}
}

// TestAuditAttributeEdges: #[DebounceFor] when the default cache store is
// one Go cannot read (its jobs go back to PHP), with a $debounceId default
// the payload leaves out (declare it), on a Laravel that does not read it
// yet (13.5); an attribute of Illuminate\Queue\Attributes this laraworker
// does not know is named as not carried over, never skipped.
func TestAuditAttributeEdges(t *testing.T) {
	debounced := func(props ...phpclass.Property) phpclass.Class {
		return phpclass.Class{Name: `App\Jobs\D`, Interfaces: map[string]bool{"ShouldQueue": true}, Properties: props,
			Attributes: []phpclass.Attribute{{Name: `Illuminate\Queue\Attributes\DebounceFor`, Args: []byte(`[3]`)},
				{Name: `Illuminate\Queue\Attributes\Batched`, Args: []byte(`{"0":"x","size":2}`)}}}
	}
	app := testApp(debounced()) // default store redis
	app.Version = "13.26.1"
	r := AuditClass(app, &app.Classes[0])
	if it := find(t, r, "#[DebounceFor]"); it.Verdict != Go || it.Declared != "#[DebounceFor(3)]" {
		t.Errorf("redis store: %+v", it)
	}
	if it := find(t, r, "#[Batched]"); it.Verdict != Lost || it.Declared != `#[Batched("x", size: 2)]` || r.Lost != 1 {
		t.Errorf("unknown attribute: %+v (lost %d)", it, r.Lost)
	}
	app.Cache.Default = ptr("files")
	if it := find(t, AuditClass(app, &app.Classes[0]), "#[DebounceFor]"); it.Verdict != PHP || !strings.Contains(it.How, "file driver") {
		t.Errorf("file store: %+v", it)
	}
	app = testApp(debounced(phpclass.Property{Name: "debounceId", Visibility: "public", HasDefault: true, DefaultPHP: "'all'"}))
	app.Version = "13.26.1"
	if it := find(t, AuditClass(app, &app.Classes[0]), "#[DebounceFor]"); it.Verdict != GoDeclared || !strings.Contains(it.How, "'all'") {
		t.Errorf("$debounceId with a default: %+v", it)
	}
	app.Version = "13.5.0"
	if it := find(t, AuditClass(app, &app.Classes[0]), "#[DebounceFor]"); it.Verdict != Go || !strings.Contains(it.How, "ignores it") {
		t.Errorf("13.5: %+v", it)
	}
}
