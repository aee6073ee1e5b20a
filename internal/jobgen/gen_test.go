package jobgen

import (
	"encoding/json"
	"go/format"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/phpclass"
)

// TestGenerate: a class's file is gofmt'ed Go with a field per data
// property (the framework's and the queue options left out), the tags and
// the declarations; bad input is an error.
func TestGenerate(t *testing.T) {
	str := &phpclass.Type{Text: "string", Names: []phpclass.TypeName{{Name: "string", Builtin: true}}}
	id := "productId"
	c := &phpclass.Class{Name: `App\Jobs\SyncProduct`, Interfaces: map[string]bool{"ShouldQueue": true, "ShouldBeUnique": true},
		UniqueIDProperty: &id,
		Properties: []phpclass.Property{
			{Name: "productId", Visibility: "public", Type: &phpclass.Type{Text: "int", Names: []phpclass.TypeName{{Name: "int", Builtin: true}}}, Promoted: true},
			{Name: "quality", Visibility: "protected", Type: str, HasDefault: true, DefaultJSONOK: true, Default: json.RawMessage(`"hd \"best\""`), DefaultPHP: `'hd "best"'`},
			{Name: "tries", Option: true, HasDefault: true, DefaultJSONOK: true, Default: json.RawMessage(`3`)},
			{Name: "queue", Framework: true},
		}}
	src, err := Generate(&phpclass.App{Version: "10.50.3"}, c, Options{Package: "sync"})
	if err != nil {
		t.Fatal(err)
	}
	if formatted, err := format.Source(src); err != nil || string(formatted) != string(src) {
		t.Fatalf("not gofmt'ed Go (%v):\n%s", err, src)
	}
	for _, want := range []string{
		"package sync\n",
		"(Laravel 10.50.3)",
		"ProductID int64 `php:\"productId\"`",
		"Quality string `php:\"quality,default=\\\"hd \\\\\\\"best\\\\\\\"\\\"\"`",
		"handlers.ShouldBeUnique(handlers.UniqueIDProperty(\"productId\")),",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("lacks %s:\n%s", want, src)
		}
	}
	for _, unwanted := range []string{"Tries", "Queue "} {
		if strings.Contains(string(src), unwanted) {
			t.Errorf("has %q (a queue option or the framework's):\n%s", unwanted, src)
		}
	}
	if _, err := Generate(nil, c, Options{Package: "func"}); err == nil {
		t.Error("a keyword as package name")
	}
	if _, err := Generate(nil, &phpclass.Class{Name: "X", Error: "no such class"}, Options{}); err == nil || !strings.Contains(err.Error(), "no such class") {
		t.Errorf("a class that was not read: %v", err)
	}
}
