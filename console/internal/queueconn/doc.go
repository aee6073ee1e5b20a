// Package queueconn opens the queue connection a command works on: the
// app's configuration as the flags name it (LoadAppConfig, the APP_KEY's
// Encrypter), the store the served connection's driver picks (Open: the
// database queue in dbconnection.go, the Redis queue in
// redisconnection.go, the only files of the CLI that name those
// packages), and a command's Session on it, whose errors never show a
// secret. Everything else reaches the store through the Connection's
// jobqueue interfaces.
package queueconn
