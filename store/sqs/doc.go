// Package sqs is Laravel's SQS queue (driver "sqs") as a jobqueue.Store,
// beside `php artisan queue:work sqs` on the same queues. The jobs live
// in SQS, sent and received with the requests Laravel's SqsQueue and
// SqsJob send (package internal/sqsproto, on the AWS SDK for Go); what
// Laravel keeps in the database whatever the driver (failed_jobs,
// job_batches, the cache store when it is "database") comes from a
// *database.Queue on the app's database.
//
// # Jobs
//
// A claimed job's JobRow carries the message's receipt handle in
// Reservation, the payload as SQS holds it (or as the cache holds it for
// a 13.9+ pointer body), the queue URL as its queue (SqsJob::getQueue:
// what failed_jobs records) and ApproximateReceiveCount as its attempts
// (Vapor's connections: the payload's attempts + 1). There is no
// retry_after on SQS: the reservation is the queue's visibility timeout
// (RetryAfter), which Extend renews while a job runs.
//
// A claim receives up to 10 messages a request (one on a FIFO queue, so
// that a group's jobs never run side by side), and long-polls the first
// queue when every queue is empty. A job the worker does not run is given
// back at once: a standard queue's message received for the first time
// is sent again as it was and the received one deleted, so that no
// attempt is counted; otherwise (FIFO, received before, Vapor) it is made
// visible again, and SQS counts one more receive.
//
// # Outcomes
//
// Delete is DeleteMessageBatch, Release ChangeMessageVisibility with the
// backoff (Vapor: the payload sent again with its attempt, then the
// message deleted), Unreserve the give-back above, Extend
// ChangeMessageVisibilityBatch. Fail and Finish with a chain link first
// check the receipt handle (ChangeMessageVisibility: SQS rejects a stale
// one) so that a job another worker holds writes nothing, then write the
// failed row or send the link, delete the message, and record the batch.
// SQS accepts a stale receipt handle's DeleteMessage on a standard queue
// without an error: a plain Delete cannot tell a lost job, as PHP cannot.
package sqs
