package payload

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/laraworker/laraworker/internal/phpjson"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// ReadableJSON renders a PHP value as JSON meant for people and for
// programs in other languages (`laraworker inspect`, the exec handler):
//
//   - scalars as JSON scalars; INF, -INF and NAN as {"float":"INF"};
//     strings that are not valid UTF-8 as {"base64":"..."}
//   - lists as arrays, other arrays as {"array":[{"key":k,"value":v},...]}
//   - objects as {"class":C,"properties":{"name":v,...}} in PHP's order,
//     so `jq .command.properties.podcastId` reads a property, plus
//     {"visibility":{"name":"protected","other":"private App\Jobs\X"}}
//     for the properties that are not public (a private property that a
//     parent class declares again is keyed "Class::name")
//   - Laravel values by meaning: {"model":C,"id":...}, {"date":RFC3339,
//     "class":C,"timezone":tz}, {"enum":C,"case":X}, {"closure":C},
//     and chained jobs as {"serialized":<tree>}
//   - a reference as {"ref":path} naming the value it points to.
//
// Strings are written as they are: "&", "<" and ">" stay themselves, not
// encoding/json's \u0026, \u003c and \u003e (which are for JSON put into
// HTML; a page that shows the document escapes it itself).
func ReadableJSON(v *phpserialize.Value) ([]byte, error) {
	r := &readable{paths: map[*phpserialize.Value]string{}}
	return marshalPlain(r.render("$", v, 0))
}

// marshalPlain is json.Marshal without the HTML escaping of "&", "<" and
// ">".
func marshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

type readable struct {
	paths map[*phpserialize.Value]string
}

type orderedObject []keyVal

type keyVal struct {
	Key string
	Val any
}

// MarshalJSON keeps keys in the order PHP had them.
func (o orderedObject) MarshalJSON() ([]byte, error) {
	buf := []byte{'{'}
	for i, kv := range o {
		if i > 0 {
			buf = append(buf, ',')
		}
		k, err := marshalPlain(kv.Key)
		if err != nil {
			return nil, err
		}
		v, err := marshalPlain(kv.Val)
		if err != nil {
			return nil, err
		}
		buf = append(append(append(buf, k...), ':'), v...)
	}
	return append(buf, '}'), nil
}

const maxReadableDepth = 256

func (r *readable) render(path string, v *phpserialize.Value, depth int) any {
	if v == nil {
		return nil
	}
	if depth > maxReadableDepth {
		return orderedObject{{"truncated", "nested too deeply"}}
	}
	if v.Kind == phpserialize.KindRef || v.Kind == phpserialize.KindRefAlias {
		return orderedObject{{"ref", r.paths[v.Target]}}
	}
	r.paths[v] = path
	switch v.Kind {
	case phpserialize.KindNull:
		return nil
	case phpserialize.KindBool:
		return v.Bool
	case phpserialize.KindInt:
		return v.Int
	case phpserialize.KindFloat:
		return readableFloat(v.Float)
	case phpserialize.KindString:
		return r.readableString(path, v.Str, depth)
	case phpserialize.KindEnum:
		return orderedObject{{"enum", v.Class}, {"case", v.Case}}
	case phpserialize.KindCustom:
		return orderedObject{{"class", v.Class}, {"custom", readableBytes(v.Str)}}
	case phpserialize.KindArray:
		return r.readableArray(path, v, depth)
	}
	return r.readableObject(path, v, depth)
}

// readableFloat writes a float as json_encode with JSON_PRESERVE_ZERO_FRACTION
// does (2.0, 0.1, 1.0e+25): PHP's digits, and a float stays a float for a
// reader in any language (2.0, not the integer 2).
func readableFloat(f float64) any {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return orderedObject{{"float", string(phpserialize.AppendPHPFloat(nil, f))}}
	}
	b, _ := phpjson.AppendFloat(nil, f) // finite: no error
	if !bytes.ContainsAny(b, ".e") {
		b = append(b, ".0"...)
	}
	return json.Number(b)
}

func readableBytes(b []byte) any {
	if utf8.Valid(b) {
		return string(b)
	}
	return orderedObject{{"base64", base64.StdEncoding.EncodeToString(b)}}
}

// readableString shows a serialized job inside a string (a chain link) as
// its tree.
func (r *readable) readableString(path string, b []byte, depth int) any {
	if looksSerializedObject(b) {
		if inner, err := phpserialize.Unserialize(b); err == nil {
			sub := &readable{paths: map[*phpserialize.Value]string{}}
			return orderedObject{{"serialized", sub.render(path, inner, depth+1)}}
		}
	}
	return readableBytes(b)
}

func (r *readable) readableArray(path string, v *phpserialize.Value, depth int) any {
	if v.IsList() {
		out := make([]any, len(v.Entries))
		for i, e := range v.Entries {
			out[i] = r.render(path+"["+strconv.Itoa(i)+"]", e.Value, depth+1)
		}
		return out
	}
	out := make([]any, len(v.Entries))
	for i, e := range v.Entries {
		var key any = e.Key.Str
		if e.Key.IsInt {
			key = e.Key.Int
		}
		out[i] = orderedObject{{"key", key}, {"value", r.render(path+"["+e.Key.String()+"]", e.Value, depth+1)}}
	}
	return orderedObject{{"array", out}}
}

func (r *readable) readableObject(path string, v *phpserialize.Value, depth int) any {
	switch {
	case IsModelIdentifier(v):
		var m ModelIdentifier
		if m.DecodePHP(v) == nil {
			return orderedObject{{"model", m.Class}, {"id", m.ID}, {"relations", orEmpty(m.Relations)},
				{"connection", m.Connection}, {"collectionClass", m.CollectionClass}}
		}
	case IsDate(v):
		if t, err := phpserialize.Time(v); err == nil {
			tz, _ := stringProp(v, "timezone")
			return orderedObject{{"date", t.Format(time.RFC3339Nano)}, {"class", v.Class}, {"timezone", tz}}
		}
	case IsClosure(v):
		return orderedObject{{"closure", v.Class}}
	}
	return r.plainObject(path, v, depth)
}

// plainObject renders an object's properties by short name, and the
// visibility of those that are not public.
func (r *readable) plainObject(path string, v *phpserialize.Value, depth int) any {
	seen := make(map[string]int, len(v.Entries))
	for _, e := range v.Entries {
		_, _, name := phpserialize.SplitPropertyName(e.Key.String())
		seen[name]++
	}
	props := make(orderedObject, 0, len(v.Entries))
	var visibility orderedObject
	for _, e := range v.Entries {
		vis, class, name := phpserialize.SplitPropertyName(e.Key.String())
		key := name
		if seen[name] > 1 && class != "" {
			key = class + "::" + name
		}
		props = append(props, keyVal{key, r.render(path+"."+name, e.Value, depth+1)})
		switch {
		case class != "":
			visibility = append(visibility, keyVal{key, vis.String() + " " + class})
		case vis != phpserialize.VisPublic:
			visibility = append(visibility, keyVal{key, vis.String()})
		}
	}
	out := orderedObject{{"class", v.Class}, {"properties", props}}
	if len(visibility) > 0 {
		out = append(out, keyVal{"visibility", visibility})
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
