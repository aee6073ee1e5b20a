package sqs_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/sqsproto"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testsqs"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/jobqueue/storetest"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/sqs"
)

// TestConformance runs the store contract's suite on fauxqs, each test on
// standard queues of its own (created as the suite names them, with a
// visibility timeout, the store's retry_after, of 2 s), on the real
// clock. What SQS cannot do is declared: list its queues (Sizes counts
// the default one), count or read jobs without receiving them, tell a
// lost reservation at a plain delete, keep a standard queue in order,
// tell a released job (invisible for its backoff) from a reserved one.
func TestConformance(t *testing.T) {
	storetest.Run(t, storetest.Config{
		Unsupported: []storetest.Op{storetest.OpSizesEveryQueue, storetest.OpCountClasses, storetest.OpClassesOnQueues,
			storetest.OpFindJob, storetest.OpFindJobByUUID, storetest.OpFencedDelete, storetest.OpFIFO, storetest.OpSizesByState},
		MaxPayload: 200 << 10, // SQS takes 256 KiB without its overflow to S3
		Open:       openSQS,
	})
}

// openSQS opens a store on fresh queues of the shared fauxqs.
func openSQS(t *testing.T) storetest.Opened {
	srv := testsqs.Start(t)
	var mu sync.Mutex
	names := map[string]string{}
	queue := func(name string) string {
		mu.Lock()
		defer mu.Unlock()
		if names[name] == "" {
			names[name], _ = srv.Queue(t, name, map[string]string{"VisibilityTimeout": "2"})
		}
		return names[name]
	}
	cfg := testdb.Config(t, appconfig.EngineSQLite)
	cfg.ConnectionName = "sqs"
	db := testdb.Open(t, cfg)
	conn := map[string]any{"driver": "sqs", "key": "test", "secret": "test", "prefix": srv.Prefix, "queue": queue("default"),
		"region": "us-east-1", "endpoint": srv.Endpoint, "suffix": nil, "after_commit": false}
	pc, err := sqsproto.FromLaravel("sqs", conn, sqsproto.LaravelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	q, err := sqsproto.Open(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sqs.New(ctx, q, db, sqs.Options{Wait: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return storetest.Opened{Store: s, QueueName: queue,
		RecordedQueue: func(name string) string { return strings.TrimSuffix(srv.Prefix, "/") + "/" + name },
		Size: func(t *testing.T, name string) jobqueue.QueueSize {
			size, err := s.QueueSize(context.Background(), name)
			if err != nil {
				t.Fatal(err)
			}
			return size
		},
		NewBatch: func(t *testing.T, id string, total int) { testdb.InsertBatch(t, db, id, total, []byte("a:0:{}")) },
	}
}
