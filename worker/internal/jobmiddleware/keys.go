package jobmiddleware

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/laraworker/laraworker/internal/phphash"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// The keys Laravel's job middleware compute, per version, for the
// middleware a registration declares (a job whose payload carries the
// bridge's record uses the keys the app's own Laravel computed).

// Key prefixes of the middleware (their withPrefix() replaces them).
const (
	overlapKeyPrefix   = "laravel-queue-overlap:"
	throttlesKeyPrefix = "laravel_throttles_exceptions:"
)

// overlapKey is WithoutOverlapping::getLockKey: the class (12.41+ the
// job's displayName(), 12.54+ its xxh128, for classes that have the
// method) and the key, or the key alone when shared (9.32+).
func overlapKey(version, prefix, commandName, displayName, key string, shared bool) string {
	if prefix == "" {
		prefix = overlapKeyPrefix
	}
	if shared {
		return prefix + key
	}
	return prefix + jobNameInKey(version, commandName, displayName) + ":" + key
}

// jobNameInKey is how 12.41+ name a job in overlap (and unique) keys: a
// class with a displayName() method (its payload's displayName differs
// from the class) by that name, hashed with xxh128 since 12.54.
func jobNameInKey(version, commandName, displayName string) string {
	if appconfig.VersionCompare(version, "12.41") < 0 || displayName == "" || displayName == commandName {
		return commandName
	}
	if appconfig.VersionCompare(version, "12.54") < 0 {
		return displayName
	}
	return phphash.XXH128(displayName)
}

// throttlesKey is ThrottlesExceptions::getKey: by(), else byJob()'s uuid,
// else a hash of the class: md5 on 8-11, xxh128 on 12.0+, of the
// displayName() on 12.41+ for classes that have the method.
func throttlesKey(version, prefix, commandName, displayName, uuid, by string, byJob bool) string {
	if prefix == "" {
		prefix = throttlesKeyPrefix
	}
	switch {
	case by != "":
		return prefix + by
	case byJob:
		return prefix + uuid
	case appconfig.VersionCompare(version, "12") < 0:
		return prefix + phphash.MD5(commandName)
	case appconfig.VersionCompare(version, "12.41") >= 0 && displayName != "":
		return prefix + phphash.XXH128(displayName)
	}
	return prefix + phphash.XXH128(commandName)
}

// LimiterKey is RateLimited's md5($limiterName . $limit->key).
func LimiterKey(limiter, key string) string { return phphash.MD5(limiter + key) }

// fallbackLimitKey is Limit::fallbackKey (11.29+), which RateLimiter::
// limiter gives the limits of one answer that share a key.
func fallbackLimitKey(key string, maxAttempts, decaySeconds int64) string {
	prefix := ""
	if key != "" {
		prefix = key + ":"
	}
	return prefix + "attempts:" + strconv.FormatInt(maxAttempts, 10) + ":decay:" + strconv.FormatInt(decaySeconds, 10)
}

// errQuoteBeforePHP81: PHP before 8.1 leaves ' alone in htmlentities(),
// 8.1+ writes &#039;; a Laravel 8 or 9 app may run either.
var errQuoteBeforePHP81 = errors.New("the key holds a single quote, which RateLimiter::cleanRateLimiterKey keeps on PHP before 8.1 and turns into &#039; on 8.1+: Go cannot tell which PHP the app runs; use a key without it")

