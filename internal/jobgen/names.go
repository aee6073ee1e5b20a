package jobgen

import (
	"strings"
	"unicode"
)

// initialisms are written in capitals in Go names (Go's own convention:
// podcastId becomes PodcastID).
var initialisms = map[string]bool{
	"ID": true, "URL": true, "URI": true, "UUID": true, "API": true, "HTTP": true, "HTTPS": true,
	"JSON": true, "XML": true, "HTML": true, "SQL": true, "IP": true, "DB": true, "CSV": true, "PDF": true,
}

// GoName is an exported Go identifier for a PHP name: words split at
// underscores and case changes, each capitalised, initialisms in capitals
// (user_id and userId both become UserID).
func GoName(php string) string {
	var b strings.Builder
	for _, w := range words(php) {
		upper := strings.ToUpper(w)
		if initialisms[upper] {
			b.WriteString(upper)
			continue
		}
		if single, ok := strings.CutSuffix(upper, "S"); ok && initialisms[single] && len(single) > 1 {
			b.WriteString(single + "s") // ids: IDs
			continue
		}
		r := []rune(w)
		b.WriteString(string(unicode.ToUpper(r[0])) + string(r[1:]))
	}
	name := b.String()
	if name == "" {
		return "X"
	}
	if r := []rune(name)[0]; !unicode.IsUpper(r) {
		name = "X" + name // a letter with no upper case, or a digit
	}
	return name
}

// words splits a PHP identifier: at underscores and where a lower-case
// letter or digit meets an upper-case one.
func words(s string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = nil
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case r == '_' || r == '\\':
			flush()
		case unicode.IsUpper(r) && i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]) ||
			i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsLower(rs[i+1])):
			flush()
			cur = append(cur, r)
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			cur = append(cur, r)
		}
	}
	flush()
	return out
}

// baseName is a class name's last segment.
func baseName(class string) string {
	if i := strings.LastIndexByte(class, '\\'); i >= 0 {
		return class[i+1:]
	}
	return class
}
