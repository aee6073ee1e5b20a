package horizon

import (
	"context"
	"errors"
	"time"

	"github.com/rs/zerolog"
)

// Controlled is what Horizon's controls reach in a Go worker.
type Controlled interface {
	// Paused says whether the worker claims no new jobs.
	Paused() bool
	// Pause and Resume are SupervisorCommands\Pause and ContinueWorking
	// (and SIGUSR2, SIGCONT, which the worker's signal handler takes).
	Pause()
	Resume()
	// Terminate stops the worker as a stop signal does, its process then
	// exiting with status (SupervisorCommands\Terminate).
	Terminate(status int)
}

// Registration keeps one Go worker in Horizon's process lists while it
// runs: it writes the records every Every (Horizon's supervisors write
// theirs every second), applies the commands pushed to the supervisor's
// list, and removes the records when it ends.
type Registration struct {
	Processes *Processes
	Worker    Controlled
	Logger    zerolog.Logger
	// Every is how often the records are written (default 1s); a pause or
	// resume shows at the next write.
	Every time.Duration

	failing bool
}

// Start writes the records once, so the worker is listed (and horizon:
// pause reaches it) before it claims anything. Install the worker's
// SIGUSR2 and SIGCONT handlers first: the records hold its pid, and those
// signals' default action ends a process.
func (g *Registration) Start(ctx context.Context) error {
	if g.Every <= 0 {
		g.Every = time.Second
	}
	return g.Processes.Persist(ctx, g.Worker.Paused())
}

// Run applies commands and rewrites the records until ctx ends, then
// removes them (with a few seconds of its own: ctx is over).
func (g *Registration) Run(ctx context.Context) {
	t := time.NewTicker(g.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			g.forget()
			return
		case <-t.C:
			g.loop(ctx)
		}
	}
}

// loop is one pass of a Horizon supervisor's loop: its pending commands,
// then its record.
func (g *Registration) loop(ctx context.Context) {
	cmds, err := g.Processes.TakeCommands(ctx)
	var bad *BadCommandsError
	switch {
	case errors.As(err, &bad):
		g.Logger.Warn().Err(err).Msg("Horizon: an entry of this worker's supervisor command list is not a command; it is dropped")
	case err != nil && ctx.Err() == nil:
		// The records' write below fails the same way and says so.
		g.Logger.Debug().Err(err).Msg("Horizon: reading this worker's supervisor command list failed")
	}
	for _, c := range cmds {
		g.apply(c)
	}
	if ctx.Err() != nil {
		return
	}
	err = g.Processes.Persist(ctx, g.Worker.Paused())
	switch {
	case err != nil && ctx.Err() == nil && !g.failing:
		g.failing = true
		g.Logger.Error().Err(err).Msg("Horizon: writing this worker's master and supervisor records failed; Horizon stops listing it within 15 s and horizon:pause does not reach it until the writes work again (retried every second, logged when they do)")
	case err == nil && g.failing:
		g.failing = false
		g.Logger.Info().Msg("Horizon: this worker's master and supervisor records are written again")
	}
}

// apply does what a Horizon supervisor does with a command from its list.
func (g *Registration) apply(c Command) {
	log := g.Logger.Info().Str("command", c.Command).Str("supervisor", g.Processes.SupervisorName())
	switch c.Command {
	case CommandPause:
		log.Msg("Horizon: pausing, as the supervisor's command list asks")
		g.Worker.Pause()
	case CommandContinue:
		log.Msg("Horizon: continuing, as the supervisor's command list asks")
		g.Worker.Resume()
	case CommandRestart:
		// A supervisor restarts its PHP workers to load new code; a Go
		// worker has none to reload, and restart() also resumes.
		log.Msg("Horizon: restart asked: a Go worker has no PHP code to reload; it resumes if paused, as restart() does")
		g.Worker.Resume()
	case CommandTerminate:
		status, _ := numeric(c.Options["status"])
		log.Int("status", int(status)).Msg("Horizon: terminating, as the supervisor's command list asks: running jobs finish within --grace")
		g.Worker.Terminate(int(status))
	case CommandScale, CommandBalance:
		g.Logger.Warn().Str("command", c.Command).Interface("options", c.Options).
			Msg("Horizon: a Go worker runs a fixed --concurrency and does not scale or balance: the command is ignored")
	default:
		g.Logger.Warn().Str("command", c.Command).Msg("Horizon: unknown supervisor command, ignored")
	}
}

// forget removes the records with a deadline of its own.
func (g *Registration) forget() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := g.Processes.Forget(ctx); err != nil {
		g.Logger.Warn().Err(err).Msg("Horizon: removing this worker's master and supervisor records failed; they expire within 30 s")
	}
}
