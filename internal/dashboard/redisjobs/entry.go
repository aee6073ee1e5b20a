package redisjobs

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/laraworker/laraworker/internal/dashboard/snapshot"
	"github.com/laraworker/laraworker/internal/fleet"
	"github.com/laraworker/laraworker/internal/redisproto"
)

// entry is one peeked job, as the pages show it.
type entry struct {
	id, uuid, class string
	attempts        int64
	// created and delay are the payload's createdAt and delay (Laravel
	// 12.11+; Horizon's pushedAt for created), 0 when it has none.
	created, delay int64
	// score is a delayed job's due second or a reserved job's expiry.
	score int64
	tags  []string
}

// Keys Laravel writes at the end of a payload (after "data"), which a
// cut job keeps in its tail. The command inside "data" is a string whose
// quotes are escaped, so these can only match keys of the payload's own
// objects; the last match is the top level's.
var (
	idKey       = []byte(`"id":"`)
	attemptsKey = []byte(`"attempts":`)
	createdKey  = []byte(`"createdAt":`)
	delayKey    = []byte(`"delay":`)
	pushedKey   = []byte(`"pushedAt":"`)
)

// fromList reads a ready or delayed job: uuid and class from its head,
// the rest from its tail (the head too, when it came whole).
func fromList(p redisproto.Peeked, withTags bool) entry {
	head := []byte(p.Head)
	tail := head
	if p.Cut() {
		tail = []byte(p.Tail)
	}
	e := entry{uuid: fleet.UUIDOf(head), score: p.Score}
	e.class, _ = fleet.ClassOf(head)
	e.id = stringAfter(tail, idKey)
	e.attempts = numberAfter(tail, attemptsKey)
	e.created = numberAfter(tail, createdKey)
	if e.created == 0 {
		if pushed, err := strconv.ParseFloat(stringAfter(tail, pushedKey), 64); err == nil {
			e.created = int64(pushed)
		}
	}
	e.delay = numberAfter(tail, delayKey)
	if withTags && !p.Cut() {
		e.tags = snapshot.TagsOf(head)
	}
	return e
}

// reservedFields are what a reserved member tells; the pop's cjson
// re-encoding put its keys in no set order, so it is decoded.
type reservedFields struct {
	UUID        string      `json:"uuid"`
	DisplayName string      `json:"displayName"`
	ID          any         `json:"id"`
	Attempts    json.Number `json:"attempts"`
	CreatedAt   json.Number `json:"createdAt"`
}

// fromReserved reads a reserved member.
func fromReserved(p redisproto.Peeked, withTags bool) entry {
	var f reservedFields
	dec := json.NewDecoder(bytes.NewReader([]byte(p.Head)))
	dec.UseNumber()
	_ = dec.Decode(&f)
	e := entry{uuid: f.UUID, class: f.DisplayName, score: p.Score}
	if s, ok := f.ID.(string); ok {
		e.id = s
	}
	if e.class == "" {
		e.class = "(unreadable payload)"
	}
	if n, err := f.Attempts.Float64(); err == nil {
		e.attempts = int64(n)
	}
	if n, err := f.CreatedAt.Float64(); err == nil {
		e.created = int64(n)
	}
	if withTags {
		e.tags = snapshot.TagsOf([]byte(p.Head))
	}
	return e
}

// stringAfter is the JSON string value after the last key (which ends
// with its opening quote); "" when absent or escaped.
func stringAfter(raw, key []byte) string {
	i := bytes.LastIndex(raw, key)
	if i < 0 {
		return ""
	}
	rest := raw[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 || j > 128 || bytes.IndexByte(rest[:j], '\\') >= 0 {
		return ""
	}
	return string(rest[:j])
}

// numberAfter is the integer after the last key, 0 when absent.
func numberAfter(raw, key []byte) int64 {
	i := bytes.LastIndex(raw, key)
	if i < 0 {
		return 0
	}
	rest := raw[i+len(key):]
	j := 0
	for j < len(rest) && (rest[j] == '-' || rest[j] == '.' || rest[j] >= '0' && rest[j] <= '9' || rest[j] == 'e' || rest[j] == 'E' || rest[j] == '+') {
		j++
	}
	f, err := strconv.ParseFloat(string(rest[:j]), 64)
	if err != nil {
		return 0
	}
	return int64(f)
}
