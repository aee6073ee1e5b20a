package database

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
)

// TestReleaseFailRetryKeep1267PayloadsByteForByte: every payload a real
// Laravel 12.67 app wrote survives release and fail unchanged (new keys
// such as createdAt, delay, data.batchId and illuminate:log:context
// included), and retry pushes what queue:retry would.
func TestReleaseFailRetryKeep1267PayloadsByteForByte(t *testing.T) {
	files, err := filepath.Glob("../../testdata/laravel-12.67/payloads/*.json")
	if err != nil {
		t.Fatal(err)
	}
	var raws [][]byte
	for _, f := range files {
		base := filepath.Base(f)
		if strings.HasPrefix(base, "_") || strings.HasSuffix(base, ".all.json") || strings.HasSuffix(base, "_row.json") {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		raws = append(raws, raw)
	}
	forEachEngine(t, func(t *testing.T, e *testEnv) {
		for _, raw := range raws {
			if _, err := e.q.Push(e.ctx, jobqueue.PushItem{Queue: "default", Payload: raw}); err != nil {
				t.Fatal(err)
			}
			job, err := e.q.claimOne(e.ctx, []string{"default"}, jobqueue.ClaimOptions{})
			if err != nil || job == nil {
				t.Fatalf("claim: %v", err)
			}
			if !bytes.Equal(job.Payload, raw) {
				t.Fatalf("claimed payload differs:\n got %s\nwant %s", job.Payload, raw)
			}
			if err := e.q.Release(e.ctx, *job, time.Second); err != nil {
				t.Fatal(err)
			}
			e.clock.Set(e.clock.Now().Add(2 * time.Second))
			released, err := e.q.claimOne(e.ctx, []string{"default"}, jobqueue.ClaimOptions{})
			if err != nil || released == nil {
				t.Fatalf("claim after release: %v", err)
			}
			if !bytes.Equal(released.Payload, raw) {
				t.Errorf("released payload differs:\n got %s\nwant %s", released.Payload, raw)
			}
			p, err := payload.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.q.Fail(e.ctx, *released, p.UUID, "RuntimeException: boom", jobqueue.Followup{}); err != nil {
				t.Fatal(err)
			}
			f, err := e.q.FindFailed(e.ctx, p.UUID)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f.Payload, raw) {
				t.Errorf("failed_jobs payload differs:\n got %s\nwant %s", f.Payload, raw)
			}
			reencoded := func(b []byte) ([]byte, error) { return payload.ReencodeLikeRetry(b, nil) }
			res, err := e.q.Retry(e.ctx, []string{p.UUID}, reencoded)
			if err != nil || len(res) != 1 || res[0].Err != nil {
				t.Fatalf("retry: %v %+v", err, res)
			}
			want, _ := payload.ReencodeLikeRetry(raw, nil)
			if got := e.jobByID(t, res[0].NewID); !bytes.Equal(got.Payload, want) {
				t.Errorf("retried payload differs:\n got %s\nwant %s", got.Payload, want)
			}
			e.exec(t, "delete from "+e.q.d.Quote(e.cfg.JobsTable))
		}
	})
}
