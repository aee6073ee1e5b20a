package admincmd

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/output"
	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/urfave/cli/v2"
)

// pause and continue write laraworker's pauses table as the dashboard's
// Control page does (fleet.Store.SetPause and ClearPause): every Go
// worker reads it when it claims, at most once a second, and stops
// claiming (running jobs finish), per worker or per queue. PHP workers
// are not paused.

const pauseHelp = `A pause stops Go workers from claiming new jobs; the jobs they run finish.
Every Go worker reads the pause requests when it claims, at most once a
second, on every machine (they live in laraworker's pauses table, beside
the queue), so it applies within seconds (a paused worker reads them again
after each --sleep, so continue takes up to that). --queue pauses a queue for every Go worker, also those started
later; --worker pauses one worker (its id, as the dashboard lists it, or
every running Go worker of that --name); --all pauses every running Go
worker. PHP workers are not paused (Horizon's horizon:pause pauses Horizon's
own). On Laravel 12.40+, php artisan queue:pause connection:queue (and 13.25's
queue:pause --all) pauses PHP and Go workers alike: Go workers read it from
the app's cache store; php artisan queue:continue lifts it, not this command.
A Go worker claims a queue only when neither pause holds it. ` + "`laraworker continue`" + `
withdraws pauses with the same flags (--all: every pause). The dashboard's
Control page shows and changes the same requests.`

func pauseFlags() []cli.Flag {
	return adminFlags(
		&cli.StringSliceFlag{Name: "queue", Usage: "the queue `QUEUE`, for every Go worker (repeatable, or a comma-separated list)"},
		&cli.StringSliceFlag{Name: "worker", Usage: "the Go worker `ID`, or every running Go worker whose --name is ID (repeatable)"},
		&cli.BoolFlag{Name: "all", Usage: "every running Go worker (continue: every pause)"},
	)
}

func pauseCommand() *cli.Command {
	return &cli.Command{
		Name:        "pause",
		Usage:       "stop Go workers from claiming jobs, per queue or per worker (the dashboard's pause)",
		Description: pauseHelp,
		Flags:       pauseFlags(),
		Action:      cmdline.NoArgs(func(c *cli.Context) error { return changePauses(c, true) }),
	}
}

func continueCommand() *cli.Command {
	return &cli.Command{
		Name:        "continue",
		Usage:       "let paused Go workers claim jobs again (the dashboard's resume)",
		Description: pauseHelp,
		Flags:       pauseFlags(),
		Action:      cmdline.NoArgs(func(c *cli.Context) error { return changePauses(c, false) }),
	}
}

// pauseTarget is one pause request: a queue, or a worker with what the
// output says of it.
type pauseTarget struct {
	Scope  string `json:"scope"`
	Target string `json:"target"`
	// Worker describes a worker target ("images on web-1, pid 4242").
	Worker string `json:"worker,omitempty"`
	// Changed is false when the request was already there (pause) or was
	// not (continue).
	Changed bool `json:"changed"`
}

func changePauses(c *cli.Context, on bool) error {
	name := c.Command.Name
	queues := splitList(c.StringSlice("queue"))
	workers := c.StringSlice("worker")
	all := c.Bool("all")
	switch {
	case !all && len(queues) == 0 && len(workers) == 0:
		return cmdline.UsageError("%s: name what to %s: --queue QUEUE, --worker ID or --all; see '%s --help'", name, name, name)
	case all && (len(queues) > 0 || len(workers) > 0):
		return cmdline.UsageError("%s: --all goes alone, without --queue or --worker", name)
	}
	s, err := queueconn.OpenSession(c)
	if err != nil {
		return err
	}
	defer s.Close()
	own, err := s.Conn.Database("pause requests")
	if err != nil {
		return s.Fail(err)
	}
	ctx, cancel := context.WithTimeout(c.Context, 30*time.Second)
	defer cancel()
	targets, err := resolvePauses(ctx, own.Fleet, on, queues, workers, all)
	if err != nil {
		return s.Fail(err)
	}
	for _, t := range targets {
		if !t.Changed {
			continue
		}
		if on {
			err = own.Fleet.SetPause(ctx, t.Scope, t.Target, time.Now())
		} else {
			err = own.Fleet.ClearPause(ctx, t.Scope, t.Target)
		}
		if err != nil {
			return s.Fail(fmt.Errorf("%s %s %s: %w (run `laraworker tables` if laraworker's tables are missing)", name, t.Scope, t.Target, err))
		}
	}
	return printPauses(c, on, targets)
}

// splitList reads repeated flags that may also hold comma-separated
// lists, as artisan's --queue=high,default.
func splitList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" && !slices.Contains(out, part) {
				out = append(out, part)
			}
		}
	}
	return out
}

