package phpclass

import (
	"strconv"
	"strings"
)

// VersionAtLeast reports whether a Laravel version ("12.67.0") is min
// ("11.39") or later, comparing the numeric parts; missing parts count as
// 0 and a part's non-digit tail ("x-dev") is ignored. An empty version is
// not at least anything.
func VersionAtLeast(version, min string) bool {
	if version == "" {
		return false
	}
	v, m := versionParts(version), versionParts(min)
	for i := 0; i < max(len(v), len(m)); i++ {
		a, b := at(v, i), at(m, i)
		if a != b {
			return a > b
		}
	}
	return true
}

func versionParts(s string) []int {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "v"), "V")
	var out []int
	for _, p := range strings.Split(s, ".") {
		end := 0
		for end < len(p) && p[end] >= '0' && p[end] <= '9' {
			end++
		}
		n, _ := strconv.Atoi(p[:end])
		out = append(out, n)
		if end < len(p) {
			break // 13.x-dev: nothing after the first non-numeric part
		}
	}
	return out
}

func at(p []int, i int) int {
	if i < len(p) {
		return p[i]
	}
	return 0
}
