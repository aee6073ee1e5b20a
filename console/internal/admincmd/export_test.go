package admincmd

// The admin commands' JSON rows, for the tests of package admincmd_test
// (which run the whole CLI) to read the --json output into.
type (
	RetryJSON   = retryJSON
	SizeJSON    = sizeJSON
	MoveRow     = moveRow
	PauseTarget = pauseTarget
)