// resolvePauses turns the flags into pause requests, each marked changed
// when writing it changes the table.
func resolvePauses(ctx context.Context, fl *fleet.Store, on bool, queues, workers []string, all bool) ([]pauseTarget, error) {
	rows, err := fl.Workers(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the workers: %w (run `laraworker tables` to create laraworker's tables)", err)
	}
	current, err := fl.Pauses(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the pause requests: %w", err)
	}
	paused := map[[2]string]bool{}
	for _, p := range current {
		paused[[2]string{p.Scope, p.Target}] = true
	}
	var out []pauseTarget
	add := func(scope, target, worker string) {
		for _, t := range out {
			if t.Scope == scope && t.Target == target {
				return
			}
		}
		out = append(out, pauseTarget{Scope: scope, Target: target, Worker: worker, Changed: paused[[2]string{scope, target}] != on})
	}
	for _, q := range queues {
		if len(q) > 191 {
			return nil, fmt.Errorf("queue name %q is longer than 191 bytes", q)
		}
		add(fleet.ScopeQueue, q, "")
	}
	switch {
	case all && on:
		live := runningGoWorkers(rows)
		if len(live) == 0 {
			return nil, fmt.Errorf("no Go worker is running%s", listWorkers(rows))
		}
		for _, w := range live {
			add(fleet.ScopeWorker, w.ID, describeWorker(w))
		}
	case all:
		for _, p := range current {
			add(p.Scope, p.Target, describeTarget(rows, p))
		}
	}
	for _, arg := range workers {
		matched, err := matchWorkers(rows, arg, on, paused)
		if err != nil {
			return nil, err
		}
		for _, w := range matched {
			add(fleet.ScopeWorker, w.ID, describeWorker(w))
		}
	}
	return out, nil
}

// matchWorkers finds the Go workers arg names: by id, else by --name among
// the running ones. continue also takes the id of a worker whose row is
// gone but whose pause is still there.
func matchWorkers(rows []fleet.WorkerRow, arg string, on bool, paused map[[2]string]bool) ([]fleet.WorkerRow, error) {
	for _, w := range rows {
		if w.ID != arg {
			continue
		}
		switch {
		case w.Kind != fleet.KindGo:
			return nil, fmt.Errorf("worker %s is a PHP worker: laraworker pauses Go workers only (pause its queue for the Go workers, or stop it)", arg)
		case on && w.StoppedAt != nil:
			return nil, fmt.Errorf("worker %s has stopped%s", arg, listWorkers(rows))
		}
		return []fleet.WorkerRow{w}, nil
	}
	var out []fleet.WorkerRow
	for _, w := range runningGoWorkers(rows) {
		if w.Name == arg {
			out = append(out, w)
		}
	}
	if len(out) == 0 && !on && paused[[2]string{fleet.ScopeWorker, arg}] {
		return []fleet.WorkerRow{{ID: arg, Kind: fleet.KindGo}}, nil
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no running Go worker has the id or the name %q%s", arg, listWorkers(rows))
	}
	return out, nil
}

// runningGoWorkers are the Go workers whose rows say they run, as the
// dashboard's Control page lists them.
func runningGoWorkers(rows []fleet.WorkerRow) []fleet.WorkerRow {
	var out []fleet.WorkerRow
	for _, w := range rows {
		if w.Kind == fleet.KindGo && w.StoppedAt == nil {
			out = append(out, w)
		}
	}
	return out
}

func describeWorker(w fleet.WorkerRow) string {
	if w.Host == "" {
		return ""
	}
	return fmt.Sprintf("%s on %s, pid %d", w.Name, w.Host, w.PID)
}

func describeTarget(rows []fleet.WorkerRow, p fleet.Pause) string {
	for _, w := range rows {
		if p.Scope == fleet.ScopeWorker && w.ID == p.Target {
			return describeWorker(w)
		}
	}
	return ""
}

// listWorkers names the running Go workers, for an error message.
func listWorkers(rows []fleet.WorkerRow) string {
	live := runningGoWorkers(rows)
	if len(live) == 0 {
		return " (no Go worker is running)"
	}
	parts := make([]string, 0, len(live))
	for _, w := range live {
		parts = append(parts, w.ID+" ("+w.Name+")")
	}
	return "; running Go workers: " + strings.Join(parts, ", ")
}

func printPauses(c *cli.Context, on bool, targets []pauseTarget) error {
	if c.Bool("json") {
		key := "continued"
		if on {
			key = "paused"
		}
		if targets == nil {
			targets = []pauseTarget{}
		}
		return output.WriteJSON(c.App.Writer, map[string]any{key: targets})
	}
	if len(targets) == 0 {
		output.Say(c, "Nothing is paused.")
		return nil
	}
	for _, t := range targets {
		what := fmt.Sprintf("%s [%s]", t.Scope, t.Target)
		if t.Worker != "" {
			what += " (" + t.Worker + ")"
		}
		switch {
		case on && t.Changed:
			output.Say(c, "Paused %s.", what)
		case on:
			output.Say(c, "%s was paused already.", strings.ToUpper(what[:1])+what[1:])
		case t.Changed:
			output.Say(c, "Continued %s.", what)
		default:
			output.Say(c, "%s was not paused.", strings.ToUpper(what[:1])+what[1:])
		}
	}
	if on {
		output.Say(c, "Go workers stop claiming within seconds; the jobs they run finish. PHP workers are not paused (php artisan queue:pause, Laravel 12.40+, pauses both).")
	} else {
		output.Say(c, "Go workers claim again within seconds.")
	}
	return nil
}
