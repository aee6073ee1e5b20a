package jobgen

import (
	"encoding/json"
	"testing"

	"github.com/laraworker/laraworker/phpclass"
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
		{named("Illuminate\\Support\\Collection", false, ofKind(`Illuminate\Support\Collection`, "collection")), "[]any"},
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
