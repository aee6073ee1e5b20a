package payload

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// Collection is a property declared as a Laravel collection
// (Illuminate\Support\Collection or a subclass) as a job carries it, in
// either of the two forms Laravel gives it. SerializesModels queues a
// collection of Eloquent models (any QueueableCollection: an
// Eloquent\Collection, also where the property is declared as a plain
// Collection) as a ModelIdentifier of the models' class and keys; any
// other collection, and every collection of a class without
// SerializesModels, travels as the collection object with its items.
type Collection struct {
	// Models is set when the collection was queued as models: their class
	// and keys (ID is a []any; Class is "" for an empty collection).
	// PHP loads the models again before handle(); Go loads nothing.
	Models *ModelIdentifier
	// Class is the PHP class of a collection queued as an object ("" with
	// Models).
	Class string
	// Items is the items array of a collection queued as an object (nil
	// with Models): a list, or keyed when the collection is (keyBy,
	// groupBy). Read it with Decode or Values.
	Items *phpserialize.Value
}

// ErrModelCollection is returned by Collection.Decode and Values for a
// collection queued as models: the payload holds their keys only.
var ErrModelCollection = errors.New("payload: the collection was queued as models (their class and keys): read Collection.Models")

// DecodePHP reads either form: a ModelIdentifier, or an object whose items
// property is an array (as Laravel's Collection keeps its items).
func (c *Collection) DecodePHP(v *phpserialize.Value) error {
	v = v.Deref()
	*c = Collection{}
	if IsModelIdentifier(v) {
		var m ModelIdentifier
		if err := m.DecodePHP(v); err != nil {
			return err
		}
		c.Models = &m
		return nil
	}
	if v == nil || v.Kind != phpserialize.KindObject {
		return fmt.Errorf("payload: want a collection (an object with items, or a %s), got %s", ModelIdentifierClass, describe(v))
	}
	items, err := v.Prop("items")
	if err != nil || items.Deref() == nil || items.Deref().Kind != phpserialize.KindArray {
		return fmt.Errorf("payload: want a collection (an object with items, or a %s), got %s without an items array", ModelIdentifierClass, describe(v))
	}
	c.Class, c.Items = v.Class, items.Deref()
	return nil
}

// IsModels reports whether the collection was queued as models.
func (c *Collection) IsModels() bool { return c.Models != nil }

// Len is the number of items, or of models.
func (c *Collection) Len() int {
	switch {
	case c.Models != nil:
		ids, _ := c.Models.ID.([]any)
		return len(ids)
	case c.Items != nil:
		return len(c.Items.Entries)
	}
	return 0
}

// Decode fills out (a pointer to a slice for a list, to a map for a keyed
// collection, or to anything else phpserialize.Decode fills from an
// array) from the items; ErrModelCollection for a model collection.
func (c *Collection) Decode(out any) error {
	if c.Models != nil {
		return ErrModelCollection
	}
	if c.Items == nil {
		return errors.New("payload: an empty Collection value (nothing was decoded into it)")
	}
	return phpserialize.Decode(c.Items, out)
}

// Values are the items in order, as phpserialize.Natural makes them;
// ErrModelCollection for a model collection.
func (c *Collection) Values() ([]any, error) {
	if c.Models != nil {
		return nil, ErrModelCollection
	}
	if c.Items == nil {
		return nil, nil
	}
	out := make([]any, 0, len(c.Items.Entries))
	for _, e := range c.Items.Entries {
		n, err := phpserialize.Natural(e.Value)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// MarshalJSON writes {"models": ...} for a model collection, else
// {"class": ..., "items": ...} with the items as phpserialize.Natural
// makes them (a list or an object).
func (c Collection) MarshalJSON() ([]byte, error) {
	if c.Models != nil {
		return json.Marshal(struct {
			Models *ModelIdentifier `json:"models"`
		}{c.Models})
	}
	var items any
	if c.Items != nil {
		var err error
		if items, err = phpserialize.Natural(c.Items); err != nil {
			return nil, err
		}
	}
	return json.Marshal(struct {
		Class string `json:"class"`
		Items any    `json:"items"`
	}{c.Class, items})
}
