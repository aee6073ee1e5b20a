package sqsproto

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
)

// Queue is an SQS connection's operations, each the request Laravel's
// SqsQueue and SqsJob send (or its batch form): nothing is kept between
// calls. Safe for concurrent use.
type Queue struct {
	cfg     Config
	client  *sqs.Client
	counter *Counter
}

// Open builds the connection's client (see NewClient); it does not
// connect.
func Open(ctx context.Context, cfg Config) (*Queue, error) {
	counter := &Counter{}
	client, err := NewClient(ctx, cfg, counter)
	if err != nil {
		return nil, err
	}
	return &Queue{cfg: cfg, client: client, counter: counter}, nil
}

// Config is the connection's configuration.
func (q *Queue) Config() Config { return q.cfg }

// Connection is the queue connection's name.
func (q *Queue) Connection() string { return q.cfg.Connection }

// URL is the queue URL of a queue name ("" the default queue).
func (q *Queue) URL(queue string) string { return q.cfg.QueueURL(queue) }

// Requests counts the requests sent, by action.
func (q *Queue) Requests() *Counter { return q.counter }

// Client is the SDK client.
func (q *Queue) Client() *sqs.Client { return q.client }

// Message is one received message.
type Message struct {
	// QueueURL is the queue it was received from: SqsJob's getQueue(),
	// which failed_jobs records.
	QueueURL      string
	ID            string
	ReceiptHandle string
	Body          []byte
	// ReceiveCount is ApproximateReceiveCount: Laravel's attempts().
	ReceiveCount int
	// GroupID, DeduplicationID and SequenceNumber are a FIFO message's
	// (and GroupID a fair queue's).
	GroupID, DeduplicationID, SequenceNumber string
	// SentAt is SentTimestamp.
	SentAt time.Time
}

// MaxBatch is SQS's limit of messages per receive and entries per batch.
const MaxBatch = 10

// MaxWait is SQS's longest long poll.
const MaxWait = 20 * time.Second

// Receive is SqsQueue::pop's ReceiveMessage with up to n messages
// (at most 10) and a long poll of up to wait (whole seconds, at most 20;
// 0 returns at once), asking for ApproximateReceiveCount as Laravel does,
// and the FIFO attributes.
func (q *Queue) Receive(ctx context.Context, url string, n int, wait time.Duration) ([]Message, error) {
	in := &sqs.ReceiveMessageInput{
		QueueUrl:            aws.String(url),
		MaxNumberOfMessages: int32(min(max(n, 1), MaxBatch)),
		WaitTimeSeconds:     int32(min(wait, MaxWait) / time.Second),
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{
			types.MessageSystemAttributeNameApproximateReceiveCount,
			types.MessageSystemAttributeNameSentTimestamp,
			types.MessageSystemAttributeNameMessageGroupId,
			types.MessageSystemAttributeNameMessageDeduplicationId,
			types.MessageSystemAttributeNameSequenceNumber,
		},
	}
	out, err := q.client.ReceiveMessage(ctx, in)
	if err != nil {
		return nil, q.wrap("ReceiveMessage", url, err)
	}
	msgs := make([]Message, 0, len(out.Messages))
	for _, m := range out.Messages {
		msgs = append(msgs, message(url, m))
	}
	return msgs, nil
}

func message(url string, m types.Message) Message {
	a := m.Attributes
	count, _ := strconv.Atoi(a[string(types.MessageSystemAttributeNameApproximateReceiveCount)])
	sent, _ := strconv.ParseInt(a[string(types.MessageSystemAttributeNameSentTimestamp)], 10, 64)
	return Message{
		QueueURL: url, ID: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
		Body: []byte(aws.ToString(m.Body)), ReceiveCount: count,
		GroupID:         a[string(types.MessageSystemAttributeNameMessageGroupId)],
		DeduplicationID: a[string(types.MessageSystemAttributeNameMessageDeduplicationId)],
		SequenceNumber:  a[string(types.MessageSystemAttributeNameSequenceNumber)],
		SentAt:          time.UnixMilli(sent),
	}
}

// ErrReservationLost says the receipt handle no longer names a message this
// client holds (the message became visible and was received again, or it
// was deleted).
var ErrReservationLost = errors.New("sqsqueue: the message's receipt handle is no longer valid (another worker received it again, or it was deleted)")

