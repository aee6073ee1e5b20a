package beanstalkd_test

import (
	"context"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testbeanstalkd"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/jobqueue/storetest"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/beanstalkd"
	"github.com/rs/zerolog"
)

// TestConformance runs the store contract's suite on a beanstalkd of
// each test's own, on the real clock (beanstalkd times reservations and
// delays itself) with a retry_after (time-to-run) of 2 s. beanstalkd
// lists no job of a tube without reserving it: the operations that would
// are declared unsupported, and a claim cannot look past the job at a
// tube's head.
func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Config{
		Unsupported: []storetest.Op{storetest.OpClear, storetest.OpMove, storetest.OpCountClasses, storetest.OpClassesOnQueues,
			storetest.OpFindJob, storetest.OpFindJobByUUID, storetest.OpLookPastForeignHead},
		MaxPayload: 60 << 10, // beanstalkd's default max-job-size is 65,535 bytes
		Open: func(t *testing.T) storetest.Opened {
			srv := testbeanstalkd.Start(t)
			cfg := testdb.Config(t, appconfig.EngineSQLite)
			cfg.ConnectionName = "beanstalkd"
			db := testdb.Open(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s, err := beanstalkd.New(ctx, beanstalkd.Config{Connection: "beanstalkd", Host: "127.0.0.1", Port: srv.Port, Queue: "default", RetryAfter: 2 * time.Second},
				db, beanstalkd.Options{Logger: zerolog.Nop()})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return storetest.Opened{Store: s, NewBatch: func(t *testing.T, id string, total int) {
				testdb.InsertBatch(t, db, id, total, []byte("a:0:{}"))
			}}
		},
	})
}
