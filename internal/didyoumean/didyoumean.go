// Package didyoumean finds the candidate a mistyped name was meant to be:
// the same name once normalised (case, doubled or leading backslashes), the
// same short class name, or the closest by edit distance.
package didyoumean

import "strings"

// Normalizer maps a name to the form names are compared in.
type Normalizer func(string) string

// Lower compares case-insensitively.
func Lower(s string) string { return strings.ToLower(s) }

// ClassName compares PHP class names: case-insensitively (PHP's own rule),
// with runs of backslashes (a shell or JSON escape left in: App\\Jobs\\X),
// forward slashes and a leading backslash reduced to the single separators
// of the class name Laravel writes in payloads.
func ClassName(s string) string {
	s = strings.ReplaceAll(strings.TrimSpace(s), "/", `\`)
	for strings.Contains(s, `\\`) {
		s = strings.ReplaceAll(s, `\\`, `\`)
	}
	return strings.ToLower(strings.TrimPrefix(s, `\`))
}

// Suggest returns the candidate input was most likely meant to be, and
// false when none is close: an exact match after norm first, then (for
// class names) a unique candidate with the same last segment, then the
// closest within an edit distance of a third of the input's length (at
// least 1, at most 3). A candidate equal to input is not a suggestion.
func Suggest(input string, candidates []string, norm Normalizer) (string, bool) {
	if norm == nil {
		norm = Lower
	}
	n := norm(input)
	for _, c := range candidates {
		if c != input && norm(c) == n {
			return c, true
		}
	}
	if short := lastSegment(n); short != n {
		if c, ok := uniqueShortMatch(short, candidates, norm); ok && c != input {
			return c, true
		}
	} else if c, ok := uniqueShortMatch(n, candidates, norm); ok && c != input {
		return c, true // a short name given for a namespaced class
	} else if !ok && c == "" && countShort(n, candidates, norm) > 1 {
		return "", false // a short name of several classes: no guess
	}
	best, bestDist := "", maxDistance(n)+1
	for _, c := range candidates {
		if c == input {
			continue
		}
		nc := norm(c)
		d := Distance(n, nc)
		if short := lastSegment(nc); short != nc && lastSegment(n) == n {
			d = min(d, Distance(n, short)) // a short name, mistyped
		}
		if d < bestDist {
			best, bestDist = c, d
		}
	}
	return best, best != ""
}

func maxDistance(s string) int {
	d := len([]rune(s)) / 3
	if d < 1 {
		return 1
	}
	if d > 3 {
		return 3
	}
	return d
}

func lastSegment(s string) string {
	if i := strings.LastIndexByte(s, '\\'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// uniqueShortMatch finds the one candidate whose last segment is short.
func uniqueShortMatch(short string, candidates []string, norm Normalizer) (string, bool) {
	found := ""
	for _, c := range candidates {
		if lastSegment(norm(c)) == short {
			if found != "" && found != c {
				return "", false
			}
			found = c
		}
	}
	return found, found != ""
}

func countShort(short string, candidates []string, norm Normalizer) int {
	n := 0
	for _, c := range candidates {
		if lastSegment(norm(c)) == short {
			n++
		}
	}
	return n
}

// Distance is the Levenshtein distance between a and b, in runes.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
