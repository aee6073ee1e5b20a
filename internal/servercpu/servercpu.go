// Package servercpu reads the CPU time a local database server has used,
// from /proc, so a benchmark can say what each job cost the server and not
// only the worker. It reads any process's /proc/<pid>/stat (world
// readable), so it needs no privilege and no cooperation from the server.
package servercpu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// clockTick is USER_HZ, the unit of the times in /proc/<pid>/stat. It is
// 100 on every Linux architecture Go supports (the kernel fixes it for the
// user ABI, whatever CONFIG_HZ is).
const clockTick = 10 * time.Millisecond

// ErrNotFound says no server process of that engine runs on this machine
// (a remote server, SQLite, or not Linux).
var ErrNotFound = errors.New("no local database server process found")

// proc is what one /proc/<pid>/stat says.
type proc struct {
	pid, ppid      int
	comm           string
	self, children time.Duration // utime+stime; cutime+cstime (reaped children)
}

// Read is the CPU time (user + system) the server processes of driver
// ("mysql"/"mariadb" or "pgsql") have used so far. MariaDB/MySQL is one
// process (every connection a thread, all counted in its stat).
// PostgreSQL forks a process per connection: the time is the postmaster's
// own, that of every live child, and that of the children already gone
// (the postmaster reaps them, so the kernel adds them to its cutime and
// cstime); a backend that exits between two readings moves from one sum
// to the other and is counted once.
func Read(driver string) (time.Duration, error) {
	procs, err := readAll()
	if err != nil {
		return 0, err
	}
	switch driver {
	case "mysql", "mariadb":
		return sumServers(procs, func(p proc) bool { return p.comm == "mariadbd" || p.comm == "mysqld" })
	case "pgsql", "postgres":
		return postgresTree(procs)
	}
	return 0, fmt.Errorf("%s: %w", driver, ErrNotFound)
}

func sumServers(procs map[int]proc, match func(proc) bool) (time.Duration, error) {
	var total time.Duration
	found := false
	for _, p := range procs {
		if match(p) {
			total += p.self + p.children
			found = true
		}
	}
	if !found {
		return 0, ErrNotFound
	}
	return total, nil
}

// postgresTree sums every postmaster (a postgres process whose parent is
// not one) with its children. A backend that exits during a reading
// moves from the children's sum to its postmaster's reaped time; read in
// the wrong order it would be counted nowhere, or twice: a pooled
// backend's whole time off the total (River's pool closing its
// connections once made a drain's server CPU negative). So the
// postmasters are read before and after their children, and the reading
// is taken again when a child was reaped in between.
func postgresTree(procs map[int]proc) (time.Duration, error) {
	isPG := func(p proc) bool { return p.comm == "postgres" || p.comm == "postmaster" }
	var masters, children []int
	for _, p := range procs {
		if isPG(p) && !isPG(procs[p.ppid]) {
			masters = append(masters, p.pid)
		}
	}
	if len(masters) == 0 {
		return 0, ErrNotFound
	}
	for _, p := range procs {
		if slices.Contains(masters, p.ppid) {
			children = append(children, p.pid)
		}
	}
	var total time.Duration
	for range 10 {
		before := readPids(masters)
		var sum time.Duration
		for _, c := range readPids(children) {
			sum += c.self + c.children
		}
		after := readPids(masters)
		total = sum
		for _, m := range after {
			total += m.self + m.children
		}
		if reapedNone(before, after) {
			break
		}
	}
	return total, nil
}

// readPids reads the stat of each pid still there.
func readPids(pids []int) map[int]proc {
	out := make(map[int]proc, len(pids))
	for _, pid := range pids {
		if p, ok := readStat(fmt.Sprintf("/proc/%d/stat", pid)); ok {
			out[pid] = p
		}
	}
	return out
}

// reapedNone: no postmaster reaped a child between the two readings.
func reapedNone(before, after map[int]proc) bool {
	for pid, a := range after {
		if b, ok := before[pid]; !ok || b.children != a.children {
			return false
		}
	}
	return len(before) == len(after)
}

func readStat(path string) (proc, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return proc{}, false // exited
	}
	return parseStat(string(data))
}

func readAll() (map[int]proc, error) {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, err
	}
	if len(stats) == 0 {
		return nil, ErrNotFound
	}
	out := make(map[int]proc, len(stats))
	for _, path := range stats {
		if p, ok := readStat(path); ok { // not: exited since the glob
			out[p.pid] = p
		}
	}
	return out, nil
}

// parseStat reads pid, comm, ppid and the four CPU times. comm is in
// parentheses and may itself hold spaces or parentheses: the fields after
// it start at the last ')'.
func parseStat(s string) (proc, bool) {
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return proc{}, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(s[:open]))
	if err != nil {
		return proc{}, false
	}
	// After comm: state(3) ppid(4) ... utime(14) stime(15) cutime(16) cstime(17).
	f := strings.Fields(s[closing+1:])
	if len(f) < 15 {
		return proc{}, false
	}
	num := func(i int) int64 { n, _ := strconv.ParseInt(f[i-3], 10, 64); return n }
	return proc{
		pid: pid, ppid: int(num(4)), comm: s[open+1 : closing],
		self:     time.Duration(num(14)+num(15)) * clockTick,
		children: time.Duration(num(16)+num(17)) * clockTick,
	}, true
}

// Process is the CPU time (user + system, with reaped children) process
// pid has used so far: a worker's, read at both ends of a window while it
// keeps running.
func Process(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	p, ok := parseStat(string(data))
	if !ok {
		return 0, fmt.Errorf("/proc/%d/stat: unexpected format", pid)
	}
	return p.self + p.children, nil
}
