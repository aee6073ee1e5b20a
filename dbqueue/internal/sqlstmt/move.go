package sqlstmt

import (
	"fmt"
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

// SamplePayloads reads the payloads of the first rows of some queues.
func (s Statements) SamplePayloads(nQueues, limit int) string {
	return s.sql(fmt.Sprintf("select %s from %s where %s in (%s) order by %s asc limit %d",
		s.Q("payload"), s.Q(s.T.Jobs), s.Q("queue"), Placeholders(nQueues), s.Q("id"), limit))
}
