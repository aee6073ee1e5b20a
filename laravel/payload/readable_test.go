package payload

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// ReadableJSON is what exec handlers and `inspect` users read: properties
// by name (jq .properties.count), their visibility beside them, numbers as
// PHP wrote them.
func TestReadableJSONObjects(t *testing.T) {
	out, err := ReadableJSON(command1267(t, "scalars.json").Object)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`"class":"App\\Jobs\\ScalarJob","properties":{"count":42,`,
		`"whole":2.0,`,
		`"big":9223372036854775807,`,
		`"secretNote":"protected promoted","privateCount":3}`,
		`"visibility":{"secretNote":"protected","privateCount":"private App\\Jobs\\ScalarJob"}`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("lacks %s:\n%s", want, out)
		}
	}
	var doc struct {
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || doc.Properties["count"] != float64(42) || doc.Properties["title"] == nil {
		t.Fatalf("properties are not addressable by name: %v %v", doc.Properties, err)
	}

	// The same private name declared by a parent and its child: both kept,
	// told apart by their class.
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "serialized", "visibility.ser"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := phpserialize.Unserialize(raw)
	if err != nil {
		t.Fatal(err)
	}
	out, err = ReadableJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"class":"Fixtures\\Child","properties":{"pub":"p","prot":"q","Fixtures\\Base::secret":"base-secret","Fixtures\\Child::secret":"child-secret","own":1},` +
		`"visibility":{"prot":"protected","Fixtures\\Base::secret":"private Fixtures\\Base","Fixtures\\Child::secret":"private Fixtures\\Child"}}`
	if string(out) != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
}

// TestReadableJSONWritesStringsAsTheyAre: "&", "<" and ">" are printed
// for people (inspect, the dashboard, exec handlers' input), not as the
// \u0026, \u003c, \u003e that encoding/json writes for HTML.
func TestReadableJSONWritesStringsAsTheyAre(t *testing.T) {
	v := phpserialize.Object(`App\Jobs\Mail`, phpserialize.Public("subject", phpserialize.String("Tom & Jerry <3>")),
		phpserialize.Public("tags", phpserialize.Array(phpserialize.Entry{Key: phpserialize.StrKey("a&b"), Value: phpserialize.String("<x>")})))
	got, err := ReadableJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"subject":"Tom & Jerry <3>"`) || !strings.Contains(string(got), `"key":"a&b","value":"<x>"`) || strings.Contains(string(got), `\u00`) {
		t.Errorf("got %s", got)
	}
}
