package jobgen

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/laraworker/laraworker/internal/phpclass"
)

// GoType is the Go type a property decodes into, by phpserialize.Decode's
// rules, chosen so that every value PHP can hold in the property decodes
// as Laravel serializes it: what the declared type does not pin down
// (array, mixed, untyped, unions) becomes any.
type GoType struct {
	// Expr is the type as Go source, e.g. "*time.Time".
	Expr string
	// Imports are the packages Expr needs.
	Imports []string
	// Note says what the PHP value is when Expr alone does not (an enum's
	// class, a model, an untyped property).
	Note string
	// Lost is set when Go can hold the value but never use it as PHP does
	// (a closure).
	Lost bool
	// Optional: the property may be missing from a job although it has
	// no default (uninitialised): the field is tagged optional, and nil
	// then.
	Optional bool
	// Risk names what arrives that a plainer Go type for the declaration
	// fails on (a collection that arrives as a ModelIdentifier, a model
	// that arrives whole, a property left out), "" when the declaration
	// says it all.
	Risk string
}

const (
	importTime     = "time"
	importPayload  = "github.com/laraworker/laraworker/laravel/payload"
	importPHPValue = "github.com/laraworker/laraworker/laravel/phpserialize"
)

// TypeOf returns the Go type for a property of a class that uses
// SerializesModels (every job class of Laravel 11+, which brings it with
// Queueable).
func TypeOf(p phpclass.Property) GoType { return typeOf(p, true) }

// TypeIn returns the Go type for a property of c: without
// SerializesModels, models and their collections travel whole.
func TypeIn(c *phpclass.Class, p phpclass.Property) GoType {
	return typeOf(p, c == nil || c.Uses("SerializesModels"))
}

