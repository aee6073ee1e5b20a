package jobgen

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/phpclass"
)

func named(text string, nullable bool, names ...phpclass.TypeName) *phpclass.Type {
	return &phpclass.Type{Text: text, Nullable: nullable, Names: names}
}

func builtin(name string) phpclass.TypeName { return phpclass.TypeName{Name: name, Builtin: true} }

func ofKind(name, kind string) phpclass.TypeName {
	return phpclass.TypeName{Name: name, Kind: kind}
}

// TestTypeOf: each PHP type becomes the Go type every value PHP can hold
// in it decodes into.
func TestTypeOf(t *testing.T) {
	for _, tc := range []struct {
		typ  *phpclass.Type
		want string
	}{
		{nil, "any"},
		{named("int", false, builtin("int")), "int64"},
		{named("?int", true, builtin("int")), "*int64"},
		{named("float", false, builtin("float")), "float64"},
		{named("string", false, builtin("string")), "string"},
		{named("?string", true, builtin("string")), "*string"},
		{named("bool", false, builtin("bool")), "bool"},
		{named("array", false, builtin("array")), "any"},
		{named("?array", true, builtin("array")), "any"},
		{named("mixed", true, builtin("mixed")), "any"},
		{named("int|string", false, builtin("int"), builtin("string")), "any"},
		{named("string|int|null", true, builtin("string"), builtin("int"), builtin("null")), "any"},
		{named("Carbon\\Carbon", false, ofKind(`Carbon\Carbon`, "date")), "time.Time"},
		{named("?DateTimeImmutable", true, ofKind("DateTimeImmutable", "date")), "*time.Time"},
		{named("App\\Enums\\Status", false, ofKind(`App\Enums\Status`, "enum")), "string"},
		{named("?App\\Enums\\Status", true, ofKind(`App\Enums\Status`, "enum")), "*string"},
		{named("App\\Models\\User", false, ofKind(`App\Models\User`, "model")), "payload.ModelIdentifier"},
		{named("?App\\Models\\User", true, ofKind(`App\Models\User`, "model")), "*payload.ModelIdentifier"},
		{named("Illuminate\\Database\\Eloquent\\Collection", false, ofKind(`Illuminate\Database\Eloquent\Collection`, "model-collection")), "payload.ModelIdentifier"},
		{named("Illuminate\\Support\\Collection", false, ofKind(`Illuminate\Support\Collection`, "collection")), "payload.Collection"},
		{named("?Illuminate\\Support\\Collection", true, ofKind(`Illuminate\Support\Collection`, "collection")), "*payload.Collection"},
		{named("Closure", false, ofKind("Closure", "closure")), "*phpserialize.Value"},
		{named("App\\Dto\\Address", true, ofKind(`App\Dto\Address`, "object")), "*phpserialize.Value"},
	} {
		got := TypeOf(phpclass.Property{Name: "p", Type: tc.typ})
		if got.Expr != tc.want {
			text := "untyped"
			if tc.typ != nil {
				text = tc.typ.Text
			}
			t.Errorf("%s: %s, want %s", text, got.Expr, tc.want)
		}
	}
}

// TestDefaultJSON: a declared default becomes the default= literal for the
// Go type; enum cases their case name; one JSON cannot say, none.
func TestDefaultJSON(t *testing.T) {
	str := named("string", false, builtin("string"))
	enum := named("App\\Enums\\Status", false, ofKind(`App\Enums\Status`, "enum"))
	for _, tc := range []struct {
		p    phpclass.Property
		want string
		ok   bool
	}{
		{phpclass.Property{Type: str, HasDefault: true, DefaultJSONOK: true, Default: json.RawMessage(`"hd"`)}, `"hd"`, true},
		{phpclass.Property{Type: enum, HasDefault: true, DefaultJSONOK: true, Default: json.RawMessage(`{"enum":"App\\Enums\\Status","case":"Active"}`)}, `"Active"`, true},
		{phpclass.Property{Type: str, HasDefault: true, DefaultJSONOK: false}, "", false},
		{phpclass.Property{Type: str}, "", false},
	} {
		got, ok := defaultJSON(tc.p, TypeOf(tc.p))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %q %v, want %q %v", tc.p.Default, got, ok, tc.want, tc.ok)
		}
	}
}

