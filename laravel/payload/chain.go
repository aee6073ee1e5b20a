package payload

import (
	"errors"
	"fmt"

	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// ErrChainEnd is returned by NextInChain when no links are left.
var ErrChainEnd = errors.New("payload: no chained job left")

// queueableOrder lists Bus\Queueable's properties in declaration order, as
// 8.x-10.x and 11.x+ emit them; it places a property that 9.4+'s
// SerializesModels omitted (it held its default) when it must come back.
var queueableOrder = [][]string{
	{"connection", "queue", "chainConnection", "chainQueue", "chainCatchCallbacks", "delay", "afterCommit", "middleware", "chained"},
	{"connection", "queue", "delay", "afterCommit", "middleware", "chained", "chainConnection", "chainQueue", "chainCatchCallbacks"},
}

// NextInChain builds the command Laravel's dispatchNextJobInChain pushes
// after cur succeeds: it unserializes chained[0], gives it the remaining
// links, its own connection/queue or else the chain's, and copies
// chainConnection, chainQueue and chainCatchCallbacks from cur.
func NextInChain(cur *Command) (*Command, error) {
	links := listValues(optionalProp(cur.Object, "chained"))
	if len(links) == 0 {
		return nil, ErrChainEnd
	}
	if links[0].Kind != phpserialize.KindString {
		return nil, fmt.Errorf("payload: chained[0] is %s, want a serialized job", describe(links[0]))
	}
	next, err := ParseCommand(links[0].Str)
	if err != nil {
		return nil, fmt.Errorf("payload: chained[0]: %w", err)
	}
	rest := make([]*phpserialize.Value, 0, len(links)-1)
	for _, l := range links[1:] {
		rest = append(rest, phpserialize.Bytes(append([]byte(nil), l.Str...)))
	}
	chainConn := copyProp(cur.Object, "chainConnection")
	chainQueue := copyProp(cur.Object, "chainQueue")
	setQueueable(next.Object, "chained", phpserialize.List(rest...), true)
	setQueueable(next.Object, "connection", orElse(copyProp(next.Object, "connection"), chainConn), false)
	setQueueable(next.Object, "queue", orElse(copyProp(next.Object, "queue"), chainQueue), false)
	setQueueable(next.Object, "chainConnection", chainConn, false)
	setQueueable(next.Object, "chainQueue", chainQueue, false)
	setQueueable(next.Object, "chainCatchCallbacks", copyProp(cur.Object, "chainCatchCallbacks"), false)
	return next, nil
}

// orElse is PHP's `$a ?: $b` for the string-or-null queue properties.
func orElse(a, b *phpserialize.Value) *phpserialize.Value {
	if a == nil || a.Kind == phpserialize.KindNull || (a.Kind == phpserialize.KindString && (len(a.Str) == 0 || string(a.Str) == "0")) {
		return b
	}
	return a
}

// copyProp returns a deep copy of a public property, or null when absent.
func copyProp(obj *phpserialize.Value, name string) *phpserialize.Value {
	v := publicProp(obj, name)
	if v == nil {
		return phpserialize.Null()
	}
	return phpserialize.DeepCopy(v)
}

// setQueueable sets a Queueable property. A property that is present is
// replaced in place. An absent one was omitted because it held its default
// (9.4+), so it stays absent when the new value is the default again, and
// otherwise goes where PHP's declaration order puts it.
func setQueueable(obj *phpserialize.Value, name string, v *phpserialize.Value, defaultIsEmptyArray bool) {
	for i := range obj.Entries {
		if !obj.Entries[i].Key.IsInt && obj.Entries[i].Key.Str == name {
			obj.Entries[i].Value = v
			return
		}
	}
	if isDefault(v, defaultIsEmptyArray) {
		return
	}
	at := insertionPoint(obj, name)
	obj.Entries = append(obj.Entries, phpserialize.Entry{})
	copy(obj.Entries[at+1:], obj.Entries[at:])
	obj.Entries[at] = phpserialize.Entry{Key: phpserialize.StrKey(name), Value: v}
}

func isDefault(v *phpserialize.Value, emptyArray bool) bool {
	if emptyArray {
		return v.Kind == phpserialize.KindArray && len(v.Entries) == 0
	}
	return v.Kind == phpserialize.KindNull
}

// insertionPoint finds where name goes among the Queueable properties the
// object has, using whichever declaration order matches what is present.
func insertionPoint(obj *phpserialize.Value, name string) int {
	order := queueableOrder[0]
	if precedes(obj, "delay", "chainConnection") || precedes(obj, "chained", "chainQueue") {
		order = queueableOrder[1]
	}
	pos := indexOf(order, name)
	for i := len(obj.Entries) - 1; i >= 0; i-- {
		k := obj.Entries[i].Key
		if k.IsInt {
			continue
		}
		if p := indexOf(order, k.Str); p >= 0 && p < pos {
			return i + 1
		}
	}
	for i, e := range obj.Entries {
		if !e.Key.IsInt && indexOf(order, e.Key.Str) > pos {
			return i
		}
	}
	return len(obj.Entries)
}

func precedes(obj *phpserialize.Value, a, b string) bool {
	ia, ib := -1, -1
	for i, e := range obj.Entries {
		switch e.Key.Str {
		case a:
			ia = i
		case b:
			ib = i
		}
	}
	return ia >= 0 && ib >= 0 && ia < ib
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}
