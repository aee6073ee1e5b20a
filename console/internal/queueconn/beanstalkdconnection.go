package queueconn

import (
	"context"
	"fmt"

	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/beanstalkd"
)

// This file is the beanstalkd driver's constructor: the one place of the
// CLI that names package store/beanstalkd.

// openBeanstalkdConnection opens Laravel's beanstalkd queue on the app's
// beanstalkd queue connection, with its failed jobs, batches and
// laraworker's own tables in the app's database (queue.failed's), and
// what the app keeps in Redis for its workers, as beside a database
// queue.
func openBeanstalkdConnection(ctx context.Context, name string, cfg appconfig.Config, info appconfig.AppInfo, opts Options) (*Connection, error) {
	if info.BeanstalkdQueue == nil {
		return nil, fmt.Errorf("queue connection %q has driver beanstalkd, but its configuration was not read (%s): it is read through the app's php, or from config files Go can evaluate", name, OrString(info.Why, "no app folder"))
	}
	bcfg, err := beanstalkd.FromLaravel(name, info.BeanstalkdQueue)
	if err != nil {
		return nil, err
	}
	dbCfg := cfg
	dbCfg.ConnectionName = name
	app, err := openAppDatabase(ctx, dbCfg, info, opts)
	if err != nil {
		return nil, err
	}
	st, err := beanstalkd.New(ctx, bcfg, app.db, beanstalkd.Options{Logger: opts.Log})
	if err != nil {
		app.Close()
		return nil, err
	}
	// The dashboard lists no pending job of a tube: beanstalkd shows none
	// without reserving it.
	return app.repositoryConnection(cfg, st, opts, "beanstalkd"), nil
}
