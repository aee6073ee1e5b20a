package payload

import (
	"testing"

	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// TestEmptyModelCollection: Laravel 8.83's serialize() of a job holding an
// empty Eloquent collection (class null, ids []) decodes as an empty
// collection; a null class with ids is still refused.
func TestEmptyModelCollection(t *testing.T) {
	const empty = `O:45:"Illuminate\Contracts\Database\ModelIdentifier":4:{s:5:"class";N;s:2:"id";a:0:{}s:9:"relations";a:0:{}s:10:"connection";N;}`
	v, err := phpserialize.Unserialize([]byte(empty))
	if err != nil {
		t.Fatal(err)
	}
	var m ModelIdentifier
	if err := m.DecodePHP(v); err != nil {
		t.Fatal(err)
	}
	if m.Class != "" || !m.IsCollection() || len(m.ID.([]any)) != 0 {
		t.Errorf("%+v", m)
	}
	const broken = `O:45:"Illuminate\Contracts\Database\ModelIdentifier":4:{s:5:"class";N;s:2:"id";a:1:{i:0;i:7;}s:9:"relations";a:0:{}s:10:"connection";N;}`
	if v, err = phpserialize.Unserialize([]byte(broken)); err != nil {
		t.Fatal(err)
	}
	if err := m.DecodePHP(v); err == nil {
		t.Error("a null class with ids decoded")
	}
}
