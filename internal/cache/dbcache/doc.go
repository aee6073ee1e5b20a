// Package dbcache is Laravel's database cache store as PHP and Go workers
// share it: the cache table (maxExceptions counters, the queue:restart
// signal) and the cache_locks table (unique jobs' locks), with Laravel's
// key prefix and PHP-serialized values.
package dbcache
