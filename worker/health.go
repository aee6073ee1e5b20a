package worker

import (
	"errors"

	"github.com/laraworker/laraworker/worker/internal/configproblem"
)

// ConfigError is a configuration problem, as Health reports it: a failure
// the worker's own setup causes (no APP_KEY or the wrong one, a missing
// table or permission, job middleware Go cannot apply). Its jobs are
// given back untouched, never failed.
type ConfigError = configproblem.Error

// Health is nil while the worker can do its work, else every
// configuration problem it has met (a /healthz endpoint turns unhealthy).
func (w *Worker) Health() error {
	var errs []error
	for _, p := range w.problems.All() {
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}