// lostCodes are the error codes SQS answers for a receipt handle that
// no longer holds the message.
var lostCodes = map[string]bool{
	"ReceiptHandleIsInvalid":                        true,
	"MessageNotInflight":                            true,
	"AWS.SimpleQueueService.MessageNotInflight":     true,
	"InvalidReceiptHandle":                          true,
	"AWS.SimpleQueueService.ReceiptHandleIsInvalid": true,
}

// isLost reports whether err (or a batch entry's code and message) says
// the receipt handle is stale.
func isLost(code, message string) bool {
	if lostCodes[code] {
		return true
	}
	// AWS answers an expired handle with InvalidParameterValue.
	return code == "InvalidParameterValue" && containsFold(message, "receipt handle")
}

// ChangeVisibility is SqsJob::release's ChangeMessageVisibility: the
// message becomes visible again after seconds (0: now). A stale receipt
// handle is ErrReservationLost.
func (q *Queue) ChangeVisibility(ctx context.Context, url, receipt string, seconds int) error {
	_, err := q.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: aws.String(url), ReceiptHandle: aws.String(receipt), VisibilityTimeout: int32(seconds),
	})
	var api smithy.APIError
	if errors.As(err, &api) && isLost(api.ErrorCode(), api.ErrorMessage()) {
		return ErrReservationLost
	}
	return q.wrap("ChangeMessageVisibility", url, err)
}

// EntryResult is one entry of a batch request: nil, ErrReservationLost,
// or the entry's error.
type EntryResult = error

// ChangeVisibilityBatch changes the visibility of several messages of one
// queue, 10 a request; results are in the order of receipts.
func (q *Queue) ChangeVisibilityBatch(ctx context.Context, url string, receipts []string, seconds int) ([]EntryResult, error) {
	return batched(receipts, func(chunk []string, offset int, results []EntryResult) error {
		entries := make([]types.ChangeMessageVisibilityBatchRequestEntry, len(chunk))
		for i, r := range chunk {
			entries[i] = types.ChangeMessageVisibilityBatchRequestEntry{
				Id: aws.String(strconv.Itoa(offset + i)), ReceiptHandle: aws.String(r), VisibilityTimeout: int32(seconds),
			}
		}
		out, err := q.client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(url), Entries: entries})
		if err != nil {
			return q.wrap("ChangeMessageVisibilityBatch", url, err)
		}
		for _, f := range out.Failed {
			setFailed(results, f.Id, f.Code, f.Message)
		}
		return nil
	})
}

// DeleteBatch is SqsJob::delete's DeleteMessage for several messages of
// one queue, 10 a request; results are in the order of receipts. SQS
// accepts a stale receipt handle of a standard queue without an error
// (and may or may not delete the message): such a delete is not known
// lost.
func (q *Queue) DeleteBatch(ctx context.Context, url string, receipts []string) ([]EntryResult, error) {
	return batched(receipts, func(chunk []string, offset int, results []EntryResult) error {
		entries := make([]types.DeleteMessageBatchRequestEntry, len(chunk))
		for i, r := range chunk {
			entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(offset + i)), ReceiptHandle: aws.String(r)}
		}
		out, err := q.client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
		if err != nil {
			return q.wrap("DeleteMessageBatch", url, err)
		}
		for _, f := range out.Failed {
			setFailed(results, f.Id, f.Code, f.Message)
		}
		return nil
	})
}

// Delete is SqsJob::delete's DeleteMessage of one message.
func (q *Queue) Delete(ctx context.Context, url, receipt string) error {
	_, err := q.client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: aws.String(receipt)})
	var api smithy.APIError
	if errors.As(err, &api) && isLost(api.ErrorCode(), api.ErrorMessage()) {
		return ErrReservationLost
	}
	return q.wrap("DeleteMessage", url, err)
}

// batched runs op on chunks of at most 10 items, collecting per-item
// results; a request's error stops the rest and is returned.
func batched(items []string, op func(chunk []string, offset int, results []EntryResult) error) ([]EntryResult, error) {
	results := make([]EntryResult, len(items))
	for start := 0; start < len(items); start += MaxBatch {
		end := min(start+MaxBatch, len(items))
		if err := op(items[start:end], start, results); err != nil {
			return results, err
		}
	}
	return results, nil
}