func typeOf(p phpclass.Property, serializesModels bool) GoType {
	gt := declaredType(p.Type, serializesModels)
	if p.MayBeUninitialized {
		gt.Optional = true
		if !nilable(gt.Expr) {
			gt.Expr = "*" + gt.Expr
		}
		gt.Note = joinNote(gt.Note, "nil when it was never set: the constructor does not always set it, and PHP leaves an uninitialised property out of the job")
		gt.Risk = joinNote(gt.Risk, "a job may leave it out (uninitialised: the constructor does not always set it): a field that is neither optional nor nilable fails on such a job")
	}
	// NAN !== NAN: a property holding NAN is never left out as holding its default.
	if p.HasDefault && !p.DefaultJSONOK && p.DefaultPHP != "NAN" {
		gt.Risk = joinNote(gt.Risk, "left out of the job while it holds its default "+p.DefaultPHP+", which JSON cannot say: a default= tag cannot hold it (gen writes default_php=)")
	}
	return gt
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// declaredType maps the declared type (nil: untyped).
func declaredType(t *phpclass.Type, serializesModels bool) GoType {
	if t == nil {
		return GoType{Expr: "any", Note: "untyped in PHP"}
	}
	n, ok := t.Single()
	if !ok {
		return GoType{Expr: "any", Note: "PHP " + t.Text + ": any of these"}
	}
	base := baseType(n, serializesModels)
	if t.Nullable && !nilable(base.Expr) {
		base.Expr = "*" + base.Expr
	}
	return base
}

// baseType maps one non-null PHP type.
func baseType(n phpclass.TypeName, serializesModels bool) GoType {
	if n.Builtin {
		return builtinType(n)
	}
	switch n.Kind {
	case "date":
		return GoType{Expr: "time.Time", Imports: []string{importTime}}
	case "enum":
		return GoType{Expr: "string", Note: "the case name" + enumCases(n)}
	case "model", "model-collection", "collection":
		return modelType(n, serializesModels)
	case "closure":
		return GoType{Expr: "*phpserialize.Value", Imports: []string{importPHPValue}, Note: n.Name + ": PHP code Go cannot run", Lost: true}
	case "missing":
		return GoType{Expr: "*phpserialize.Value", Imports: []string{importPHPValue}, Note: "a PHP " + n.Name + ", a class the app does not load",
			Risk: "its class " + n.Name + " does not load in the app: nobody can tell what its objects hold"}
	}
	return GoType{Expr: "*phpserialize.Value", Imports: []string{importPHPValue}, Note: "a PHP " + n.Name + ": decode it with phpserialize.Decode into a type of yours"}
}

func builtinType(n phpclass.TypeName) GoType {
	switch strings.ToLower(n.Name) {
	case "int":
		return GoType{Expr: "int64"}
	case "float":
		return GoType{Expr: "float64"}
	case "string":
		return GoType{Expr: "string"}
	case "bool", "true", "false":
		return GoType{Expr: "bool"}
	case "array", "iterable":
		return GoType{Expr: "any", Note: "a PHP array: []any when it is a list, map[string]any otherwise; narrow it if you know its shape"}
	case "object":
		return GoType{Expr: "*phpserialize.Value", Imports: []string{importPHPValue}, Note: "any PHP object"}
	}
	return GoType{Expr: "any"} // mixed, null
}

// modelType maps models and collections as SerializesModels leaves them:
// a model (QueueableEntity) and an Eloquent collection
// (QueueableCollection) become a ModelIdentifier; a property declared as
// a plain Collection holds either kind of collection. Without
// SerializesModels every object travels whole.
func modelType(n phpclass.TypeName, serializesModels bool) GoType {
	collection := GoType{Expr: "payload.Collection", Imports: []string{importPayload}}
	switch {
	case n.Kind == "collection" && serializesModels:
		collection.Note = "a collection of Eloquent models arrives as their class and keys (Models), any other as its items (Items)"
		collection.Risk = "a collection of Eloquent models (User::all(), a query's get()) arrives as a ModelIdentifier of their class and keys, any other as the collection object with its items: a slice or map field fails on the first, a payload.ModelIdentifier on the second"
		return collection
	case n.Kind == "collection":
		collection.Note = "the collection object with its items (the class does not use SerializesModels: models in it travel whole)"
		return collection
	case !serializesModels:
		collection.Note = "the collection object with its models whole (the class does not use SerializesModels)"
		whole := "arrives whole, not as a ModelIdentifier (the class does not use SerializesModels): a payload.ModelIdentifier field fails"
		if n.Kind == "model" {
			return GoType{Expr: "*phpserialize.Value", Imports: []string{importPHPValue}, Note: "the model object whole, attributes and all (the class does not use SerializesModels)", Risk: "the model " + whole}
		}
		collection.Risk = "the collection " + whole
		return collection
	case n.Kind == "model":
		return GoType{Expr: "payload.ModelIdentifier", Imports: []string{importPayload}, Note: "the model's class and key"}
	}
	return GoType{Expr: "payload.ModelIdentifier", Imports: []string{importPayload}, Note: "the models' class and keys, ID a list"}
}

func enumCases(n phpclass.TypeName) string {
	if len(n.EnumCases) == 0 {
		return ""
	}
	return ": " + strings.Join(n.EnumCases, ", ")
}

// nilable reports whether a Go type already holds PHP's null.
func nilable(expr string) bool {
	return expr == "any" || strings.HasPrefix(expr, "*") || strings.HasPrefix(expr, "[]") || strings.HasPrefix(expr, "map[")
}

// defaultJSON is the property's declared default as the JSON a default=
// tag holds for the Go type, false when there is none or JSON cannot say
// it as the payload would hold it: INF, bytes, an enum inside an array, or
// numbers in an any, which JSON makes float64 where the payload's ints are
// int64 (defaultPHP says those).
func defaultJSON(p phpclass.Property, gt GoType) (string, bool) {
	if !p.HasDefault || !p.DefaultJSONOK || len(p.Default) == 0 {
		return "", false
	}
	var enum struct {
		Enum string `json:"enum"`
		Case string `json:"case"`
	}
	if strings.TrimPrefix(gt.Expr, "*") == "string" && json.Unmarshal(p.Default, &enum) == nil && enum.Enum != "" {
		b, _ := json.Marshal(enum.Case)
		return string(b), true
	}
	if len(p.DefaultSerialized) > 0 && (hasEnum(p.Default) || gt.Expr == "any" && hasNumber(string(p.Default))) {
		return "", false
	}
	return string(p.Default), true
}

// defaultPHP is the declared default as serialize() wrote it, for a
// default_php= tag, when defaultJSON cannot say it.
func defaultPHP(p phpclass.Property, gt GoType) (string, bool) {
	if _, ok := defaultJSON(p, gt); ok || !p.HasDefault || len(p.DefaultSerialized) == 0 {
		return "", false
	}
	return string(p.DefaultSerialized), true
}

// hasEnum reports whether a default's JSON holds an enum case (the
// reflection writes them as {"enum": class, "case": name}).
func hasEnum(def json.RawMessage) bool {
	var v any
	if json.Unmarshal(def, &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case []any:
			return slices.ContainsFunc(v, walk)
		case map[string]any:
			if _, ok := v["enum"].(string); ok && len(v) == 2 {
				return true
			}
			for _, e := range v {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}

// hasNumber reports whether a JSON value holds a number: decoded into any,
// a default's numbers become float64 where the payload's ints are int64.
func hasNumber(def string) bool {
	var v any
	dec := json.NewDecoder(strings.NewReader(def))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case json.Number:
			return true
		case []any:
			for _, e := range v {
				if walk(e) {
					return true
				}
			}
		case map[string]any:
			for _, e := range v {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}
