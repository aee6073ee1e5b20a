package phpserialize

import (
	"math"
	"strconv"
)

// phpFloatPrecision is the digit count PHP's php_gcvt uses when
// serialize_precision is -1 (mode 0, shortest round-trip digits): numbers
// whose decimal point lies more than this many digits to the right switch to
// exponential form.
const phpFloatPrecision = 17

// AppendPHPFloat appends f the way PHP 8 serialize() writes a float with
// serialize_precision=-1 (the default): shortest round-trip digits laid out
// by php_gcvt, e.g. 0.1, 100, 1.0E+25, 1.5E-7, -0, INF, -INF, NAN.
func AppendPHPFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NAN"...)
	case math.IsInf(f, 1):
		return append(dst, "INF"...)
	case math.IsInf(f, -1):
		return append(dst, "-INF"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	}
	var buf [32]byte
	digits, decpt, neg := shortestDigits(buf[:0], f)
	if neg {
		dst = append(dst, '-')
	}
	if decpt < -3 || decpt > phpFloatPrecision {
		return appendExponential(dst, digits, decpt)
	}
	return appendFixed(dst, digits, decpt)
}

// shortestDigits returns the shortest decimal digits that round-trip f (no
// sign, no dot, no trailing zeros) and decpt, the position of the decimal
// point relative to the first digit (value = 0.DIGITS * 10^decpt), which is
// what zend_dtoa reports.
func shortestDigits(buf []byte, f float64) (digits []byte, decpt int, neg bool) {
	e := strconv.AppendFloat(buf, f, 'e', -1, 64) // "-d.ddde+XX"
	if e[0] == '-' {
		neg = true
		e = e[1:]
	}
	mark := 0
	for mark < len(e) && e[mark] != 'e' {
		mark++
	}
	exp := 0
	expNeg := e[mark+1] == '-'
	for _, c := range e[mark+2:] {
		exp = exp*10 + int(c-'0')
	}
	if expNeg {
		exp = -exp
	}
	// Drop the '.' in place: "d.ddd" becomes "dddd".
	digits = e[:mark]
	if len(digits) > 1 {
		digits = append(digits[:1], digits[2:]...)
	}
	return digits, exp + 1, neg
}

// appendExponential writes php_gcvt's exponential form: one digit, a dot,
// the remaining digits or "0", then E, an explicit sign and the exponent
// without leading zeros.
func appendExponential(dst, digits []byte, decpt int) []byte {
	dst = append(dst, digits[0], '.')
	if len(digits) == 1 {
		dst = append(dst, '0')
	} else {
		dst = append(dst, digits[1:]...)
	}
	exp := decpt - 1
	if exp < 0 {
		dst = append(dst, 'E', '-')
		exp = -exp
	} else {
		dst = append(dst, 'E', '+')
	}
	return strconv.AppendInt(dst, int64(exp), 10)
}

// appendFixed writes php_gcvt's positional form: digits padded with zeros up
// to the decimal point, and a fraction only when digits remain.
func appendFixed(dst, digits []byte, decpt int) []byte {
	if decpt <= 0 {
		dst = append(dst, '0', '.')
		for i := decpt; i < 0; i++ {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	for i := 0; i < decpt; i++ {
		if i < len(digits) {
			dst = append(dst, digits[i])
		} else {
			dst = append(dst, '0')
		}
	}
	if len(digits) > decpt {
		dst = append(dst, '.')
		dst = append(dst, digits[decpt:]...)
	}
	return dst
}

// validFloatText reports whether t matches what PHP's unserialize accepts
// after "d:": an integer, a decimal with digits on at least one side of the
// dot, either optionally followed by [eE][+-]digits, or NAN, INF, -INF.
func validFloatText(t []byte) bool {
	switch string(t) {
	case "NAN", "INF", "-INF":
		return true
	}
	i := 0
	if i < len(t) && (t[i] == '+' || t[i] == '-') {
		i++
	}
	intDigits := countDigits(t[i:])
	i += intDigits
	fracDigits := 0
	if i < len(t) && t[i] == '.' {
		i++
		fracDigits = countDigits(t[i:])
		i += fracDigits
	}
	if intDigits+fracDigits == 0 {
		return false
	}
	if i == len(t) {
		return true
	}
	if t[i] != 'e' && t[i] != 'E' {
		return false
	}
	i++
	if i < len(t) && (t[i] == '+' || t[i] == '-') {
		i++
	}
	n := countDigits(t[i:])
	return n > 0 && i+n == len(t)
}

func countDigits(b []byte) int {
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	return n
}

// parseFloatText converts text already checked by validFloatText. Values too
// large for a float become ±INF and tiny ones 0, as in PHP's zend_strtod.
func parseFloatText(t []byte) float64 {
	switch string(t) {
	case "NAN":
		return math.NaN()
	case "INF":
		return math.Inf(1)
	case "-INF":
		return math.Inf(-1)
	}
	f, _ := strconv.ParseFloat(string(t), 64) // range errors still give ±Inf or 0
	return f
}

// sameFloat reports whether a and b are the same float for serialization
// purposes: identical bits, or both NaN (PHP writes every NaN as NAN).
func sameFloat(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Float64bits(a) == math.Float64bits(b)
}
