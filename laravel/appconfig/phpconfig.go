package appconfig

import (
	"fmt"
	"strconv"
	"strings"
)

// This file reads Laravel config files (config/*.php, and the
// var_export()ed bootstrap/cache/config.php) without PHP, conservatively:
// it parses the returned array and evaluates only literals, env(), the
// casts (int)/(string)/(bool), concatenation and Str::slug() of ASCII text.
// Anything else (closures, helpers like storage_path(), ternaries, ??) is
// "unknown", and the caller falls back to another source and says so.

// phpKind is the type of an evaluated value.
type phpKind int

const (
	kindUnknown phpKind = iota
	kindNull
	kindBool
	kindInt
	kindFloat
	kindString
	kindArray
)

// phpNode is a parsed expression: an array (Keys/Items), a literal, a call
// or an operation; Unknown when the parser skipped something it does not
// understand.
type phpNode struct {
	kind  string // "array", "lit", "env", "slug", "concat", "cast", "unknown"
	lit   phpValue
	keys  []phpValue // array keys (kindNull for list items)
	items []*phpNode // array items, call arguments, concat operands, cast operand
	cast  string     // int, string, bool
}

// phpValue is an evaluated value.
type phpValue struct {
	Kind phpKind
	Str  string // string, or the float/int text
	Int  int64
	Bool bool
}

func (v phpValue) known() bool { return v.Kind != kindUnknown && v.Kind != kindArray }

// String is PHP's (string) cast.
func (v phpValue) String() string {
	switch v.Kind {
	case kindBool:
		if v.Bool {
			return "1"
		}
		return ""
	case kindInt:
		return strconv.FormatInt(v.Int, 10)
	case kindFloat, kindString:
		return v.Str
	}
	return ""
}

// toInt is PHP's (int) cast for the scalar kinds.
func (v phpValue) toInt() phpValue {
	switch v.Kind {
	case kindInt:
		return v
	case kindBool:
		if v.Bool {
			return phpValue{Kind: kindInt, Int: 1}
		}
		return phpValue{Kind: kindInt}
	case kindNull:
		return phpValue{Kind: kindInt}
	case kindFloat, kindString:
		return phpValue{Kind: kindInt, Int: leadingInt(v.Str)}
	}
	return phpValue{}
}

// leadingInt is PHP 8's (int) of a string: leading whitespace, a sign and
// the digits that follow (a numeric string with a fraction or an exponent
// is cast through float).
func leadingInt(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	if f, err := strconv.ParseFloat(strings.TrimRight(s, " \t\n\r\v\f"), 64); err == nil && !strings.ContainsAny(s, "xX") {
		if f >= -9.2e18 && f <= 9.2e18 {
			return int64(f)
		}
	}
	end := 0
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
	}
	for end < len(s) && isDigit(s[end]) {
		end++
	}
	n, _ := strconv.ParseInt(s[:end], 10, 64)
	return n
}

func (v phpValue) truthy() bool {
	switch v.Kind {
	case kindBool:
		return v.Bool
	case kindInt:
		return v.Int != 0
	case kindString:
		return v.Str != "" && v.Str != "0"
	case kindFloat:
		f, _ := strconv.ParseFloat(v.Str, 64)
		return f != 0
	}
	return false
}

// parsePHPConfig parses a config file: the array after its `return`.
func parsePHPConfig(src string) (*phpNode, error) {
	toks, err := phpTokens(src)
	if err != nil {
		return nil, err
	}
	for i, t := range toks {
		if t.kind == tokIdent && strings.EqualFold(t.text, "return") {
			p := &phpParser{toks: toks, pos: i + 1}
			n := p.expr()
			if n.kind != "array" {
				return nil, fmt.Errorf("the file does not return an array literal")
			}
			return n, nil
		}
	}
	return nil, fmt.Errorf("no return statement")
}

// lookup follows array keys; nil when a key is missing or a level is not
// an array literal.
func (n *phpNode) lookup(path ...string) *phpNode {
	cur := n
	for _, k := range path {
		if cur == nil || cur.kind != "array" {
			return nil
		}
		var next *phpNode
		for i, key := range cur.keys {
			if key.Kind != kindNull && key.String() == k {
				next = cur.items[i] // the last duplicate wins, as in PHP
			}
		}
		cur = next
	}
	return cur
}

// phpEnv is Laravel's env(): the .env and process environment merged.
type phpEnv func(name string) (string, bool)

