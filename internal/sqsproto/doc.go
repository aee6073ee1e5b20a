// Package sqsproto is Laravel's SQS queue driver on the wire: the
// connection's configuration as SqsConnector reads it (FromLaravel), its
// queue URLs (SqsQueue::getQueue), the client aws-sdk-php would be given
// (NewClient: credentials, region, endpoint, timeouts, retries), and the
// requests SqsQueue and SqsJob send (ReceiveMessage with
// ApproximateReceiveCount, ChangeMessageVisibility, DeleteMessage,
// SendMessage with FIFO options, GetQueueAttributes, PurgeQueue), with
// their batch forms. It keeps nothing between calls; package store/sqs
// builds the store on it.
package sqsproto
