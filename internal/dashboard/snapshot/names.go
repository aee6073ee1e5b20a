package snapshot

import "github.com/laraworker/laraworker/laravel/payload"

// names interns queue and class names, so a cached row holds a small
// number instead of a string. Names come from the tables, which anyone
// who can write them controls: past limit distinct names, new ones all
// become overflow.
type names struct {
	list  []string
	index map[string]uint32
	limit int
}

const overflowName = "(other)"

func newNames(limit int) *names {
	return &names{index: map[string]uint32{}, limit: limit}
}

func (n *names) id(s string) uint32 {
	if i, ok := n.index[s]; ok {
		return i
	}
	if len(n.list) >= n.limit {
		s = overflowName
		if i, ok := n.index[s]; ok {
			return i
		}
	}
	i := uint32(len(n.list))
	n.list = append(n.list, s)
	n.index[s] = i
	return i
}

func (n *names) name(i uint32) string {
	if int(i) < len(n.list) {
		return n.list[i]
	}
	return ""
}

// lookup finds an existing name without adding it.
func (n *names) lookup(s string) (uint32, bool) {
	i, ok := n.index[s]
	return i, ok
}

// classOfPayload names a payload's class as queue:failed does, or says
// it cannot be read.
func classOfPayload(raw []byte) string {
	if p, err := payload.Parse(raw); err == nil && p.Name() != "" {
		return p.Name()
	}
	return "(unreadable payload)"
}
