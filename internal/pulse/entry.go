package pulse

import (
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// Entry is one of Pulse's entries (Laravel\Pulse\Entry): a timestamp in
// Unix seconds, a type, a key, an optional value, the aggregations
// DatabaseStorage computes over it, and whether it is kept in the
// aggregates only (no pulse_entries row).
type Entry struct {
	Timestamp    int64
	Type, Key    string
	Value        *int64
	Aggregations []string
	OnlyBuckets  bool
}

// Aggregations Pulse's storage computes.
const (
	aggCount = "count"
	aggMin   = "min"
	aggMax   = "max"
	aggSum   = "sum"
	aggAvg   = "avg"
)

// entryClass is the class Pulse's Redis ingest serializes.
const entryClass = `Laravel\Pulse\Entry`

// Serialized is the entry as PHP's serialize() writes a Laravel\Pulse\Entry
// (what RedisIngest puts in the stream): the properties in the order the
// class declares them, the protected ones mangled.
func (e Entry) Serialized() ([]byte, error) {
	aggs := make([]*phpserialize.Value, len(e.Aggregations))
	for i, a := range e.Aggregations {
		aggs[i] = phpserialize.String(a)
	}
	value := phpserialize.Null()
	if e.Value != nil {
		value = phpserialize.Int(*e.Value)
	}
	return phpserialize.Serialize(phpserialize.Object(entryClass,
		phpserialize.Protected("aggregations", phpserialize.List(aggs...)),
		phpserialize.Protected("onlyBuckets", phpserialize.Bool(e.OnlyBuckets)),
		phpserialize.Public("timestamp", phpserialize.Int(e.Timestamp)),
		phpserialize.Public("type", phpserialize.String(e.Type)),
		phpserialize.Public("key", phpserialize.String(e.Key)),
		phpserialize.Public("value", value),
	))
}
