package handlers

// PHPException is an error with the PHP class name failed_jobs should
// show: Laravel's own exceptions, or a handler's choice (a handler that
// returns one fails the job with that class and message).
type PHPException struct {
	Class   string
	Message string
}

func (e *PHPException) Error() string {
	if e.Message == "" {
		return e.Class
	}
	return e.Class + ": " + e.Message
}
