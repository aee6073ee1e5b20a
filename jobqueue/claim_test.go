package jobqueue

import "testing"

// TestClaimOptionsTakes: no filter takes every class; DisplayNames take
// only their classes, ignoring case as PHP's class names do; an excluded
// class is never taken, even when listed.
func TestClaimOptionsTakes(t *testing.T) {
	a, b := `App\Jobs\A`, `App\Jobs\B`
	for _, c := range []struct {
		opts ClaimOptions
		name string
		want bool
	}{
		{ClaimOptions{}, a, true},
		{ClaimOptions{}, "", true},
		{ClaimOptions{DisplayNames: []string{a}}, a, true},
		{ClaimOptions{DisplayNames: []string{a}}, `app\jobs\a`, true},
		{ClaimOptions{DisplayNames: []string{a}}, b, false},
		{ClaimOptions{DisplayNames: []string{a}}, "", false},
		{ClaimOptions{ExcludeDisplayNames: []string{a}}, `APP\JOBS\A`, false},
		{ClaimOptions{ExcludeDisplayNames: []string{a}}, b, true},
		{ClaimOptions{DisplayNames: []string{a, b}, ExcludeDisplayNames: []string{a}}, a, false},
		{ClaimOptions{DisplayNames: []string{a, b}, ExcludeDisplayNames: []string{a}}, b, true},
	} {
		if got := c.opts.Takes(c.name); got != c.want {
			t.Errorf("%+v.Takes(%q) = %v, want %v", c.opts, c.name, got, c.want)
		}
	}
}

// TestClaimOptionsFiltersClasses: only options naming classes (to take or
// to exclude) filter them; excluded ids do not.
func TestClaimOptionsFiltersClasses(t *testing.T) {
	for _, c := range []struct {
		opts ClaimOptions
		want bool
	}{
		{ClaimOptions{}, false},
		{ClaimOptions{ExcludeIDs: []int64{1}}, false},
		{ClaimOptions{DisplayNames: []string{`App\Jobs\A`}}, true},
		{ClaimOptions{ExcludeDisplayNames: []string{`App\Jobs\A`}}, true},
	} {
		if got := c.opts.FiltersClasses(); got != c.want {
			t.Errorf("%+v.FiltersClasses() = %v, want %v", c.opts, got, c.want)
		}
	}
}
