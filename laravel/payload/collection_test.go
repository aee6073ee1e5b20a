package payload

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// The properties of App\Jobs\Shapes\ExchangeRatesJob as Laravel 8.83
// queued them (`php artisan app:dispatch exchange-rates` of the test app,
// jobs.payload): $users held User::all() and is declared a plain
// Collection; $totals and $tags are plain collections.
const (
	queuedUsers  = `O:45:"Illuminate\Contracts\Database\ModelIdentifier":4:{s:5:"class";s:15:"App\Models\User";s:2:"id";a:2:{i:0;i:2;i:1;i:1;}s:9:"relations";a:0:{}s:10:"connection";s:6:"sqlite";}`
	queuedTotals = `O:29:"Illuminate\Support\Collection":2:{s:8:"` + "\x00*\x00" + `items";a:2:{s:3:"EUR";d:1.5;s:3:"USD";i:2;}s:28:"` + "\x00*\x00" + `escapeWhenCastingToString";b:0;}`
	queuedTags   = `O:29:"Illuminate\Support\Collection":2:{s:8:"` + "\x00*\x00" + `items";a:2:{i:0;s:5:"rates";i:1;s:5:"daily";}s:28:"` + "\x00*\x00" + `escapeWhenCastingToString";b:0;}`
)

func unserialized(t *testing.T, s string) *phpserialize.Value {
	t.Helper()
	v, err := phpserialize.UnserializeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCollectionBothForms: a Collection reads a collection queued as
// models (their class and keys) and one queued as the object with its
// items, keyed or a list; anything else is an error naming what arrived.
func TestCollectionBothForms(t *testing.T) {
	var users Collection
	if err := users.DecodePHP(unserialized(t, queuedUsers)); err != nil {
		t.Fatal(err)
	}
	if !users.IsModels() || users.Models.Class != `App\Models\User` || users.Len() != 2 || users.Items != nil {
		t.Errorf("users %+v", users)
	}
	if _, err := users.Values(); !errors.Is(err, ErrModelCollection) {
		t.Errorf("Values of a model collection: %v", err)
	}

	var totals Collection
	if err := totals.DecodePHP(unserialized(t, queuedTotals)); err != nil {
		t.Fatal(err)
	}
	var m map[string]float64
	if err := totals.Decode(&m); err != nil || m["EUR"] != 1.5 || m["USD"] != 2 || totals.Class != `Illuminate\Support\Collection` || totals.Len() != 2 {
		t.Errorf("totals %v %v", m, err)
	}
	var tags Collection
	if err := tags.DecodePHP(unserialized(t, queuedTags)); err != nil {
		t.Fatal(err)
	}
	var list []string
	if err := tags.Decode(&list); err != nil || strings.Join(list, ",") != "rates,daily" {
		t.Errorf("tags %v %v", list, err)
	}
	if vs, err := tags.Values(); err != nil || len(vs) != 2 || vs[1] != "daily" {
		t.Errorf("tags values %v %v", vs, err)
	}
	if err := tags.Decode(&m); err == nil {
		t.Error("a list decoded into a map of floats")
	}

	for name, js := range map[string]string{
		"users":  `{"models":{"Class":"App\\Models\\User","ID":[2,1],"Relations":null,"Connection":"sqlite","CollectionClass":null}}`,
		"totals": `{"class":"Illuminate\\Support\\Collection","items":{"EUR":1.5,"USD":2}}`,
	} {
		c := map[string]Collection{"users": users, "totals": totals}[name]
		if b, err := json.Marshal(c); err != nil || string(b) != js {
			t.Errorf("%s as JSON: %s %v", name, b, err)
		}
	}

	var c Collection
	for _, bad := range []string{`a:1:{i:0;i:1;}`, `O:8:"stdClass":1:{s:1:"x";i:1;}`, `i:3;`} {
		if err := c.DecodePHP(unserialized(t, bad)); err == nil || !strings.Contains(err.Error(), "want a collection") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
