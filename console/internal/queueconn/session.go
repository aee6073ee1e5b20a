package queueconn

import (
	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/output"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/urfave/cli/v2"
)

// Session is one command's open queue connection and the config it came
// from (kept to scrub secrets out of error messages): what the admin
// commands, push and inspect --id run on.
type Session struct {
	c    *cli.Context
	Cfg  appconfig.Config
	Info appconfig.AppInfo
	Conn *Connection
	// Q is the connection's store: artisan's queue:* operations and the
	// failed job provider.
	Q jobqueue.Store
}

// OpenSession reads the app's configuration as the connection flags say
// and opens its queue connection.
func OpenSession(c *cli.Context) (*Session, error) {
	s := &Session{c: c}
	cfg, info, err := LoadAppConfig(c, cmdline.ConnectionOverrides(c))
	if err != nil {
		return nil, s.Fail(err)
	}
	s.Cfg, s.Info = cfg, info
	if s.Conn, err = Open(c.Context, cfg, info, Options{}); err != nil {
		return nil, s.Fail(err)
	}
	s.Q = s.Conn.Store
	return s, nil
}

// Close closes the connection.
func (s *Session) Close() { s.Conn.Close() }

// Fail turns err into the command's one-line error. Secrets are scrubbed
// again here although package laravel already keeps them out: a driver
// message quoting a password must never reach a terminal or a log.
func (s *Session) Fail(err error) error {
	return cli.Exit(s.Clean(s.c.Command.Name+": "+err.Error()), 1)
}

// Clean is msg on one line without the app's secrets (the config's, every
// connection's credentials).
func (s *Session) Clean(msg string) string {
	return ErrorLine(s.Cfg, output.Secrets(s.c.App).String(msg))
}
