package appconfig

import (
	"fmt"
	"os"
	"strings"
)

// ParseDotenv parses the contents of a Laravel .env file with the rules of
// vlucas/phpdotenv (v5), which Laravel uses:
//   - blank lines and lines starting with # are ignored; an optional
//     leading "export " is dropped;
//   - unquoted values are trimmed, end at " #" (inline comment) and expand
//     ${VAR};
//   - 'single quoted' values are literal and may span lines;
//   - "double quoted" values expand ${VAR} and the escapes \" \\ \n \r \t
//     \f \v \$, and may span lines.
//
// ${VAR} resolves against lookup (normally os.LookupEnv), then keys defined
// earlier in the file; unknown names expand to "". The line number of
// the first syntax error is reported; values are never echoed in errors
// because they may be secrets.
func ParseDotenv(src string, lookup func(string) (string, bool)) (map[string]string, error) {
	if lookup == nil {
		lookup = os.LookupEnv
	}
	p := &dotenvParser{src: strings.ReplaceAll(src, "\r\n", "\n"), line: 1, vars: map[string]string{}, lookup: lookup}
	if err := p.parse(); err != nil {
		return nil, err
	}
	return p.vars, nil
}

type dotenvParser struct {
	src    string
	pos    int
	line   int
	vars   map[string]string
	lookup func(string) (string, bool)
}

func (p *dotenvParser) errorf(format string, args ...any) error {
	return fmt.Errorf("dotenv: line %d: "+format, append([]any{p.line}, args...)...)
}

func (p *dotenvParser) eof() bool { return p.pos >= len(p.src) }

func (p *dotenvParser) parse() error {
	for !p.eof() {
		p.skipBlank()
		if p.eof() {
			break
		}
		if p.src[p.pos] == '#' {
			p.skipLine()
			continue
		}
		if err := p.parseEntry(); err != nil {
			return err
		}
	}
	return nil
}

// skipBlank skips spaces, tabs and newlines between entries.
func (p *dotenvParser) skipBlank() {
	for !p.eof() {
		switch p.src[p.pos] {
		case '\n':
			p.line++
		case ' ', '\t':
		default:
			return
		}
		p.pos++
	}
}

func (p *dotenvParser) skipLine() {
	for !p.eof() && p.src[p.pos] != '\n' {
		p.pos++
	}
}

func (p *dotenvParser) parseEntry() error {
	start := p.pos
	for !p.eof() && p.src[p.pos] != '=' && p.src[p.pos] != '\n' {
		p.pos++
	}
	key := strings.TrimSpace(p.src[start:p.pos])
	if strings.HasPrefix(key, "export ") || strings.HasPrefix(key, "export\t") {
		key = strings.TrimSpace(key[len("export"):])
	}
	if p.eof() || p.src[p.pos] == '\n' {
		// phpdotenv treats a bare name as "no value": ignore it.
		if !validDotenvKey(key) {
			return p.errorf("invalid variable name")
		}
		return nil
	}
	if !validDotenvKey(key) {
		return p.errorf("invalid variable name")
	}
	p.pos++ // '='
	for !p.eof() && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
		p.pos++
	}
	var (
		val string
		err error
	)
	switch {
	case p.eof():
	case p.src[p.pos] == '"':
		val, err = p.doubleQuoted()
	case p.src[p.pos] == '\'':
		val, err = p.singleQuoted()
	default:
		val = p.unquoted()
	}
	if err != nil {
		return err
	}
	p.vars[key] = val
	return nil
}

func validDotenvKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func (p *dotenvParser) unquoted() string {
	start := p.pos
	for !p.eof() && p.src[p.pos] != '\n' {
		if p.src[p.pos] == '#' && p.pos > start && (p.src[p.pos-1] == ' ' || p.src[p.pos-1] == '\t') {
			break
		}
		p.pos++
	}
	raw := strings.TrimSpace(p.src[start:p.pos])
	p.skipLine()
	return p.expand(raw)
}

func (p *dotenvParser) singleQuoted() (string, error) {
	p.pos++
	start, startLine := p.pos, p.line
	for !p.eof() && p.src[p.pos] != '\'' {
		if p.src[p.pos] == '\n' {
			p.line++
		}
		p.pos++
	}
	if p.eof() {
		p.line = startLine
		return "", p.errorf("unterminated single-quoted value")
	}
	val := p.src[start:p.pos]
	p.pos++
	return val, p.afterQuoted()
}

func (p *dotenvParser) doubleQuoted() (string, error) {
	p.pos++
	startLine := p.line
	var b strings.Builder
	for {
		if p.eof() {
			p.line = startLine
			return "", p.errorf("unterminated double-quoted value")
		}
		c := p.src[p.pos]
		switch {
		case c == '"':
			p.pos++
			return p.expandQuoted(b.String()), p.afterQuoted()
		case c == '\\' && p.pos+1 < len(p.src):
			p.pos++
			switch e := p.src[p.pos]; e {
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'f':
				b.WriteByte('\f')
			case 'v':
				b.WriteByte('\v')
			case '"', '\\':
				b.WriteByte(e)
			case '$':
				// Keep a marker so the escaped dollar survives expansion.
				b.WriteString("\x00$")
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
			p.pos++
		default:
			if c == '\n' {
				p.line++
			}
			b.WriteByte(c)
			p.pos++
		}
	}
}

// afterQuoted accepts only whitespace or a comment after a closing quote.
func (p *dotenvParser) afterQuoted() error {
	for !p.eof() && p.src[p.pos] != '\n' {
		switch p.src[p.pos] {
		case ' ', '\t':
			p.pos++
		case '#':
			p.skipLine()
			return nil
		default:
			return p.errorf("unexpected characters after quoted value")
		}
	}
	return nil
}

func (p *dotenvParser) expandQuoted(s string) string {
	return strings.ReplaceAll(p.expand(s), "\x00$", "$")
}

// expand replaces ${NAME} (phpdotenv's only interpolation form).
func (p *dotenvParser) expand(s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '$' && i+1 < len(s) && s[i+1] == '{' && (i == 0 || s[i-1] != '\x00') {
			if end := strings.IndexByte(s[i+2:], '}'); end >= 0 {
				b.WriteString(p.resolve(s[i+2 : i+2+end]))
				i += end + 3
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

// resolve prefers the process environment: Laravel loads .env into an
// immutable repository, so a variable already set in the environment wins
// over the file, for interpolation as well.
func (p *dotenvParser) resolve(name string) string {
	if v, ok := p.lookup(name); ok {
		return v
	}
	return p.vars[name]
}
