package horizon

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// microtime is str_replace(',', '.', microtime(true)): the time as a PHP
// float (microseconds) written as PHP writes a float in a string.
func microtime(t time.Time) string { return phpFloat(float64(t.UnixMicro()) / 1e6) }

// negMicrotime is str_replace(',', '.', microtime(true) * -1), the score
// of Horizon's "newest first" sets.
func negMicrotime(t time.Time) string { return phpFloat(-float64(t.UnixMicro()) / 1e6) }

// expireAt is CarbonImmutable::now()->addMinutes(m)->getTimestamp().
func expireAt(t time.Time, minutes int) int64 { return t.Unix() + int64(minutes)*60 }

// phpFloat is (string) $float with PHP's default precision ini of 14:
// 14 significant digits, trailing zeros dropped, and the exponent form
// (1.0E+25, 1.5E-7) outside 1e-4 <= |f| < 1e14 (php_gcvt: decimal point
// position above 14 or below -3).
func phpFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NAN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	case f == 0:
		if math.Signbit(f) {
			return "-0"
		}
		return "0"
	}
	e := strconv.FormatFloat(f, 'e', 13, 64) // d.ddddddddddddde±XX
	mant, exp, _ := strings.Cut(e, "e")
	x, _ := strconv.Atoi(exp)
	if x >= -4 && x < 14 {
		return trimFixed(f, x)
	}
	if strings.Contains(mant, ".") {
		mant = strings.TrimRight(strings.TrimRight(mant, "0"), ".")
	}
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	sign := "+"
	if x < 0 {
		sign, x = "-", -x
	}
	return mant + "E" + sign + strconv.Itoa(x)
}

// trimFixed writes f in fixed notation with 14 significant digits (its
// decimal exponent x), without trailing zeros.
func trimFixed(f float64, x int) string {
	s := strconv.FormatFloat(f, 'f', max(13-x, 0), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
