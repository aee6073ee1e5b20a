// Package phpjson writes strings and floats exactly as PHP's json_encode
// does, for the bytes Laravel stores and compares: payloads, LIKE patterns
// over them, batches' failed_job_ids.
//
// PHP's json_encode differs from encoding/json: it escapes "/" as "\/",
// writes control characters as lowercase \u00xx, leaves <, > and & alone,
// and (without JSON_UNESCAPED_UNICODE) writes every non-ASCII character as
// \uxxxx UTF-16 units. Laravel relies on these bytes: payloads are compared,
// searched with LIKE and written back, so Go must produce the same ones.
package phpjson

import (
	"errors"
	"math"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// Flags are the json_encode flags this package implements.
type Flags uint8

// UnescapedUnicode is JSON_UNESCAPED_UNICODE: non-ASCII characters are
// written as they are, except U+2028 and U+2029, which PHP still escapes
// without JSON_UNESCAPED_LINE_TERMINATORS. Laravel's createPayload uses it;
// queue:retry's re-encode and the batch repository do not.
const UnescapedUnicode Flags = 1

// ErrMalformedUTF8 is json_encode's error 5 (JSON_ERROR_UTF8), with PHP's
// message: json_encode refuses strings that are not valid UTF-8.
//
//lint:ignore ST1005 json_last_error_msg()'s text, verbatim
var ErrMalformedUTF8 = errors.New("Malformed UTF-8 characters, possibly incorrectly encoded")

// errInfNaN is json_encode's error 7 (JSON_ERROR_INF_OR_NAN).
//
//lint:ignore ST1005 json_last_error_msg()'s text, verbatim
var errInfNaN = errors.New("Inf and NaN cannot be JSON encoded")

// AppendString appends s as json_encode writes a PHP string, quotes
// included. It fails with ErrMalformedUTF8 when s is not valid UTF-8, as
// json_encode does without JSON_INVALID_UTF8_* flags.
func AppendString(dst []byte, s string, flags Flags) ([]byte, error) {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			dst = appendASCII(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			return nil, ErrMalformedUTF8
		}
		if flags&UnescapedUnicode != 0 && r != '\u2028' && r != '\u2029' {
			dst = append(dst, s[i:i+size]...)
		} else {
			dst = appendUnicodeEscape(dst, r)
		}
		i += size
	}
	return append(dst, '"'), nil
}

// String is AppendString into a new string.
func String(s string, flags Flags) (string, error) {
	b, err := AppendString(make([]byte, 0, len(s)+2), s, flags)
	return string(b), err
}

// StringList is json_encode of a PHP list of strings: ["a","b"], or [] for
// none.
func StringList(items []string, flags Flags) (string, error) {
	b := append(make([]byte, 0, 64), '[')
	var err error
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		if b, err = AppendString(b, it, flags); err != nil {
			return "", err
		}
	}
	return string(append(b, ']')), nil
}

func appendASCII(dst []byte, c byte) []byte {
	switch c {
	case '"':
		return append(dst, '\\', '"')
	case '\\':
		return append(dst, '\\', '\\')
	case '/':
		return append(dst, '\\', '/')
	case '\b':
		return append(dst, '\\', 'b')
	case '\f':
		return append(dst, '\\', 'f')
	case '\n':
		return append(dst, '\\', 'n')
	case '\r':
		return append(dst, '\\', 'r')
	case '\t':
		return append(dst, '\\', 't')
	}
	if c < 0x20 {
		return appendU4(dst, rune(c))
	}
	return append(dst, c)
}

// appendUnicodeEscape writes r as \uxxxx, astral runes as a surrogate pair.
func appendUnicodeEscape(dst []byte, r rune) []byte {
	if r >= 0x10000 {
		hi, lo := utf16.EncodeRune(r)
		return appendU4(appendU4(dst, hi), lo)
	}
	return appendU4(dst, r)
}

func appendU4(dst []byte, r rune) []byte {
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}

// AppendFloat appends f as json_encode writes a float (serialize_precision
// -1): serialize()'s digits with a lowercase e ("1.0e+17", "1", "-0").
// INF and NAN are an error, as in PHP.
func AppendFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, errInfNaN
	}
	start := len(dst)
	dst = phpserialize.AppendPHPFloat(dst, f)
	for i := start; i < len(dst); i++ {
		if dst[i] == 'E' {
			dst[i] = 'e'
		}
	}
	return dst, nil
}
