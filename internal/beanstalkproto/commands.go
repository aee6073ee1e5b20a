package beanstalkproto

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Job is a job as reserve or peek returns it.
type Job struct {
	ID   uint64
	Body []byte
}

// CheckTube refuses a name beanstalkd does not take as a tube: 1 to 200
// bytes of letters, digits and -+/;.$_() not starting with a hyphen.
func CheckTube(name string) error {
	if name == "" || len(name) > 200 || name[0] == '-' {
		return fmt.Errorf("beanstalkd: %q is not a tube name (1 to 200 characters, not starting with '-')", name)
	}
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-+/;.$_()", r)
		if !ok {
			return fmt.Errorf("beanstalkd: %q is not a tube name: %q is not allowed (letters, digits and -+/;.$_() only)", name, r)
		}
	}
	return nil
}

// Seconds is d as the protocol's whole seconds, rounded up (a delay never
// shortened), never negative.
func Seconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// Use makes tube the one put and peek-ready/delayed/buried act on.
func (c *Conn) Use(tube string) error {
	if err := CheckTube(tube); err != nil {
		return err
	}
	_, err := c.one(Cmd{Line: "use " + tube}, "USING")
	return err
}

// Watch adds tube to those reserve takes from.
func (c *Conn) Watch(tube string) error {
	if err := CheckTube(tube); err != nil {
		return err
	}
	_, err := c.one(Cmd{Line: "watch " + tube}, "WATCHING")
	return err
}

// Ignore removes tube from those reserve takes from (NOT_IGNORED, the
// last one watched, is an error).
func (c *Conn) Ignore(tube string) error {
	_, err := c.one(Cmd{Line: "ignore " + tube}, "WATCHING")
	return err
}

// PutCmd is put's command.
func PutCmd(pri uint32, delay, ttr int64, body []byte) Cmd {
	return Cmd{Line: fmt.Sprintf("put %d %d %d %d", pri, delay, ttr, len(body)), Body: body}
}

// Put adds a job to the used tube.
func (c *Conn) Put(pri uint32, delay, ttr int64, body []byte) (uint64, error) {
	r, err := c.one(PutCmd(pri, delay, ttr, body), "INSERTED")
	if err != nil {
		return 0, err
	}
	return r.ID()
}

// job reads a RESERVED or FOUND reply.
func job(r Reply, err error) (Job, error) {
	if err != nil {
		return Job{}, err
	}
	id, err := r.ID()
	return Job{ID: id, Body: r.Data}, err
}

// PeekReady is the next ready job of the used tube, unreserved.
func (c *Conn) PeekReady() (Job, error) { return job(c.one(Cmd{Line: "peek-ready"}, "FOUND")) }

// PeekDelayed is the delayed job of the used tube due first.
func (c *Conn) PeekDelayed() (Job, error) { return job(c.one(Cmd{Line: "peek-delayed"}, "FOUND")) }

// PeekBuried is the first buried job of the used tube.
func (c *Conn) PeekBuried() (Job, error) { return job(c.one(Cmd{Line: "peek-buried"}, "FOUND")) }

// Peek is the job with id, in whatever state.
func (c *Conn) Peek(id uint64) (Job, error) {
	return job(c.one(Cmd{Line: "peek " + strconv.FormatUint(id, 10)}, "FOUND"))
}

// ReserveWithTimeout reserves the next job of the watched tubes, waiting
// up to timeout seconds (0: none): ErrTimedOut when none came.
func (c *Conn) ReserveWithTimeout(timeout int64) (Job, error) {
	return job(c.one(Cmd{Line: "reserve-with-timeout " + strconv.FormatInt(timeout, 10), Wait: time.Duration(timeout) * time.Second}, "RESERVED"))
}

// ReserveJobCmd is reserve-job's command (beanstalkd 1.12+): it reserves
// the job with that id whatever its tube and state (ready, delayed or
// buried).
func ReserveJobCmd(id uint64) Cmd { return Cmd{Line: "reserve-job " + strconv.FormatUint(id, 10)} }

// DeleteCmd is delete's command, for Do.
func DeleteCmd(id uint64) Cmd { return Cmd{Line: "delete " + strconv.FormatUint(id, 10)} }

// ReleaseCmd is release's command, for Do.
func ReleaseCmd(id uint64, pri uint32, delay int64) Cmd {
	return Cmd{Line: fmt.Sprintf("release %d %d %d", id, pri, delay)}
}

// BuryCmd is bury's command, for Do.
func BuryCmd(id uint64, pri uint32) Cmd { return Cmd{Line: fmt.Sprintf("bury %d %d", id, pri)} }

// TouchCmd is touch's command, for Do.
func TouchCmd(id uint64) Cmd { return Cmd{Line: "touch " + strconv.FormatUint(id, 10)} }

// KickJobCmd is kick-job's command, for Do.
func KickJobCmd(id uint64) Cmd { return Cmd{Line: "kick-job " + strconv.FormatUint(id, 10)} }

// StatsJobCmd is stats-job's command, for Do.
func StatsJobCmd(id uint64) Cmd { return Cmd{Line: "stats-job " + strconv.FormatUint(id, 10)} }

