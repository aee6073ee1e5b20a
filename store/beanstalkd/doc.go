// Package beanstalkd is the store of Laravel's beanstalkd queue
// connections (BeanstalkdQueue and BeanstalkdJob over pheanstalk): a
// tube per queue, a job's attempts counted by beanstalkd (stats-job's
// reserves), retry_after as each job's time-to-run, and the failed jobs
// and batches in the app's database, as Laravel keeps them. Package
// internal/beanstalkproto is its client of beanstalkd's text protocol.
package beanstalkd
