package appconfig

import (
	"regexp"
	"strings"
)

// VersionCompare is PHP's version_compare($a, $b) without operator:
// -1, 0 or 1. It canonicalises both strings the way
// ext/standard/versioning.c does ("-", "_", "+" and other
// non-alphanumerics become ".", and a "." is inserted between digit and
// non-digit runs), then compares part by part: numbers numerically,
// special words by dev < alpha=a < beta=b < RC=rc < # (number) < pl=p, and
// any other word below all of them.
func VersionCompare(a, b string) int {
	if a == "" || b == "" {
		switch {
		case a == "" && b == "":
			return 0
		case a != "":
			return 1
		default:
			return -1
		}
	}
	v1, v2 := a, b
	if v1[0] != '#' {
		v1 = canonicalizeVersion(v1)
	}
	if v2[0] != '#' {
		v2 = canonicalizeVersion(v2)
	}
	return compareCanonical(v1, v2)
}

func compareCanonical(v1, v2 string) int {
	p1, p2 := v1, v2
	// has1/has2 mirror the C code's n1/n2: whether a '.' followed the
	// part just compared (initially "not NULL").
	has1, has2 := true, true
	compare := 0
	for p1 != "" && p2 != "" && has1 && has2 {
		var part1, part2 string
		part1, p1, has1 = cutDot(p1)
		part2, p2, has2 = cutDot(p2)
		compare = comparePart(part1, part2)
		if compare != 0 {
			break
		}
	}
	if compare == 0 {
		switch {
		case has1:
			if startsWithDigit(p1) {
				compare = 1
			} else {
				compare = VersionCompare(p1, "#N#")
			}
		case has2:
			if startsWithDigit(p2) {
				compare = -1
			} else {
				compare = VersionCompare("#N#", p2)
			}
		}
	}
	return compare
}

// cutDot splits at the first '.'; rest is what follows it (unchanged when
// there is no dot, as the C loop leaves p untouched in that case).
func cutDot(s string) (part, rest string, hadDot bool) {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, s, false
}

func comparePart(p1, p2 string) int {
	d1, d2 := startsWithDigit(p1), startsWithDigit(p2)
	switch {
	case d1 && d2:
		return sign(strtol(p1) - strtol(p2))
	case !d1 && !d2:
		return sign(int64(specialForm(p1) - specialForm(p2)))
	case d1:
		return sign(int64(specialForm("#N#") - specialForm(p2)))
	default:
		return sign(int64(specialForm(p1) - specialForm("#N#")))
	}
}

func startsWithDigit(s string) bool { return s != "" && isDigit(s[0]) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func sign(n int64) int {
	switch {
	case n < 0:
		return -1
	case n > 0:
		return 1
	}
	return 0
}

// strtol parses the leading decimal digits, saturating like C's strtol on
// 64-bit longs.
func strtol(s string) int64 {
	var n int64
	for i := 0; i < len(s) && isDigit(s[i]); i++ {
		d := int64(s[i] - '0')
		if n > (1<<63-1-d)/10 {
			return 1<<63 - 1
		}
		n = n*10 + d
	}
	return n
}

// specialForm ranks a non-numeric part by prefix, in the order of PHP's
// table; unknown words rank -1 (below "dev").
func specialForm(s string) int {
	forms := []struct {
		name  string
		order int
	}{
		{"dev", 0}, {"alpha", 1}, {"a", 1}, {"beta", 2}, {"b", 2},
		{"RC", 3}, {"rc", 3}, {"#", 4}, {"pl", 5}, {"p", 5},
	}
	for _, f := range forms {
		if strings.HasPrefix(s, f.name) {
			return f.order
		}
	}
	return -1
}

func canonicalizeVersion(v string) string {
	isSpecial := func(c byte) bool { return c == '-' || c == '_' || c == '+' }
	isDig := func(c byte) bool { return isDigit(c) }
	isNDig := func(c byte) bool { return !isDigit(c) && c != '.' }

	out := make([]byte, 0, len(v)*2)
	out = append(out, v[0])
	lp := v[0]
	for i := 1; i < len(v); i++ {
		c := v[i]
		lq := out[len(out)-1]
		switch {
		case isSpecial(c):
			if lq != '.' {
				out = append(out, '.')
			}
		case (isNDig(lp) && isDig(c)) || (isDig(lp) && isNDig(c)):
			if lq != '.' {
				out = append(out, '.')
			}
			out = append(out, c)
		case !isAlnum(c):
			if lq != '.' {
				out = append(out, '.')
			}
		default:
			out = append(out, c)
		}
		lp = c
	}
	return string(out)
}

var laravelVersionRE = regexp.MustCompile(`^\d+(\.\d+){0,2}$`)

// ValidVersion reports whether v reads as a Laravel version: 8, 8.83 or
// 12.67.0 (what Application::VERSION and composer.lock give).
func ValidVersion(v string) bool { return laravelVersionRE.MatchString(v) }
