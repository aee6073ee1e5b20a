package sqlstmt

import (
	"fmt"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"strings"
)

// CountClassByState counts a class's rows on one queue, unreserved and
// reserved (nPatterns LIKE alternatives).
func (s Statements) CountClassByState(nPatterns int) string {
	r := s.Q("reserved_at")
	return s.sql(fmt.Sprintf("select sum(case when %s is null then 1 else 0 end), sum(case when %s is not null then 1 else 0 end) from %s where %s = ? and (%s)",
		r, r, s.Q(s.T.Jobs), s.Q("queue"), s.likeAlternatives(nPatterns)))
}

func (s Statements) likeAlternatives(n int) string {
	alts := make([]string, n)
	for i := range alts {
		alts[i] = fmt.Sprintf("%s like ? escape '%c'", s.Q("payload"), likeEscape)
	}
	return strings.Join(alts, " or ")
}

// MoveSelect reads the next unreserved candidates of a move, without locks.
func (s Statements) MoveSelect(nPatterns, limit int) string {
	return s.sql(fmt.Sprintf("select %s, %s from %s where %s = ? and %s is null and (%s) and %s > ? order by %s asc limit %d",
		s.Q("id"), s.Q("payload"), s.Q(s.T.Jobs), s.Q("queue"), s.Q("reserved_at"), s.likeAlternatives(nPatterns), s.Q("id"), s.Q("id"), limit))
}

// MoveJobs moves n rows, only those still on the source queue and
// unreserved when the statement runs.
func (s Statements) MoveJobs(n int) string {
	return s.sql(fmt.Sprintf("update %s set %s = ? where %s = ? and %s is null and %s in (%s)",
		s.Q(s.T.Jobs), s.Q("queue"), s.Q("queue"), s.Q("reserved_at"), s.Q("id"), Placeholders(n)))
}

// SamplePayloads reads the first prefix characters of the payloads of
// the first rows of some queues: what a payload starts with (its uuid and
// displayName), never a whole payload, which may be megabytes. SQLite
// runs in the worker's process and loads a whole value to take a
// substr() of it, so there a payload over SampleWhole bytes (octet_length
// reads its size without loading it) gives null: its class is not read.
func (s Statements) SamplePayloads(nQueues, limit, prefix int) string {
	col := fmt.Sprintf("substr(%s, 1, %d)", s.Q("payload"), prefix)
	if s.d.Name() == appconfig.EngineSQLite {
		col = fmt.Sprintf("case when octet_length(%s) <= %d then %s end", s.Q("payload"), SampleWhole, col)
	}
	return s.sql(fmt.Sprintf("select %s from %s where %s in (%s) order by %s asc limit %d",
		col, s.Q(s.T.Jobs), s.Q("queue"), Placeholders(nQueues), s.Q("id"), limit))
}

// SampleWhole is the largest payload whose first bytes SQLite reads for
// the sample (loading it whole).
const SampleWhole = 1 << 20
