package bridgeproto

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/laraworker/laraworker/laravel/payload"
)

// parseVersion reads "8.83", "12.67.0" or "v13.26.1" into up to three
// numbers; ok is false for anything else.
func parseVersion(v string) (nums [3]int, ok bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "v")
	parts := strings.Split(v, ".")
	if v == "" || len(parts) > 3 {
		return nums, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return nums, false
		}
		nums[i] = n
	}
	return nums, true
}

// atLeast reports whether version v is min or later; both must parse.
func atLeast(v, min string) bool {
	a, _ := parseVersion(v)
	b, _ := parseVersion(min)
	for i := range a {
		if a[i] != b[i] {
			return a[i] > b[i]
		}
	}
	return true
}

// checkVersion says what is wrong with a Laravel version, nil when it is
// one laraworker knows (8 to 13).
func checkVersion(v string) error {
	nums, ok := parseVersion(v)
	if !ok {
		return fmt.Errorf("bridgeproto: Laravel version %q: want a version such as 8.83 or 12.67.0", v)
	}
	if nums[0] < 8 || nums[0] > 13 {
		return fmt.Errorf("bridgeproto: Laravel version %q: the bridge supports Laravel 8 to 13", v)
	}
	return nil
}

// ShapeFor is the payload key set Laravel's dispatch() writes on the app's
// version (payload.ShapeOf): "" gives Shape8, which every version reads.
func ShapeFor(version string) (payload.Shape, error) {
	if version == "" {
		return payload.Shape8, nil
	}
	if err := checkVersion(version); err != nil {
		return 0, err
	}
	nums, _ := parseVersion(version)
	return payload.ShapeOf(nums[0], nums[1]), nil
}
