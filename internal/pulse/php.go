package pulse

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// This file is the PHP that Pulse's recorders lean on, as PHP evaluates
// it: hexdec() of an md5, numeric config values that may be env()
// strings, and preg_match patterns.

// phpHexdec is PHP's hexdec(): digits are accumulated in an integer
// while it fits, then in a float (php-src _php_math_basetozval), so a
// 32-digit md5 gives the very float PHP computes.
func phpHexdec(s string) float64 {
	const cutoff, cutlim = math.MaxInt64 / 16, math.MaxInt64 % 16
	var num int64
	var fnum float64
	inFloat := false
	for i := 0; i < len(s); i++ {
		d, ok := hexDigit(s[i])
		if !ok {
			continue // PHP skips what is not a digit of the base
		}
		if !inFloat {
			if num < cutoff || (num == cutoff && d <= cutlim) {
				num = num*16 + d
				continue
			}
			fnum, inFloat = float64(num), true
		}
		fnum = fnum*16 + float64(d)
	}
	if inFloat {
		return fnum
	}
	return float64(num)
}

func hexDigit(c byte) (int64, bool) {
	switch {
	case c >= '0' && c <= '9':
		return int64(c - '0'), true
	case c >= 'a' && c <= 'f':
		return int64(c-'a') + 10, true
	case c >= 'A' && c <= 'F':
		return int64(c-'A') + 10, true
	}
	return 0, false
}

// sampleValue is Pulse's shouldSampleDeterministically scale of a seed:
// hexdec(md5(seed)) / pow(16, 32), in [0, 1].
func sampleValue(seed string) float64 {
	sum := md5.Sum([]byte(seed))
	return phpHexdec(hex.EncodeToString(sum[:])) / math.Pow(16, 32)
}

// md5Hex is PHP's md5(): the key_hash Pulse writes on SQLite.
func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// phpNumber reads a config number as PHP compares it: a JSON number, a
// bool, or a numeric string (an env() value). Anything else is an error
// naming where it was read.
func phpNumber(v any, where string) (float64, error) {
	switch x := v.(type) {
	case float64:
		return x, nil
	case bool:
		if x {
			return 1, nil
		}
		return 0, nil
	case nil:
		return 0, nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err == nil {
			return f, nil
		}
	}
	return 0, fmt.Errorf("%s is %v: want a number", where, v)
}

// phpRegexp is a preg_match pattern ("/^App\\Jobs\\/i") as Go's regexp
// runs it. PCRE features RE2 lacks (backreferences, lookaround, atomic
// groups) and modifiers Go cannot honour are errors naming the pattern.
type phpRegexp struct {
	Pattern string
	re      *regexp.Regexp
}

// MatchString is preg_match($pattern, $s) === 1.
func (p phpRegexp) MatchString(s string) bool { return p.re.MatchString(s) }

// closing delimiters of PCRE's bracket-style delimiters.
var closers = map[byte]byte{'(': ')', '[': ']', '{': '}', '<': '>'}

func compilePHPRegexp(pattern string) (phpRegexp, error) {
	s := strings.TrimLeft(pattern, " \t\n\r\v\f")
	if s == "" {
		return phpRegexp{}, errors.New("empty pattern")
	}
	open := s[0]
	if open == '\\' || (open >= '0' && open <= '9') || (open|0x20 >= 'a' && open|0x20 <= 'z') {
		return phpRegexp{}, fmt.Errorf("pattern %q: delimiter must not be alphanumeric or backslash", pattern)
	}
	closeWith := open
	if c, ok := closers[open]; ok {
		closeWith = c
	}
	end := strings.LastIndexByte(s, closeWith)
	if end <= 0 {
		return phpRegexp{}, fmt.Errorf("pattern %q: no ending delimiter %q", pattern, string(closeWith))
	}
	body, mods := s[1:end], s[end+1:]
	prefix, err := goFlags(mods)
	if err != nil {
		return phpRegexp{}, fmt.Errorf("pattern %q: %v", pattern, err)
	}
	re, err := regexp.Compile(prefix + body)
	if err != nil {
		return phpRegexp{}, fmt.Errorf("pattern %q: Go cannot evaluate it (%v)", pattern, err)
	}
	return phpRegexp{Pattern: pattern, re: re}, nil
}

// goFlags turns PCRE modifiers into Go's inline flags.
func goFlags(mods string) (string, error) {
	var flags string
	for _, m := range mods {
		switch m {
		case 'i', 'm', 's', 'U':
			flags += string(m)
		case 'u', 'D', 'S', '\n', ' ', '\r':
			// UTF-8 (Go's own), $ only at the very end (Go's $ never
			// matches before a final newline), study: nothing to do.
		default:
			return "", fmt.Errorf("modifier %q is not one Go can honour", string(m))
		}
	}
	if flags != "" {
		flags = "(?" + flags + ")"
	}
	return flags, nil
}