// Delete removes a job this connection reserved, or one that is ready,
// delayed or buried.
func (c *Conn) Delete(id uint64) error { _, err := c.one(DeleteCmd(id), "DELETED"); return err }

// Release puts a job this connection reserved back, ready after delay
// seconds, with priority pri.
func (c *Conn) Release(id uint64, pri uint32, delay int64) error {
	_, err := c.one(ReleaseCmd(id, pri, delay), "RELEASED")
	return err
}

// Bury buries a job this connection reserved.
func (c *Conn) Bury(id uint64, pri uint32) error {
	_, err := c.one(BuryCmd(id, pri), "BURIED")
	return err
}

// Touch gives a job this connection reserved its whole time-to-run again.
func (c *Conn) Touch(id uint64) error { _, err := c.one(TouchCmd(id), "TOUCHED"); return err }

// KickJob makes a delayed or buried job ready.
func (c *Conn) KickJob(id uint64) error { _, err := c.one(KickJobCmd(id), "KICKED"); return err }

// ReserveJob reserves the job with id (see ReserveJobCmd).
func (c *Conn) ReserveJob(id uint64) (Job, error) { return job(c.one(ReserveJobCmd(id), "RESERVED")) }

// JobStats is stats-job's answer.
type JobStats struct {
	ID    uint64
	Tube  string
	State string // ready, delayed, reserved or buried
	Pri   uint32
	// Age, Delay, TTR and TimeLeft are seconds: TimeLeft is what is left
	// of a reservation's time-to-run, or of a delay.
	Age, Delay, TTR, TimeLeft                   int64
	Reserves, Timeouts, Releases, Buries, Kicks int64
}

// StatsJob is the job's stats.
func (c *Conn) StatsJob(id uint64) (JobStats, error) {
	r, err := c.one(StatsJobCmd(id), "OK")
	if err != nil {
		return JobStats{}, err
	}
	return ParseJobStats(r.Data)
}

// ParseJobStats reads stats-job's YAML.
func ParseJobStats(data []byte) (JobStats, error) {
	m := yamlMap(data)
	s := JobStats{Tube: m["tube"], State: m["state"]}
	var err error
	num := func(key string) int64 {
		n, e := strconv.ParseInt(m[key], 10, 64)
		if e != nil && err == nil {
			err = fmt.Errorf("beanstalkd: stats-job's %s is %q", key, m[key])
		}
		return n
	}
	id := num("id")
	s.ID = uint64(id)
	s.Pri = uint32(num("pri"))
	s.Age, s.Delay, s.TTR, s.TimeLeft = num("age"), num("delay"), num("ttr"), num("time-left")
	s.Reserves, s.Timeouts, s.Releases, s.Buries, s.Kicks = num("reserves"), num("timeouts"), num("releases"), num("buries"), num("kicks")
	return s, err
}

// TubeStats is stats-tube's answer (the counts Laravel reads).
type TubeStats struct {
	Name                                     string
	Urgent, Ready, Reserved, Delayed, Buried int64
	Total                                    int64
	Watching, Waiting                        int64
	Paused                                   bool
}

// StatsTube is a tube's stats; ErrNotFound when it does not exist (no
// job and no client uses or watches it).
func (c *Conn) StatsTube(tube string) (TubeStats, error) {
	if err := CheckTube(tube); err != nil {
		return TubeStats{}, err
	}
	r, err := c.one(Cmd{Line: "stats-tube " + tube}, "OK")
	if err != nil {
		return TubeStats{}, err
	}
	m := yamlMap(r.Data)
	n := func(key string) int64 { v, _ := strconv.ParseInt(m[key], 10, 64); return v }
	return TubeStats{
		Name: m["name"], Urgent: n("current-jobs-urgent"), Ready: n("current-jobs-ready"),
		Reserved: n("current-jobs-reserved"), Delayed: n("current-jobs-delayed"), Buried: n("current-jobs-buried"),
		Total: n("total-jobs"), Watching: n("current-watching"), Waiting: n("current-waiting"), Paused: n("pause") > 0,
	}, nil
}

// ListTubes names every tube that exists.
func (c *Conn) ListTubes() ([]string, error) {
	r, err := c.one(Cmd{Line: "list-tubes"}, "OK")
	if err != nil {
		return nil, err
	}
	return yamlList(r.Data), nil
}

// ListTubesWatched names the tubes this connection watches.
func (c *Conn) ListTubesWatched() ([]string, error) {
	r, err := c.one(Cmd{Line: "list-tubes-watched"}, "OK")
	if err != nil {
		return nil, err
	}
	return yamlList(r.Data), nil
}

// Stats is the server's stats (version, max-job-size...), as strings.
func (c *Conn) Stats() (map[string]string, error) {
	r, err := c.one(Cmd{Line: "stats"}, "OK")
	if err != nil {
		return nil, err
	}
	return yamlMap(r.Data), nil
}

// yamlMap reads the flat "key: value" YAML beanstalkd writes.
func yamlMap(data []byte) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, "---") {
			continue
		}
		m[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"`)
	}
	return m
}

// yamlList reads the "- name" list beanstalkd writes.
func yamlList(data []byte) []string {
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "- "); ok {
			out = append(out, name)
		}
	}
	return out
}