// setFailed records a batch entry's failure under its index (the entry
// Id).
func setFailed(results []EntryResult, id, code, msg *string) {
	i, err := strconv.Atoi(aws.ToString(id))
	if err != nil || i < 0 || i >= len(results) {
		return
	}
	if isLost(aws.ToString(code), aws.ToString(msg)) {
		results[i] = ErrReservationLost
		return
	}
	results[i] = fmt.Errorf("sqsqueue: %s: %s", aws.ToString(code), aws.ToString(msg))
}

// containsFold reports whether s contains sub, ignoring case.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// SendOptions are SendMessage's parameters beyond the body.
type SendOptions struct {
	// Delay is DelaySeconds (whole seconds; SQS allows up to 900 s and
	// none on FIFO queues).
	Delay time.Duration
	// GroupID and DeduplicationID are MessageGroupId and
	// MessageDeduplicationId (FIFO; a fair queue takes a group too).
	GroupID, DeduplicationID string
}

// MaxDelay is the longest DelaySeconds SQS takes.
const MaxDelay = 900 * time.Second

// Send is SqsQueue::pushRaw's SendMessage; it returns the MessageId.
func (q *Queue) Send(ctx context.Context, url string, body []byte, opts SendOptions) (string, error) {
	in := &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(string(body))}
	if opts.Delay > 0 {
		in.DelaySeconds = int32(delaySeconds(opts.Delay))
	}
	if opts.GroupID != "" {
		in.MessageGroupId = aws.String(opts.GroupID)
	}
	if opts.DeduplicationID != "" {
		in.MessageDeduplicationId = aws.String(opts.DeduplicationID)
	}
	out, err := q.client.SendMessage(ctx, in)
	if err != nil {
		return "", q.wrap("SendMessage", url, err)
	}
	return aws.ToString(out.MessageId), nil
}

// delaySeconds rounds a delay up to whole seconds, as secondsUntil
// counts a DateTime's.
func delaySeconds(d time.Duration) int64 {
	return int64((d + time.Second - 1) / time.Second)
}

// SendEntry is one message of SendBatch.
type SendEntry struct {
	Body []byte
	SendOptions
}

// SendBatch sends messages to one queue with SendMessageBatch, 10 (and at
// most 1 MiB of bodies) a request, in order, stopping at the first
// request with a failed entry (so later messages cannot arrive ahead of
// unsent ones, as Laravel 13.19+'s bulk). It returns the MessageIds of
// the messages sent.
func (q *Queue) SendBatch(ctx context.Context, url string, entries []SendEntry) ([]string, error) {
	var ids []string
	for _, chunk := range chunkEntries(entries) {
		req := make([]types.SendMessageBatchRequestEntry, len(chunk))
		for i, e := range chunk {
			req[i] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(string(e.Body))}
			if e.Delay > 0 {
				req[i].DelaySeconds = int32(delaySeconds(e.Delay))
			}
			if e.GroupID != "" {
				req[i].MessageGroupId = aws.String(e.GroupID)
			}
			if e.DeduplicationID != "" {
				req[i].MessageDeduplicationId = aws.String(e.DeduplicationID)
			}
		}
		out, err := q.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: req})
		if err != nil {
			return ids, q.wrap("SendMessageBatch", url, err)
		}
		for _, s := range out.Successful {
			ids = append(ids, aws.ToString(s.MessageId))
		}
		if len(out.Failed) > 0 {
			f := out.Failed[0]
			return ids, fmt.Errorf("sqsqueue: SendMessageBatch to %s rejected %d of %d messages; first failure [%s]: %s",
				url, len(out.Failed), len(chunk), aws.ToString(f.Code), aws.ToString(f.Message))
		}
	}
	return ids, nil
}

// MaxPayload is SQS's largest message (and batch of messages): 1 MiB.
const MaxPayload = 1048576

