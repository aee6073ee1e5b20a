package payload

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// Dispatch is what the dispatching code sets on a job through Queueable
// (onConnection, onQueue, delay) and the Laravel version that serializes it.
type Dispatch struct {
	Connection string // onConnection(); "" leaves null
	Queue      string // onQueue(); "" leaves null
	Delay      *int64 // delay(seconds); nil leaves null
	// Shape8 writes every InteractsWithQueue and Queueable property, as 8.x
	// (and 9.0 to 9.3) serialize them; later shapes follow 9.4+'s
	// SerializesModels, which leaves out properties holding their default
	// (SerializesDefaults).
	Shape Shape
}

// NewCommand builds the command object a PHP job class using
// InteractsWithQueue and Queueable serializes to: props (the class's own
// properties, in declaration order, as PHP puts them first) followed by
// the trait properties. Pass the result to BuildObjectPayload. A prop named
// like a trait property takes that property's place, as a PHP class
// redeclaring it would.
func NewCommand(class string, props []phpserialize.Entry, d Dispatch) *phpserialize.Value {
	own := make(map[string]bool, len(props))
	entries := make([]phpserialize.Entry, 0, len(props)+10)
	for _, p := range props {
		own[p.Key.Str] = true
		entries = append(entries, p)
	}
	for _, t := range traitProps(d) {
		if own[t.Key.Str] {
			continue
		}
		if d.Shape.SerializesDefaults() || !t.isDefault {
			entries = append(entries, t.Entry)
		}
	}
	return phpserialize.Object(class, entries...)
}

type traitProp struct {
	phpserialize.Entry
	isDefault bool
}

// traitProps lists InteractsWithQueue's and Queueable's public properties
// in the order ReflectionClass reports them for the shape's Laravel
// version (Queueable was reordered in 11.x). Shape94 spans both orders,
// but of the properties NewCommand can set (connection, queue, delay)
// both keep the same order, and the others are left out as defaults.
func traitProps(d Dispatch) []traitProp {
	str := func(name, s string) traitProp {
		if s == "" {
			return traitProp{phpserialize.Public(name, phpserialize.Null()), true}
		}
		return traitProp{phpserialize.Public(name, phpserialize.String(s)), false}
	}
	null := func(name string) traitProp { return traitProp{phpserialize.Public(name, phpserialize.Null()), true} }
	empty := func(name string) traitProp { return traitProp{phpserialize.Public(name, phpserialize.List()), true} }
	delay := null("delay")
	if d.Delay != nil {
		delay = traitProp{phpserialize.Public("delay", phpserialize.Int(*d.Delay)), false}
	}
	if d.Shape.SerializesDefaults() {
		return []traitProp{null("job"), str("connection", d.Connection), str("queue", d.Queue),
			null("chainConnection"), null("chainQueue"), null("chainCatchCallbacks"), delay,
			null("afterCommit"), empty("middleware"), empty("chained")}
	}
	return []traitProp{null("job"), str("connection", d.Connection), str("queue", d.Queue), delay,
		null("afterCommit"), empty("middleware"), empty("chained"),
		null("chainConnection"), null("chainQueue"), null("chainCatchCallbacks")}
}

// FromJSON converts a JSON document to the PHP value json_decode($raw,
// true) gives: objects become arrays whose integer-like keys are int keys,
// integers that fit become ints and other numbers floats, and a repeated key
// keeps its first position with its last value.
func FromJSON(raw []byte) (*phpserialize.Value, error) {
	n, err := decodeOrdered(raw)
	if err != nil {
		return nil, fmt.Errorf("payload: invalid JSON: %w", err)
	}
	return n.phpValue(0)
}

func (n *jsonNode) phpValue(depth int) (*phpserialize.Value, error) {
	// json_decode's default depth limit is 512.
	if depth > 512 {
		return nil, errors.New("payload: JSON nested too deeply")
	}
	switch n.kind {
	case 'z':
		return phpserialize.Null(), nil
	case 'b':
		return phpserialize.Bool(n.truthy), nil
	case 's':
		return phpserialize.String(n.str), nil
	case 'n':
		return phpNumber(string(n.num))
	case 'a':
		items := make([]*phpserialize.Value, len(n.vals))
		for i, v := range n.vals {
			pv, err := v.phpValue(depth + 1)
			if err != nil {
				return nil, err
			}
			items[i] = pv
		}
		return phpserialize.List(items...), nil
	}
	arr := phpserialize.Array()
	for i, k := range n.keys {
		pv, err := n.vals[i].phpValue(depth + 1)
		if err != nil {
			return nil, err
		}
		// "7" and 7 are one key in PHP: set, not append.
		if err := arr.SetEntry(phpserialize.ArrayKey(k), pv); err != nil {
			return nil, err
		}
	}
	return arr, nil
}

// phpNumber: an integer literal is an int unless it overflows, which PHP
// turns into a float; anything with a fraction or exponent is a float.
func phpNumber(s string) (*phpserialize.Value, error) {
	if i, err := strconv.ParseInt(s, 10, 64); err == nil {
		return phpserialize.Int(i), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, fmt.Errorf("payload: invalid number %s", s)
	}
	return phpserialize.Float(f), nil
}