// eval evaluates a node; kindUnknown when any part is not understood.
func (n *phpNode) eval(env phpEnv) phpValue {
	if n == nil {
		return phpValue{}
	}
	switch n.kind {
	case "lit":
		return n.lit
	case "env":
		return n.evalEnv(env)
	case "cast":
		v := n.items[0].eval(env)
		if !v.known() {
			return phpValue{}
		}
		switch n.cast {
		case "int":
			return v.toInt()
		case "string":
			return phpValue{Kind: kindString, Str: v.String()}
		case "bool":
			return phpValue{Kind: kindBool, Bool: v.truthy()}
		}
	case "concat":
		var b strings.Builder
		for _, it := range n.items {
			v := it.eval(env)
			if !v.known() {
				return phpValue{}
			}
			b.WriteString(v.String())
		}
		return phpValue{Kind: kindString, Str: b.String()}
	case "slug":
		return n.evalSlug(env)
	}
	return phpValue{}
}

func (n *phpNode) evalEnv(env phpEnv) phpValue {
	if len(n.items) == 0 || len(n.items) > 2 {
		return phpValue{}
	}
	name := n.items[0].eval(env)
	if name.Kind != kindString {
		return phpValue{}
	}
	raw, ok := env(name.Str)
	if !ok {
		if len(n.items) == 2 {
			return n.items[1].eval(env)
		}
		return phpValue{Kind: kindNull}
	}
	return envValue(raw)
}

// envValue applies Illuminate\Support\Env's conversions: true, false,
// empty and null (bare or in parentheses), and one pair of quotes around
// the value stripped.
func envValue(raw string) phpValue {
	switch strings.ToLower(raw) {
	case "true", "(true)":
		return phpValue{Kind: kindBool, Bool: true}
	case "false", "(false)":
		return phpValue{Kind: kindBool}
	case "empty", "(empty)":
		return phpValue{Kind: kindString}
	case "null", "(null)":
		return phpValue{Kind: kindNull}
	}
	if len(raw) >= 2 && (raw[0] == '"' || raw[0] == '\'') && raw[len(raw)-1] == raw[0] {
		raw = raw[1 : len(raw)-1]
	}
	return phpValue{Kind: kindString, Str: raw}
}

func (n *phpNode) evalSlug(env phpEnv) phpValue {
	if len(n.items) == 0 || len(n.items) > 2 {
		return phpValue{}
	}
	title := n.items[0].eval(env)
	sep := phpValue{Kind: kindString, Str: "-"}
	if len(n.items) == 2 {
		sep = n.items[1].eval(env)
	}
	if !title.known() || sep.Kind != kindString {
		return phpValue{}
	}
	s, ok := StrSlug(title.String(), sep.Str)
	if !ok {
		return phpValue{}
	}
	return phpValue{Kind: kindString, Str: s}
}

// StrSlug is Laravel's Str::slug($title, $separator) for ASCII titles; ok
// is false for non-ASCII text (Str::ascii transliterates it with tables Go
// does not have) and for separators other than "-" and "_".
func StrSlug(title, sep string) (string, bool) {
	if sep != "-" && sep != "_" {
		return "", false
	}
	for i := 0; i < len(title); i++ {
		if title[i] >= 0x80 {
			return "", false
		}
	}
	flip := "_"
	if sep == "_" {
		flip = "-"
	}
	// Dashes/underscores become the separator, '@' the word "at".
	title = strings.ReplaceAll(title, flip, sep)
	title = strings.ReplaceAll(title, "@", sep+"at"+sep)
	var b strings.Builder
	pending := false // a run of separators and whitespace
	for _, c := range []byte(strings.ToLower(title)) {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			if pending && b.Len() > 0 {
				b.WriteString(sep)
			}
			pending = false
			b.WriteByte(c)
		case c == sep[0] || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			pending = true
		}
		// Anything else is removed without separating.
	}
	return b.String(), true
}

// --- tokens ---

type tokKind int

const (
	tokIdent tokKind = iota // names, incl. namespaced ones and keywords
	tokString
	tokNumber
	tokPunct
)

type phpToken struct {
	kind tokKind
	text string // ident/punct text, decoded string, number text
}

