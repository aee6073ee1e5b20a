package console

// The JSON the admin commands print, as a script reads it: the tests
// decode the commands' --json output into these, key by key.

type retryJSON struct {
	UUID  string `json:"uuid"`
	Queue string `json:"queue"`
	JobID int64  `json:"job_id,omitempty"`
	Error string `json:"error,omitempty"`
	// Deprecated: job_id's former name, kept for one release.
	JobIDOld int64 `json:"jobId,omitempty"`
}

type sizeJSON struct {
	Queue    string `json:"queue"`
	Ready    int64  `json:"ready"`
	Delayed  int64  `json:"delayed"`
	Reserved int64  `json:"reserved"`
	Expired  int64  `json:"expired"`
	Total    int64  `json:"total"`
}

type moveRow struct {
	Class              string `json:"class"`
	FromBefore         int64  `json:"from_unreserved_before"`
	FromReservedBefore int64  `json:"from_reserved_before"`
	ToBefore           int64  `json:"to_before"`
	Moved              int64  `json:"moved"`
	FromAfter          int64  `json:"from_unreserved_after"`
	FromReservedAfter  int64  `json:"from_reserved_after"`
	ToAfter            int64  `json:"to_after"`
}

type pauseTarget struct {
	Scope  string `json:"scope"`
	Target string `json:"target"`
	// Worker describes a worker target ("images on web-1, pid 4242").
	Worker string `json:"worker,omitempty"`
	// Changed is false when the request was already there (pause) or was
	// not (continue).
	Changed bool `json:"changed"`
}
