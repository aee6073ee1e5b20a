package queueconn

import (
	"context"
	"fmt"
	"time"

	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/sqs"
)

// This file is the sqs driver's constructor: the one place of the CLI
// that names package store/sqs.

// openSQSConnection opens Laravel's SQS queue on the app's sqs queue
// connection, with its failed jobs, batches and laraworker's own tables in
// the app's database (and the app's Redis cache store, as beside a
// database queue).
func openSQSConnection(ctx context.Context, name string, cfg appconfig.Config, info appconfig.AppInfo, opts Options) (*Connection, error) {
	q := info.SQSQueue
	if q == nil {
		return nil, fmt.Errorf("queue connection %q has driver sqs, but its configuration was not read (%s): it is read through the app's php, or from config files Go can evaluate", name, OrString(info.Why, "no app folder"))
	}
	enc, err := Encrypter(cfg)
	if err != nil {
		return nil, err
	}
	var wait time.Duration // the store's default long poll
	if opts.NoLongPoll {
		wait = -1
	}
	// The database side: failed_jobs, job_batches, the hooks queue, the
	// cache stores and laraworker's own tables, under the sqs connection's
	// name.
	dbCfg := cfg
	dbCfg.ConnectionName = name
	app, err := openAppDatabase(ctx, dbCfg, info, opts)
	if err != nil {
		return nil, err
	}
	st, err := sqs.Open(ctx, sqs.App{Connection: name, Queue: map[string]any(q.Queue), Vapor: q.Vapor},
		sqs.OpenOptions{Repository: app.db, Logger: opts.Log, Encrypter: enc, Wait: wait})
	if err != nil {
		app.Close()
		return nil, err
	}
	if ignored := st.Queue().Config().Ignored; len(ignored) > 0 {
		opts.Log.Warn().Strs("keys", ignored).Str("connection", name).
			Msg("the sqs connection sets AWS SDK options laraworker does not apply (it applies region, endpoint, credentials, profile, http timeouts, retries, use_fips_endpoint, use_dual_stack_endpoint)")
	}
	if st.Queue().Config().Vapor {
		opts.Log.Info().Str("connection", name).Msg("laravel/vapor-core serves this connection: attempts are counted in the payload and a release sends the job again, as VaporJob does")
	}
	return app.repositoryConnection(cfg, st, opts, "sqs"), nil
}