// cleanRateLimiterKey is RateLimiter::cleanRateLimiterKey:
// preg_replace('/&([a-z])[a-z]+;/i', '$1', htmlentities($key)), with
// PHP 8.1+'s htmlentities flags (ENT_QUOTES | ENT_SUBSTITUTE, HTML 4.01
// entities): every character with a named entity of letters only becomes
// its first letter, the others keep their entity. Invalid UTF-8 is
// refused rather than guessed.
func cleanRateLimiterKey(version, key string) (string, error) {
	if !utf8.ValidString(key) {
		return "", errors.New("the key is not valid UTF-8")
	}
	if strings.ContainsRune(key, '\'') && appconfig.VersionCompare(version, "10") < 0 {
		return "", errQuoteBeforePHP81
	}
	var b strings.Builder
	for _, r := range key {
		if rep, ok := htmlEntityCleaned[r]; ok {
			b.WriteString(rep)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String(), nil
}

// htmlEntityCleaned maps each character htmlentities() turns into an
// entity (PHP's get_html_translation_table(HTML_ENTITIES, ENT_QUOTES |
// ENT_HTML401), generated from PHP 8.2) to what cleanRateLimiterKey's
// regular expression leaves of that entity.
var htmlEntityCleaned = map[rune]string{
	0x0022: "q", 0x0026: "a", 0x0027: "&#039;", 0x003C: "l", 0x003E: "g", 0x00A0: "n", 0x00A1: "i", 0x00A2: "c",
	0x00A3: "p", 0x00A4: "c", 0x00A5: "y", 0x00A6: "b", 0x00A7: "s", 0x00A8: "u", 0x00A9: "c", 0x00AA: "o",
	0x00AB: "l", 0x00AC: "n", 0x00AD: "s", 0x00AE: "r", 0x00AF: "m", 0x00B0: "d", 0x00B1: "p", 0x00B2: "&sup2;",
	0x00B3: "&sup3;", 0x00B4: "a", 0x00B5: "m", 0x00B6: "p", 0x00B7: "m", 0x00B8: "c", 0x00B9: "&sup1;", 0x00BA: "o", 0x00BB: "r", 0x00BC: "&frac14;", 0x00BD: "&frac12;", 0x00BE: "&frac34;", 0x00BF: "i", 0x00C0: "A",
	0x00C1: "A", 0x00C2: "A", 0x00C3: "A", 0x00C4: "A", 0x00C5: "A", 0x00C6: "A", 0x00C7: "C", 0x00C8: "E",
	0x00C9: "E", 0x00CA: "E", 0x00CB: "E", 0x00CC: "I", 0x00CD: "I", 0x00CE: "I", 0x00CF: "I", 0x00D0: "E",
	0x00D1: "N", 0x00D2: "O", 0x00D3: "O", 0x00D4: "O", 0x00D5: "O", 0x00D6: "O", 0x00D7: "t", 0x00D8: "O",
	0x00D9: "U", 0x00DA: "U", 0x00DB: "U", 0x00DC: "U", 0x00DD: "Y", 0x00DE: "T", 0x00DF: "s", 0x00E0: "a",
	0x00E1: "a", 0x00E2: "a", 0x00E3: "a", 0x00E4: "a", 0x00E5: "a", 0x00E6: "a", 0x00E7: "c", 0x00E8: "e",
	0x00E9: "e", 0x00EA: "e", 0x00EB: "e", 0x00EC: "i", 0x00ED: "i", 0x00EE: "i", 0x00EF: "i", 0x00F0: "e",
	0x00F1: "n", 0x00F2: "o", 0x00F3: "o", 0x00F4: "o", 0x00F5: "o", 0x00F6: "o", 0x00F7: "d", 0x00F8: "o",
	0x00F9: "u", 0x00FA: "u", 0x00FB: "u", 0x00FC: "u", 0x00FD: "y", 0x00FE: "t", 0x00FF: "y", 0x0152: "O",
	0x0153: "o", 0x0160: "S", 0x0161: "s", 0x0178: "Y", 0x0192: "f", 0x02C6: "c", 0x02DC: "t", 0x0391: "A",
	0x0392: "B", 0x0393: "G", 0x0394: "D", 0x0395: "E", 0x0396: "Z", 0x0397: "E", 0x0398: "T", 0x0399: "I",
	0x039A: "K", 0x039B: "L", 0x039C: "M", 0x039D: "N", 0x039E: "X", 0x039F: "O", 0x03A0: "P", 0x03A1: "R",
	0x03A3: "S", 0x03A4: "T", 0x03A5: "U", 0x03A6: "P", 0x03A7: "C", 0x03A8: "P", 0x03A9: "O", 0x03B1: "a",
	0x03B2: "b", 0x03B3: "g", 0x03B4: "d", 0x03B5: "e", 0x03B6: "z", 0x03B7: "e", 0x03B8: "t", 0x03B9: "i",
	0x03BA: "k", 0x03BB: "l", 0x03BC: "m", 0x03BD: "n", 0x03BE: "x", 0x03BF: "o", 0x03C0: "p", 0x03C1: "r",
	0x03C2: "s", 0x03C3: "s", 0x03C4: "t", 0x03C5: "u", 0x03C6: "p", 0x03C7: "c", 0x03C8: "p", 0x03C9: "o",
	0x03D1: "t", 0x03D2: "u", 0x03D6: "p", 0x2002: "e", 0x2003: "e", 0x2009: "t", 0x200C: "z", 0x200D: "z",
	0x200E: "l", 0x200F: "r", 0x2013: "n", 0x2014: "m", 0x2018: "l", 0x2019: "r", 0x201A: "s", 0x201C: "l",
	0x201D: "r", 0x201E: "b", 0x2020: "d", 0x2021: "D", 0x2022: "b", 0x2026: "h", 0x2030: "p", 0x2032: "p",
	0x2033: "P", 0x2039: "l", 0x203A: "r", 0x203E: "o", 0x2044: "f", 0x20AC: "e", 0x2111: "i", 0x2118: "w",
	0x211C: "r", 0x2122: "t", 0x2135: "a", 0x2190: "l", 0x2191: "u", 0x2192: "r", 0x2193: "d", 0x2194: "h",
	0x21B5: "c", 0x21D0: "l", 0x21D1: "u", 0x21D2: "r", 0x21D3: "d", 0x21D4: "h", 0x2200: "f", 0x2202: "p",
	0x2203: "e", 0x2205: "e", 0x2207: "n", 0x2208: "i", 0x2209: "n", 0x220B: "n", 0x220F: "p", 0x2211: "s",
	0x2212: "m", 0x2217: "l", 0x221A: "r", 0x221D: "p", 0x221E: "i", 0x2220: "a", 0x2227: "a", 0x2228: "o",
	0x2229: "c", 0x222A: "c", 0x222B: "i", 0x2234: "&there4;", 0x223C: "s", 0x2245: "c", 0x2248: "a", 0x2260: "n", 0x2261: "e", 0x2264: "l", 0x2265: "g", 0x2282: "s", 0x2283: "s", 0x2284: "n", 0x2286: "s", 0x2287: "s",
	0x2295: "o", 0x2297: "o", 0x22A5: "p", 0x22C5: "s", 0x2308: "l", 0x2309: "r", 0x230A: "l", 0x230B: "r",
	0x2329: "l", 0x232A: "r", 0x25CA: "l", 0x2660: "s", 0x2663: "c", 0x2665: "h", 0x2666: "d"}
