package jobqueue

import (
	"fmt"
	"slices"
	"strings"
)

// ClaimOptions restricts what a claim may reserve. The worker passes the
// same slices to claim after claim: a store reads them, never writes them.
type ClaimOptions struct {
	// DisplayNames, when non-empty, limits claims to jobs whose payload
	// displayName is one of these (e.g. `App\Jobs\SendMail`), so the worker
	// never reserves a job it has no handler for. PHP class names are
	// case-insensitive and handler lookup does not depend on case; the
	// claim's match does where the store's comparison does: the database
	// store compares as its LIKE does, case-sensitively on PostgreSQL
	// (store/database/SQL.md), which the conformance suite checks. Laravel
	// writes a class's declared name, so a route spelled as declared
	// matches on every store.
	DisplayNames []string
	// ExcludeDisplayNames are classes never to claim (matched as
	// DisplayNames are).
	ExcludeDisplayNames []string
	// ExcludeIDs are jobs the caller gave back (Unreserve) and must not
	// reserve again. On a queue whose claims take the head of a list
	// (Redis), a claim leaves such a job in place and takes the jobs it
	// may take from behind it.
	ExcludeIDs []int64
}

// FiltersClasses reports whether the options restrict classes at all: a
// store that reads the displayName itself need not read it otherwise.
func (o ClaimOptions) FiltersClasses() bool {
	return len(o.DisplayNames) > 0 || len(o.ExcludeDisplayNames) > 0
}

// Takes reports whether a store that reads the displayName itself (not
// in its query) takes a job of class name: never an excluded class, and
// with DisplayNames only one of them, ignoring case.
func (o ClaimOptions) Takes(name string) bool {
	equal := func(x string) bool { return strings.EqualFold(x, name) }
	if slices.ContainsFunc(o.ExcludeDisplayNames, equal) {
		return false
	}
	return len(o.DisplayNames) == 0 || slices.ContainsFunc(o.DisplayNames, equal)
}

// ClaimError is returned when reserving a selected job failed because of
// the job itself: its attempts overflow the column (tinyint unsigned on
// strict MySQL). Nothing was reserved; Job is that job as selected (in a
// batch, the one with the most attempts) so the caller can fail it, as
// Laravel 12.54+ does. Database errors are returned as they are, never as
// ClaimError.
type ClaimError struct {
	Job JobRow
	Err error
}

func (e *ClaimError) Error() string {
	return fmt.Sprintf("jobqueue: reserving job %d: %v", e.Job.ID, e.Err)
}

func (e *ClaimError) Unwrap() error { return e.Err }
