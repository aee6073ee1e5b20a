// Package queueconn opens the queue connection a command works on: the
// app's configuration as the flags name it (LoadAppConfig, the APP_KEY's
// Encrypter), the store the served connection's driver picks (Open: the
// database queue in dbconnection.go, the Redis queue in
// redisconnection.go, the only files of the CLI that name those
// packages), and a command's Session on it, whose errors never show a
// secret. Everything else reaches the store through the Connection's
// jobqueue.Store. It names no dashboard package: it says where the
// queue's tables are (QueueDatabase) and which Redis queue holds its jobs
// (Connection.Redis), and the CLI builds the dashboard's reads from them.
package queueconn
