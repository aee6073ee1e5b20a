package sqsproto

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testsqs"
)

// These tests run against fauxqs (internal/testutil/testsqs). Each also
// checks the server behaves as AWS documents the behaviour the store
// relies on (docs/SQS.md's fidelity table lists them).

func TestMain(m *testing.M) { testsqs.Main(m) }

// open is a Queue on the test server, its default queue a fresh one.
func open(t *testing.T, base string, attrs map[string]string) (*Queue, string) {
	t.Helper()
	srv := testsqs.Start(t)
	name, url := srv.Queue(t, base, attrs)
	conn := skeleton(map[string]any{"prefix": srv.Prefix, "queue": name, "endpoint": srv.Endpoint, "key": "test", "secret": "test"})
	cfg, err := FromLaravel("sqs", conn, LaravelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	q, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if q.URL("") != url {
		t.Fatalf("the default queue's URL is %s, the server's %s", q.URL(""), url)
	}
	return q, url
}

func receiveOne(t *testing.T, q *Queue, url string) Message {
	t.Helper()
	msgs, err := q.Receive(context.Background(), url, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 {
		t.Fatalf("received %d messages, want 1", len(msgs))
	}
	return msgs[0]
}

// TestReceiveCountGrowsWithEveryReceive: ApproximateReceiveCount, Laravel's
// attempts(), is 1 on the first receive and 2 after a release
// (ChangeMessageVisibility 0) and a second receive; the body is the bytes
// sent.
func TestReceiveCountGrowsWithEveryReceive(t *testing.T) {
	q, url := open(t, "count", nil)
	ctx := context.Background()
	body := `{"uuid":"u1","displayName":"App\\Jobs\\Noop","note":"caf\u00e9 ✗"}`
	id, err := q.Send(ctx, url, []byte(body), SendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	m := receiveOne(t, q, url)
	if m.ID != id || string(m.Body) != body || m.ReceiveCount != 1 || m.QueueURL != url || m.SentAt.IsZero() {
		t.Fatalf("first receive: %+v", m)
	}
	if err := q.ChangeVisibility(ctx, url, m.ReceiptHandle, 0); err != nil {
		t.Fatal(err)
	}
	if again := receiveOne(t, q, url); again.ReceiveCount != 2 || again.ID != id {
		t.Fatalf("second receive: count %d id %s", again.ReceiveCount, again.ID)
	}
}

// TestReleaseDelaysTheMessage: a release with a backoff keeps the message
// invisible (counted NotVisible) until the backoff ends.
func TestReleaseDelaysTheMessage(t *testing.T) {
	q, url := open(t, "release", nil)
	ctx := context.Background()
	if _, err := q.Send(ctx, url, []byte(`{"uuid":"r"}`), SendOptions{}); err != nil {
		t.Fatal(err)
	}
	m := receiveOne(t, q, url)
	if err := q.ChangeVisibility(ctx, url, m.ReceiptHandle, 2); err != nil {
		t.Fatal(err)
	}
	released := time.Now()
	if msgs, _ := q.Receive(ctx, url, 10, 0); len(msgs) != 0 {
		t.Fatal("a released message came back before its backoff")
	}
	a, err := q.Attributes(ctx, url)
	if err != nil || a.NotVisible != 1 || a.Messages != 0 {
		t.Fatalf("attributes during the backoff: %+v %v", a, err)
	}
	msgs, err := q.Receive(ctx, url, 1, 5*time.Second)
	if err != nil || len(msgs) != 1 || msgs[0].ReceiveCount != 2 {
		t.Fatalf("after the backoff: %v %v", msgs, err)
	}
	if waited := time.Since(released); waited < 1500*time.Millisecond {
		t.Fatalf("came back after %s, before the 2 s backoff", waited)
	}
}

// TestReceiveTakesUpToTenAndDeletesInBatches: one receive takes up to 10
// messages, each once; DeleteBatch deletes 25 in 3 requests.
func TestReceiveTakesUpToTenAndDeletesInBatches(t *testing.T) {
	q, url := open(t, "batch", nil)
	ctx := context.Background()
	var entries []SendEntry
	for i := range 25 {
		entries = append(entries, SendEntry{Body: []byte(fmt.Sprintf(`{"uuid":"b%d"}`, i))})
	}
	ids, err := q.SendBatch(ctx, url, entries)
	if err != nil || len(ids) != 25 {
		t.Fatalf("SendBatch: %d ids, %v", len(ids), err)
	}
	seen := map[string]bool{}
	var receipts []string
	for len(receipts) < 25 {
		msgs, err := q.Receive(ctx, url, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 || len(msgs) > 10 {
			t.Fatalf("a receive took %d messages with %d left", len(msgs), 25-len(receipts))
		}
		for _, m := range msgs {
			if seen[m.ID] {
				t.Fatalf("message %s received twice", m.ID)
			}
			seen[m.ID] = true
			receipts = append(receipts, m.ReceiptHandle)
		}
	}
	before := q.Requests().Counts()["DeleteMessageBatch"]
	results, err := q.DeleteBatch(ctx, url, receipts)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if r != nil {
			t.Errorf("entry %d: %v", i, r)
		}
	}
	if n := q.Requests().Counts()["DeleteMessageBatch"] - before; n != 3 {
		t.Errorf("25 deletes took %d requests, want 3", n)
	}
	if a, _ := q.Attributes(ctx, url); a.Messages+a.NotVisible+a.Delayed != 0 {
		t.Errorf("left after the deletes: %+v", a)
	}
}

// TestStaleReceiptHandles: once a message was received again, its old
// receipt handle changes nothing: ChangeMessageVisibility says so
// (ErrReservationLost), DeleteMessage succeeds without deleting it (AWS:
// "the request succeeds, but the message might not be deleted").
func TestStaleReceiptHandles(t *testing.T) {
	q, url := open(t, "stale", nil)
	ctx := context.Background()
	if _, err := q.Send(ctx, url, []byte(`{"uuid":"s"}`), SendOptions{}); err != nil {
		t.Fatal(err)
	}
	first := receiveOne(t, q, url)
	if err := q.ChangeVisibility(ctx, url, first.ReceiptHandle, 0); err != nil {
		t.Fatal(err)
	}
	second := receiveOne(t, q, url)
	if err := q.ChangeVisibility(ctx, url, first.ReceiptHandle, 30); !errors.Is(err, ErrReservationLost) {
		t.Fatalf("ChangeMessageVisibility with a stale handle: %v", err)
	}
	res, err := q.ChangeVisibilityBatch(ctx, url, []string{first.ReceiptHandle, second.ReceiptHandle}, 30)
	if err != nil || !errors.Is(res[0], ErrReservationLost) || res[1] != nil {
		t.Fatalf("batch with a stale and a valid handle: %v %v", res, err)
	}
	if err := q.Delete(ctx, url, first.ReceiptHandle); err != nil {
		t.Fatalf("DeleteMessage with a stale handle: %v", err)
	}
	if a, _ := q.Attributes(ctx, url); a.NotVisible != 1 {
		t.Fatalf("the stale delete removed the message held by the second receipt: %+v", a)
	}
	if err := q.Delete(ctx, url, second.ReceiptHandle); err != nil {
		t.Fatal(err)
	}
}

// TestCountsAreLaravels: ready, delayed (DelaySeconds, per batch entry
// too) and in-flight messages are counted apart, as SqsQueue::size reads
// them.
func TestCountsAreLaravels(t *testing.T) {
	q, url := open(t, "counts", nil)
	ctx := context.Background()
	if _, err := q.SendBatch(ctx, url, []SendEntry{
		{Body: []byte(`{"uuid":"1"}`)}, {Body: []byte(`{"uuid":"2"}`)},
		{Body: []byte(`{"uuid":"3"}`), SendOptions: SendOptions{Delay: 60 * time.Second}},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Send(ctx, url, []byte(`{"uuid":"4"}`), SendOptions{Delay: 1500 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	receiveOne(t, q, url)
	a, err := q.Attributes(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if a.Messages != 1 || a.Delayed != 2 || a.NotVisible != 1 || a.VisibilityTimeout != 30*time.Second || a.FIFO {
		t.Fatalf("attributes %+v, want 1 ready, 2 delayed, 1 in flight, visibility 30s", a)
	}
}

// TestLongPollReturnsWhenAMessageArrives: a receive that waits returns as
// soon as a message is sent, not at the end of its wait.
func TestLongPollReturnsWhenAMessageArrives(t *testing.T) {
	q, url := open(t, "poll", nil)
	ctx := context.Background()
	got := make(chan []Message, 1)
	started := time.Now()
	go func() {
		msgs, _ := q.Receive(ctx, url, 10, 15*time.Second)
		got <- msgs
	}()
	// The send comes after the receive began waiting (a receive that
	// found the queue empty).
	time.Sleep(300 * time.Millisecond)
	if _, err := q.Send(ctx, url, []byte(`{"uuid":"p"}`), SendOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case msgs := <-got:
		if len(msgs) != 1 {
			t.Fatalf("long poll returned %d messages", len(msgs))
		}
		if time.Since(started) > 10*time.Second {
			t.Fatalf("long poll returned after %s", time.Since(started))
		}
	case <-time.After(14 * time.Second):
		t.Fatal("the long poll did not return when the message came")
	}
}

// TestFIFOGroupsAndDeduplication: a FIFO queue rejects a send without a
// group (AWS does), drops a second send with the same deduplication id,
// hands out a group's messages in order, one group's next message only
// after the one in flight is gone, and other groups' meanwhile.
func TestFIFOGroupsAndDeduplication(t *testing.T) {
	q, url := open(t, "orders.fifo", nil)
	ctx := context.Background()
	if _, err := q.Send(ctx, url, []byte(`{"uuid":"x"}`), SendOptions{DeduplicationID: "x"}); err == nil {
		t.Fatal("a FIFO send without MessageGroupId was accepted")
	}
	for i, g := range []string{"a", "a", "b"} {
		opts := SendOptions{GroupID: g, DeduplicationID: "d" + strconv.Itoa(i)}
		if _, err := q.Send(ctx, url, []byte(fmt.Sprintf(`{"uuid":"%s%d"}`, g, i)), opts); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.Send(ctx, url, []byte(`{"uuid":"dup"}`), SendOptions{GroupID: "a", DeduplicationID: "d0"}); err != nil {
		t.Fatal(err)
	}
	a0 := receiveOne(t, q, url)
	b := receiveOne(t, q, url)
	if string(a0.Body) != `{"uuid":"a0"}` || a0.GroupID != "a" || a0.DeduplicationID != "d0" || a0.SequenceNumber == "" || string(b.Body) != `{"uuid":"b2"}` {
		t.Fatalf("first receives: %s (%s) then %s", a0.Body, a0.GroupID, b.Body)
	}
	if msgs, _ := q.Receive(ctx, url, 10, 0); len(msgs) != 0 {
		t.Fatalf("group a's next message came while its first is in flight: %s", msgs[0].Body)
	}
	if err := q.Delete(ctx, url, a0.ReceiptHandle); err != nil {
		t.Fatal(err)
	}
	a1 := receiveOne(t, q, url)
	if string(a1.Body) != `{"uuid":"a1"}` {
		t.Fatalf("after a0: %s (the duplicate must have been dropped)", a1.Body)
	}
	if attrs, _ := q.Attributes(ctx, url); !attrs.FIFO {
		t.Error("FifoQueue not reported")
	}
}

// TestPurgeEmptiesTheQueue: PurgeQueue deletes every message, in flight
// ones included.
func TestPurgeEmptiesTheQueue(t *testing.T) {
	q, url := open(t, "purge", nil)
	ctx := context.Background()
	for range 3 {
		if _, err := q.Send(ctx, url, []byte(`{}`), SendOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	receiveOne(t, q, url)
	if err := q.Purge(ctx, url); err != nil {
		t.Fatal(err)
	}
	if a, _ := q.Attributes(ctx, url); a.Messages+a.NotVisible+a.Delayed != 0 {
		t.Fatalf("after the purge: %+v", a)
	}
}

// TestMissingQueueIsNamed: a request on a queue the server does not have
// is ErrQueueDoesNotExist, naming the URL.
func TestMissingQueueIsNamed(t *testing.T) {
	q, _ := open(t, "exists", nil)
	srv := testsqs.Start(t)
	_, err := q.Receive(context.Background(), srv.Prefix+"/no-such-queue", 1, 0)
	if !errors.Is(err, ErrQueueDoesNotExist) {
		t.Fatalf("receive on a missing queue: %v", err)
	}
}
