package worker

import "errors"

// Health is nil while the worker can do its work, else every
// configuration problem it has met (a /healthz endpoint turns unhealthy):
// a failure the worker's own setup causes (no APP_KEY or the wrong one, a
// missing table or permission, job middleware Go cannot apply), whose
// jobs are given back untouched, never failed.
func (w *Worker) Health() error {
	var errs []error
	for _, p := range w.problems.All() {
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}
