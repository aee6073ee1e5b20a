package console

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
)

// logGoRedis sends go-redis's own messages to the worker's log, in its
// format, instead of go-redis's plain lines on stderr: a Sentinel
// connection's failovers ("sentinel: new master ..."), a pool that cannot
// dial. They hold addresses and errors, never a password. go-redis has one
// logger per process.
func logGoRedis(log zerolog.Logger) { redis.SetLogger(goRedisLogger{log: log}) }

type goRedisLogger struct{ log zerolog.Logger }

func (l goRedisLogger) Printf(_ context.Context, format string, v ...any) {
	l.log.Info().Str("component", "go-redis").Msg(fmt.Sprintf(format, v...))
}
