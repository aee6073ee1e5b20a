package database

import (
	"slices"
	"strings"

	"github.com/laraworker/laraworker/jobqueue"
)

// renderedFilter is a claim's class lists as Laravel's query takes them:
// the LIKE patterns of the classes to take, then of those to leave, and
// the lists joined for the scan bounds' key. The worker passes the same
// lists claim after claim (it keeps its filter until a problem changes
// it), and rendering them on each claim cost a pattern-cache lookup per
// class and three allocations; the last rendering is kept and used while
// the lists are equal. They are compared by content, so a caller that
// reuses or changes its slices still gets its own lists' rendering. One
// rendering is kept: workers with different filters on one Queue render
// theirs on each claim, as every claim did before.
type renderedFilter struct {
	names, exclude []string // copies of the lists rendered
	patterns       []any    // shared by every claim: never appended to
	nNames         int      // patterns[:nNames] are names'
	key            string
	err            error
}

// renderedFilter is the rendering of o's class lists: the last one when
// the lists are the same.
func (q *Queue) renderedFilter(o jobqueue.ClaimOptions) (*renderedFilter, error) {
	f := q.lastFilter.Load()
	if f == nil || !slices.Equal(f.names, o.DisplayNames) || !slices.Equal(f.exclude, o.ExcludeDisplayNames) {
		f = renderFilter(o.DisplayNames, o.ExcludeDisplayNames)
		q.lastFilter.Store(f)
	}
	return f, f.err
}

// renderFilter renders the lists (an invalid name is the filter's error).
func renderFilter(names, exclude []string) *renderedFilter {
	f := &renderedFilter{names: slices.Clone(names), exclude: slices.Clone(exclude),
		key: strings.Join(names, "\x01") + "\x00" + strings.Join(exclude, "\x01")}
	take, err := likePatterns(names)
	if err != nil {
		f.err = err
		return f
	}
	leave, err := likePatterns(exclude)
	if err != nil {
		f.err = err
		return f
	}
	f.nNames = len(take)
	f.patterns = slices.Clip(append(take, leave...))
	return f
}
