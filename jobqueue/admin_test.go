package jobqueue

import (
	"encoding/json"
	"testing"
)

// TestJobIDIsWhatTheBackendNamesIt: a numbered job's id prints and
// encodes as a number (the jobs table's), a named one as a string (the
// payload's "id" on Redis), as `laraworker push` prints them.
func TestJobIDIsWhatTheBackendNamesIt(t *testing.T) {
	for _, c := range []struct {
		id         JobID
		text, json string
	}{
		{JobID{Num: 42}, "42", `{"id":42}`},
		{JobID{Str: "cqxwqbrBZIbjYUwQ36d0krMwHD6FJgTt"}, "cqxwqbrBZIbjYUwQ36d0krMwHD6FJgTt", `{"id":"cqxwqbrBZIbjYUwQ36d0krMwHD6FJgTt"}`},
		{JobID{Str: "7"}, "7", `{"id":"7"}`},
	} {
		raw, err := json.Marshal(map[string]any{"id": c.id})
		if err != nil || string(raw) != c.json || c.id.String() != c.text {
			t.Errorf("%#v: prints %q, encodes %s (%v); want %q and %s", c.id, c.id.String(), raw, err, c.text, c.json)
		}
	}
}