// chunkEntries splits entries into requests of at most 10 entries and 1
// MiB of bodies (SqsQueue::chunkBatchEntries).
func chunkEntries(entries []SendEntry) [][]SendEntry {
	var chunks [][]SendEntry
	var cur []SendEntry
	bytes := 0
	for _, e := range entries {
		if len(cur) > 0 && (len(cur) >= MaxBatch || bytes+len(e.Body) > MaxPayload) {
			chunks = append(chunks, cur)
			cur, bytes = nil, 0
		}
		cur = append(cur, e)
		bytes += len(e.Body)
	}
	if len(cur) > 0 {
		chunks = append(chunks, cur)
	}
	return chunks
}

// Attributes are a queue's counts and settings.
type Attributes struct {
	// Messages, Delayed and NotVisible are ApproximateNumberOfMessages,
	// ...Delayed and ...NotVisible (SqsQueue::size adds them, 12.19+).
	Messages, Delayed, NotVisible int64
	// VisibilityTimeout is the queue's: how long a received message stays
	// invisible (Laravel's reservation).
	VisibilityTimeout time.Duration
	FIFO              bool
}

// Attributes is GetQueueAttributes of the counts and the settings.
func (q *Queue) Attributes(ctx context.Context, url string) (Attributes, error) {
	out, err := q.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(url),
		AttributeNames: []types.QueueAttributeName{
			types.QueueAttributeNameApproximateNumberOfMessages,
			types.QueueAttributeNameApproximateNumberOfMessagesDelayed,
			types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
			types.QueueAttributeNameVisibilityTimeout,
			types.QueueAttributeNameFifoQueue,
		},
	})
	if err != nil {
		return Attributes{}, q.wrap("GetQueueAttributes", url, err)
	}
	n := func(name types.QueueAttributeName) int64 {
		v, _ := strconv.ParseInt(out.Attributes[string(name)], 10, 64)
		return v
	}
	return Attributes{
		Messages:          n(types.QueueAttributeNameApproximateNumberOfMessages),
		Delayed:           n(types.QueueAttributeNameApproximateNumberOfMessagesDelayed),
		NotVisible:        n(types.QueueAttributeNameApproximateNumberOfMessagesNotVisible),
		VisibilityTimeout: time.Duration(n(types.QueueAttributeNameVisibilityTimeout)) * time.Second,
		FIFO:              out.Attributes[string(types.QueueAttributeNameFifoQueue)] == "true",
	}, nil
}

// Purge is SqsQueue::clear's PurgeQueue (AWS allows one a minute per
// queue).
func (q *Queue) Purge(ctx context.Context, url string) error {
	_, err := q.client.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(url)})
	return q.wrap("PurgeQueue", url, err)
}

// ErrQueueDoesNotExist wraps a request on a queue SQS does not have.
var ErrQueueDoesNotExist = errors.New("sqsqueue: the queue does not exist")

// Errors about the setup rather than a request: wrapped so that a worker
// can tell them from passing faults.
var (
	// ErrAccessDenied: the credentials may not use the queue.
	ErrAccessDenied = errors.New("sqsqueue: access denied")
	// ErrCredentials: no credentials, or ones AWS does not accept.
	ErrCredentials = errors.New("sqsqueue: no valid AWS credentials")
)

// wrap names the action and the queue in err, and marks setup errors.
func (q *Queue) wrap(action, url string, err error) error {
	if err == nil {
		return nil
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist":
			return fmt.Errorf("sqsqueue: %s on %s: %w (%s)", action, url, ErrQueueDoesNotExist, api.ErrorMessage())
		case "AccessDenied", "AccessDeniedException", "KMS.AccessDeniedException":
			return fmt.Errorf("sqsqueue: %s on %s: %w: %s", action, url, ErrAccessDenied, api.ErrorMessage())
		case "InvalidClientTokenId", "UnrecognizedClientException", "SignatureDoesNotMatch", "ExpiredToken", "MissingAuthenticationToken", "InvalidSecurity":
			return fmt.Errorf("sqsqueue: %s on %s: %w: %s", action, url, ErrCredentials, api.ErrorMessage())
		}
	}
	var cerr interface{ Unwrap() error }
	if errors.As(err, &cerr) && containsFold(err.Error(), "failed to retrieve credentials") {
		return fmt.Errorf("sqsqueue: %s on %s: %w: %v", action, url, ErrCredentials, err)
	}
	return fmt.Errorf("sqsqueue: %s on %s: %w", action, url, err)
}
