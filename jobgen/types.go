package jobgen

import (
	"encoding/json"
	"strings"

	"github.com/laraworker/laraworker/phpclass"
)

// GoType is the Go type a property decodes into, by phpserialize.Decode's
// rules, chosen so that every value PHP can hold in the property decodes:
// what the declared type does not pin down (array, mixed, untyped, unions)
// becomes any.
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
}

const (
	importTime     = "time"
	importPayload  = "github.com/laraworker/laraworker/payload"
	importPHPValue = "github.com/laraworker/laraworker/phpserialize"
)

// TypeOf returns the Go type for a property.
func TypeOf(p phpclass.Property) GoType {
	t := p.Type
	if t == nil {
		return GoType{Expr: "any", Note: "untyped in PHP"}
	}
	n, ok := t.Single()
	if !ok {
		return GoType{Expr: "any", Note: "PHP " + t.Text + ": any of these"}
	}
	base := baseType(n)
	if t.Nullable && !nilable(base.Expr) {
		base.Expr = "*" + base.Expr
	}
	return base
}

// baseType maps one non-null PHP type.
func baseType(n phpclass.TypeName) GoType {
	if n.Builtin {
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
	switch n.Kind {
	case "date":
		return GoType{Expr: "time.Time", Imports: []string{importTime}}
	case "enum":
		return GoType{Expr: "string", Note: "the case name" + enumCases(n)}
	case "model":
		return GoType{Expr: "payload.ModelIdentifier", Imports: []string{importPayload}, Note: "the model's class and key"}
	case "model-collection":
		return GoType{Expr: "payload.ModelIdentifier", Imports: []string{importPayload}, Note: "the models' class and keys, ID a list"}
	case "collection":
		return GoType{Expr: "[]any", Note: n.Name + ": its items; use map[string]any for a keyed collection"}
	case "closure":
		return GoType{Expr: "*phpserialize.Value", Imports: []string{importPHPValue}, Note: n.Name + ": PHP code Go cannot run", Lost: true}
	}
	return GoType{Expr: "*phpserialize.Value", Imports: []string{importPHPValue}, Note: "a PHP " + n.Name + ": decode it with phpserialize.Decode into a type of yours"}
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
// it (then the field has no default and a missing property is an error).
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
	return string(p.Default), true
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
