package snapshot

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/laraworker/laraworker/laravel/payload"
)

// Tags are what Horizon tags a job with by default: the Eloquent models
// it holds, as "App\Models\Podcast:42" (one tag per model of a
// collection). The caches read them from the payloads that hold a
// ModelIdentifier (SerializesModels' stand-in for a model), when a row is
// first read: the tail's statement returns those payloads whole, the
// others not at all. An encrypted command hides its models: such jobs have
// no tags. With --hide-payloads no tag is read (model ids can be personal
// data).

// modelMarker is in every payload whose command holds a serialized
// model: the ModelIdentifier class name.
const modelMarker = "ModelIdentifier"

const (
	// maxTagsPerJob bounds the tags kept per job (a collection of a
	// thousand models would otherwise make a thousand).
	maxTagsPerJob = 10
	// maxDistinctTags bounds the tag strings one cache holds; past it, new
	// tags are not kept (the page says so).
	maxDistinctTags = 500_000
)

// TagsOf lists the models a payload's command holds as tags, as
// Horizon tags a job by default ("App\Models\Podcast:42"), at most
// maxTagsPerJob; nil when it holds none or cannot be read.
func TagsOf(raw []byte) []string {
	if !bytes.Contains(raw, []byte(modelMarker)) {
		return nil
	}
	p, err := payload.Parse(raw)
	if err != nil || p.Data.Command == "" {
		return nil
	}
	cmd, err := payload.DecodeCommand(p, nil)
	if err != nil {
		return nil
	}
	var out []string
	add := func(class string, id any) bool {
		tag := fmt.Sprintf("%s:%v", class, id)
		if !slices.Contains(out, tag) {
			out = append(out, tag)
		}
		return len(out) < maxTagsPerJob
	}
	for _, m := range cmd.Models() {
		if m.Model.Class == "" {
			continue // an empty collection
		}
		ids, ok := m.Model.ID.([]any)
		if !ok {
			ids = []any{m.Model.ID}
		}
		for _, id := range ids {
			if !add(m.Model.Class, id) {
				return out
			}
		}
	}
	return out
}

// tagSet holds the tags of a cache's rows: each distinct tag once,
// counted by the rows holding it and freed with the last one, and per row
// its tags: the tag's number for a row with one tag (most jobs hold one
// model), else a list's. Only rows with tags take room.
type tagSet struct {
	byRow map[int64]uint32 // a tag, or listBit | a list
	lists [][]uint32
	freeL []uint32
	names []string
	index map[string]uint32
	refs  []int32
	free  []uint32
	// dropped counts tags not kept because maxDistinctTags was reached.
	dropped int64
}

// listBit marks a byRow value that numbers a list of tags.
const listBit = 1 << 31

func newTagSet() *tagSet {
	return &tagSet{byRow: map[int64]uint32{}, index: map[string]uint32{}}
}

// ids are row id's tag numbers.
func (t *tagSet) ids(id int64) []uint32 {
	v, ok := t.byRow[id]
	switch {
	case !ok:
		return nil
	case v&listBit != 0:
		return t.lists[v&^listBit]
	}
	return []uint32{v}
}

// set gives row id its tags, replacing what it had.
func (t *tagSet) set(id int64, tags []string) {
	t.drop(id)
	var ids []uint32
	for _, tag := range tags {
		n, ok := t.intern(tag)
		if !ok {
			t.dropped++
			continue
		}
		ids = append(ids, n)
	}
	switch len(ids) {
	case 0:
	case 1:
		t.byRow[id] = ids[0]
	default:
		var l uint32
		if n := len(t.freeL); n > 0 {
			l, t.freeL = t.freeL[n-1], t.freeL[:n-1]
			t.lists[l] = ids
		} else {
			l = uint32(len(t.lists))
			t.lists = append(t.lists, ids)
		}
		t.byRow[id] = listBit | l
	}
}

func (t *tagSet) intern(tag string) (uint32, bool) {
	if n, ok := t.index[tag]; ok {
		t.refs[n]++
		return n, true
	}
	var n uint32
	switch {
	case len(t.free) > 0:
		n = t.free[len(t.free)-1]
		t.free = t.free[:len(t.free)-1]
		t.names[n], t.refs[n] = tag, 1
	case len(t.names) >= maxDistinctTags:
		return 0, false
	default:
		n = uint32(len(t.names))
		t.names, t.refs = append(t.names, tag), append(t.refs, 1)
	}
	t.index[tag] = n
	return n, true
}

// drop forgets row id's tags, freeing those no other row holds.
func (t *tagSet) drop(id int64) {
	ids := t.ids(id)
	if ids == nil {
		return
	}
	if v := t.byRow[id]; v&listBit != 0 {
		t.lists[v&^listBit] = nil
		t.freeL = append(t.freeL, v&^listBit)
	}
	delete(t.byRow, id)
	for _, n := range ids {
		if t.refs[n]--; t.refs[n] == 0 {
			delete(t.index, t.names[n])
			t.names[n] = ""
			t.free = append(t.free, n)
		}
	}
}

// of lists row id's tags.
func (t *tagSet) of(id int64) []string {
	ids := t.ids(id)
	if len(ids) == 0 {
		return nil
	}
	out := make([]string, len(ids))
	for i, n := range ids {
		out[i] = t.names[n]
	}
	return out
}

// rowsWith lists the rows holding tag, by id.
func (t *tagSet) rowsWith(tag string) []int64 {
	n, ok := t.index[tag]
	if !ok {
		return nil
	}
	var out []int64
	for id, v := range t.byRow {
		if v == n || v&listBit != 0 && slices.Contains(t.lists[v&^listBit], n) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// distinct is how many different tags are held.
func (t *tagSet) distinct() int { return len(t.index) }