// TestTypeIn: without SerializesModels models and their collections
// travel whole; a property the constructor may leave unset is optional
// and nilable; each type a plainer Go type fails on names the risk.
func TestTypeIn(t *testing.T) {
	sm := &phpclass.Class{Traits: map[string]bool{"SerializesModels": true}}
	plain := &phpclass.Class{}
	model := named("App\\Models\\User", false, ofKind(`App\Models\User`, "model"))
	models := named("Illuminate\\Database\\Eloquent\\Collection", false, ofKind(`Illuminate\Database\Eloquent\Collection`, "model-collection"))
	coll := named("Illuminate\\Support\\Collection", false, ofKind(`Illuminate\Support\Collection`, "collection"))
	for _, tc := range []struct {
		c        *phpclass.Class
		p        phpclass.Property
		want     string
		optional bool
		risk     string
	}{
		{sm, phpclass.Property{Type: model}, "payload.ModelIdentifier", false, ""},
		{plain, phpclass.Property{Type: model}, "*phpserialize.Value", false, "the model arrives whole"},
		{sm, phpclass.Property{Type: models}, "payload.ModelIdentifier", false, ""},
		{plain, phpclass.Property{Type: models}, "payload.Collection", false, "the collection arrives whole"},
		{sm, phpclass.Property{Type: coll}, "payload.Collection", false, "arrives as a ModelIdentifier of their class and keys"},
		{plain, phpclass.Property{Type: coll}, "payload.Collection", false, ""},
		{sm, phpclass.Property{Type: named("int", false, builtin("int")), MayBeUninitialized: true}, "*int64", true, "a job may leave it out"},
		{sm, phpclass.Property{Type: coll, MayBeUninitialized: true}, "*payload.Collection", true, "a job may leave it out"},
		{sm, phpclass.Property{Type: named("array", false, builtin("array")), MayBeUninitialized: true}, "any", true, "a job may leave it out"},
		{sm, phpclass.Property{Type: named("float", false, builtin("float")), HasDefault: true, DefaultPHP: "INF"}, "float64", false, "its default INF, which JSON cannot say"},
		{sm, phpclass.Property{Type: named("float", false, builtin("float")), HasDefault: true, DefaultPHP: "NAN"}, "float64", false, ""},
		{sm, phpclass.Property{Type: named("App\\Gone", false, ofKind(`App\Gone`, "missing"))}, "*phpserialize.Value", false, "does not load in the app"},
		{sm, phpclass.Property{Type: named("string", false, builtin("string"))}, "string", false, ""},
	} {
		got := TypeIn(tc.c, tc.p)
		if got.Expr != tc.want || got.Optional != tc.optional || (tc.risk == "") != (got.Risk == "") || !strings.Contains(got.Risk, tc.risk) {
			t.Errorf("%s (SerializesModels %v, uninitialised %v): %s optional %v, risk %q; want %s optional %v, risk with %q",
				tc.p.Type.Text, tc.c.Uses("SerializesModels"), tc.p.MayBeUninitialized, got.Expr, got.Optional, got.Risk, tc.want, tc.optional, tc.risk)
		}
	}
}

// TestDefaultPHP: a default JSON cannot say as the payload holds it (INF,
// an enum inside an array, numbers in an any) goes to default_php=.
func TestDefaultPHP(t *testing.T) {
	arr := named("array", false, builtin("array"))
	for _, tc := range []struct {
		p        phpclass.Property
		json, ph string
	}{
		{phpclass.Property{Type: named("float", false, builtin("float")), HasDefault: true, DefaultSerialized: []byte("d:INF;")}, "", "d:INF;"},
		{phpclass.Property{Type: arr, HasDefault: true, DefaultJSONOK: true, Default: json.RawMessage(`[{"enum":"App\\Enums\\Status","case":"Active"}]`),
			DefaultSerialized: []byte(`a:1:{i:0;E:23:"App\Enums\Status:Active";}`)}, "", `a:1:{i:0;E:23:"App\Enums\Status:Active";}`},
		{phpclass.Property{Type: arr, HasDefault: true, DefaultJSONOK: true, Default: json.RawMessage(`{"a":1}`), DefaultSerialized: []byte(`a:1:{s:1:"a";i:1;}`)}, "", `a:1:{s:1:"a";i:1;}`},
		{phpclass.Property{Type: arr, HasDefault: true, DefaultJSONOK: true, Default: json.RawMessage(`["x"]`), DefaultSerialized: []byte(`a:1:{i:0;s:1:"x";}`)}, `["x"]`, ""},
		{phpclass.Property{Type: named("int", false, builtin("int")), HasDefault: true, DefaultJSONOK: true, Default: json.RawMessage(`5`), DefaultSerialized: []byte(`i:5;`)}, `5`, ""},
	} {
		gt := TypeOf(tc.p)
		j, _ := defaultJSON(tc.p, gt)
		ph, _ := defaultPHP(tc.p, gt)
		if j != tc.json || ph != tc.ph {
			t.Errorf("%s: default=%q default_php=%q, want %q %q", tc.p.Default, j, ph, tc.json, tc.ph)
		}
	}
}