func phpTokens(src string) ([]phpToken, error) {
	var toks []phpToken
	i := 0
	if j := strings.Index(src, "<?php"); j >= 0 {
		i = j + len("<?php")
	}
	for i < len(src) {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#' && i+1 < len(src) && src[i+1] == '[':
			toks = append(toks, phpToken{tokPunct, "#["}) // attribute: unknown
			i += 2
		case c == '#' || (c == '/' && i+1 < len(src) && src[i+1] == '/'):
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(src[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("unterminated comment")
			}
			i += end + 4
		case c == '\'':
			s, n, err := singleQuotedPHP(src[i:])
			if err != nil {
				return nil, err
			}
			toks = append(toks, phpToken{tokString, s})
			i += n
		case c == '"':
			s, n, ok := doubleQuotedPHP(src[i:])
			if n == 0 {
				return nil, fmt.Errorf("unterminated string")
			}
			if ok {
				toks = append(toks, phpToken{tokString, s})
			} else {
				toks = append(toks, phpToken{tokPunct, "\"$"}) // interpolation: unknown
			}
			i += n
		case isDigit(c):
			j := i
			for j < len(src) && (isAlnum(src[j]) || src[j] == '.' || src[j] == '_') {
				j++
			}
			toks = append(toks, phpToken{tokNumber, src[i:j]})
			i = j
		case isAlnum(c) || c == '_' || c == '\\' || c >= 0x80:
			j := i
			for j < len(src) && (isAlnum(src[j]) || src[j] == '_' || src[j] == '\\' || src[j] >= 0x80) {
				j++
			}
			toks = append(toks, phpToken{tokIdent, src[i:j]})
			i = j
		default:
			for _, p := range []string{"=>", "::", "??", "?->", "->", "...", "==", "!=", "<=", ">=", "&&", "||"} {
				if strings.HasPrefix(src[i:], p) {
					toks = append(toks, phpToken{tokPunct, p})
					i += len(p)
					goto next
				}
			}
			toks = append(toks, phpToken{tokPunct, string(c)})
			i++
		next:
		}
	}
	return toks, nil
}

// singleQuotedPHP decodes '...' (only \' and \\ are escapes).
func singleQuotedPHP(s string) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch s[i] {
		case '\\':
			if i+1 < len(s) && (s[i+1] == '\'' || s[i+1] == '\\') {
				b.WriteByte(s[i+1])
				i++
				continue
			}
			b.WriteByte('\\')
		case '\'':
			return b.String(), i + 1, nil
		default:
			b.WriteByte(s[i])
		}
	}
	return "", 0, fmt.Errorf("unterminated string")
}

// doubleQuotedPHP decodes "..." with the common escapes; ok is false when
// the string interpolates variables ($name, {$...}).
func doubleQuotedPHP(s string) (string, int, bool) {
	var b strings.Builder
	ok := true
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			switch e := s[i]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'v':
				b.WriteByte('\v')
			case 'f':
				b.WriteByte('\f')
			case '0':
				b.WriteByte(0)
			case '\\', '"', '$':
				b.WriteByte(e)
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		case c == '$' && i+1 < len(s) && (s[i+1] == '{' || s[i+1] == '_' || isAlnum(s[i+1])):
			ok = false
			b.WriteByte(c)
		case c == '"':
			return b.String(), i + 1, ok
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, false
}

// --- parser ---

type phpParser struct {
	toks []phpToken
	pos  int
}

func (p *phpParser) peek() phpToken {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return phpToken{tokPunct, ";"}
}

func (p *phpParser) is(text string) bool {
	t := p.peek()
	return (t.kind == tokPunct || t.kind == tokIdent) && strings.EqualFold(t.text, text)
}

// expr parses up to a ',' ']' ')' ';' or '=>' at this level; what it does
// not understand becomes an unknown node, its tokens skipped.
func (p *phpParser) expr() *phpNode {
	first := p.unary()
	operands := []*phpNode{first}
	for p.is(".") {
		p.pos++
		operands = append(operands, p.unary())
	}
	n := first
	if len(operands) > 1 {
		n = &phpNode{kind: "concat", items: operands}
	}
	if !p.atEnd() {
		p.skipRest()
		return &phpNode{kind: "unknown"}
	}
	return n
}

func (p *phpParser) atEnd() bool {
	t := p.peek()
	return t.kind == tokPunct && (t.text == "," || t.text == "]" || t.text == ")" || t.text == ";" || t.text == "=>")
}

// skipRest skips to the end of the current expression, over balanced
// brackets.
func (p *phpParser) skipRest() {
	depth := 0
	for p.pos < len(p.toks) {
		t := p.toks[p.pos]
		if t.kind == tokPunct {
			switch t.text {
			case "(", "[", "{", "#[":
				depth++
			case ")", "]", "}":
				if depth == 0 {
					return
				}
				depth--
			case ",", ";", "=>":
				if depth == 0 {
					return
				}
			}
		}
		p.pos++
	}
}

