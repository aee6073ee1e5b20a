package jobqueue

import "fmt"

// LeftJobs are the jobs of one class a claim on Queue left in place, for
// one reason.
type LeftJobs struct {
	Queue string
	// Class is the jobs' displayName; "" when they have none (or the store
	// could not read one).
	Class  string
	Reason string // LeftClass, LeftGivenBack or LeftCopy
	Jobs   int64
	// More is set when the claim stopped looking at its bound: more such
	// jobs may wait further down.
	More bool
}

// Reasons a claim leaves a job in place.
const (
	// LeftClass: the worker has no handler for the job's class.
	LeftClass = "class"
	// LeftGivenBack: the worker gave the job back (to PHP workers).
	LeftGivenBack = "given_back"
	// LeftCopy: the job is a byte-for-byte copy of one reserved now.
	LeftCopy = "copy"
)

// ClassName is how messages name the class.
func (l LeftJobs) ClassName() string {
	if l.Class == "" {
		return "(no displayName Go can read)"
	}
	return l.Class
}

// String says what was left, why, and what to do about it.
func (l LeftJobs) String() string {
	why := map[string]string{
		LeftClass:     "Go has no handler for the class: a PHP worker must serve this queue, or route the class to Go",
		LeftGivenBack: "given back to PHP workers",
		LeftCopy:      "a copy of a job reserved now, waiting for it to be settled",
	}[l.Reason]
	more := ""
	if l.More {
		more = " (or more: the claim looked no further)"
	}
	return fmt.Sprintf("queue %s: %d job(s) of %s left in place for PHP workers%s; %s", l.Queue, l.Jobs, l.ClassName(), more, why)
}
