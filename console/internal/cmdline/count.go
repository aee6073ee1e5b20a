package cmdline

import (
	"errors"
	"strconv"

	"github.com/urfave/cli/v2"
)

// countValue is a flag value that counts something (tries, jobs, hours,
// megabytes): a whole number, never negative. A negative count has no
// meaning in artisan either (`--tries=-1` would make every job exceed its
// tries at once), so it is a usage error rather than a silent surprise.
type countValue struct{ n int64 }

var errCount = errors.New("want a whole number, 0 or more")

func (v *countValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return errCount
	}
	v.n = n
	return nil
}

func (v *countValue) String() string {
	if v == nil {
		return "0"
	}
	return strconv.FormatInt(v.n, 10)
}

// CountFlag is a flag taking a countValue.
func CountFlag(name string, def int64, usage string) *cli.GenericFlag {
	return &cli.GenericFlag{Name: name, Value: &countValue{n: def}, Usage: usage}
}

// CountOf reads a CountFlag.
func CountOf(c *cli.Context, name string) int64 {
	if v, ok := c.Generic(name).(*countValue); ok {
		return v.n
	}
	return 0
}