func (p *phpParser) unary() *phpNode {
	// Casts: (int) (integer) (string) (bool) (boolean).
	if p.is("(") && p.pos+2 < len(p.toks) && p.toks[p.pos+1].kind == tokIdent && p.toks[p.pos+2].text == ")" {
		cast := strings.ToLower(p.toks[p.pos+1].text)
		switch cast {
		case "int", "integer":
			cast = "int"
		case "bool", "boolean":
			cast = "bool"
		case "string":
		default:
			cast = ""
		}
		if cast != "" {
			p.pos += 3
			return &phpNode{kind: "cast", cast: cast, items: []*phpNode{p.unary()}}
		}
	}
	return p.primary()
}

func (p *phpParser) primary() *phpNode {
	t := p.peek()
	switch {
	case t.kind == tokString:
		p.pos++
		return &phpNode{kind: "lit", lit: phpValue{Kind: kindString, Str: t.text}}
	case t.kind == tokNumber:
		p.pos++
		return &phpNode{kind: "lit", lit: numberLiteral(t.text)}
	case t.kind == tokPunct && t.text == "-" && p.pos+1 < len(p.toks) && p.toks[p.pos+1].kind == tokNumber:
		p.pos += 2
		v := numberLiteral(p.toks[p.pos-1].text)
		v.Int, v.Str = -v.Int, "-"+v.Str
		return &phpNode{kind: "lit", lit: v}
	case t.kind == tokPunct && t.text == "[":
		p.pos++
		return p.arrayItems("]")
	case t.kind == tokPunct && t.text == "(":
		p.pos++
		inner := p.expr()
		if !p.is(")") {
			p.skipRest()
			return &phpNode{kind: "unknown"}
		}
		p.pos++
		return inner
	case t.kind == tokIdent:
		return p.identifier()
	}
	p.skipRest()
	return &phpNode{kind: "unknown"}
}

func numberLiteral(text string) phpValue {
	clean := strings.ReplaceAll(text, "_", "")
	if n, err := strconv.ParseInt(clean, 10, 64); err == nil {
		return phpValue{Kind: kindInt, Int: n, Str: clean}
	}
	if _, err := strconv.ParseFloat(clean, 64); err == nil {
		return phpValue{Kind: kindFloat, Str: clean}
	}
	return phpValue{}
}

func (p *phpParser) identifier() *phpNode {
	name := p.peek().text
	p.pos++
	lower := strings.ToLower(strings.TrimPrefix(name, "\\"))
	switch {
	case lower == "true" || lower == "false":
		return &phpNode{kind: "lit", lit: phpValue{Kind: kindBool, Bool: lower == "true"}}
	case lower == "null":
		return &phpNode{kind: "lit", lit: phpValue{Kind: kindNull}}
	case lower == "array" && p.is("("):
		p.pos++
		return p.arrayItems(")")
	case lower == "env" && p.is("("):
		p.pos++
		return p.call("env")
	case (lower == "str" || lower == "illuminate\\support\\str") && p.is("::"):
		if p.pos+1 < len(p.toks) && strings.EqualFold(p.toks[p.pos+1].text, "slug") {
			p.pos += 2
			if p.is("(") {
				p.pos++
				return p.call("slug")
			}
		}
	}
	p.skipRest()
	return &phpNode{kind: "unknown"}
}

// call parses arguments up to ')'.
func (p *phpParser) call(kind string) *phpNode {
	n := &phpNode{kind: kind}
	for !p.is(")") {
		if p.pos >= len(p.toks) {
			return &phpNode{kind: "unknown"}
		}
		n.items = append(n.items, p.expr())
		if p.is(",") {
			p.pos++
		} else if !p.is(")") {
			p.skipRest()
			return &phpNode{kind: "unknown"}
		}
	}
	p.pos++
	return n
}

// arrayItems parses `key => value, value, ...` up to closer.
func (p *phpParser) arrayItems(closer string) *phpNode {
	n := &phpNode{kind: "array"}
	for !p.is(closer) {
		if p.pos >= len(p.toks) {
			return &phpNode{kind: "unknown"}
		}
		item := p.expr()
		key := phpValue{Kind: kindNull}
		if p.is("=>") {
			p.pos++
			key = item.eval(func(string) (string, bool) { return "", false })
			if item.kind != "lit" {
				key = phpValue{} // a computed key: never matched by lookup
			}
			item = p.expr()
		}
		n.keys = append(n.keys, key)
		n.items = append(n.items, item)
		if p.is(",") {
			p.pos++
		} else if !p.is(closer) {
			p.skipRest()
			if p.is(",") {
				p.pos++
			} else if !p.is(closer) {
				return &phpNode{kind: "unknown"}
			}
		}
	}
	p.pos++
	return n
}
