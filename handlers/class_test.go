package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// TestExecInputKeepsFloatsFloats: ScalarJob (12.67) has whole = 2.0; a
// program reading the exec handler's JSON gets a float, not the integer 2.
func TestExecInputKeepsFloatsFloats(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "laravel-12.67", "payloads", "scalars.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := payload.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	in, err := execInput(NewJob(1, "default", 1, p, Env{}), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(in), `"whole":2.0`) ||
		!strings.Contains(string(in), `"ratio":0.1`) ||
		!strings.Contains(string(in), `"big":9223372036854775807`) {
		t.Fatalf("numbers are not kept as PHP's: %s", in)
	}
	var doc struct {
		Command struct {
			Properties map[string]any `json:"properties"`
		} `json:"command"`
	}
	dec := json.NewDecoder(strings.NewReader(string(in)))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if whole, ok := doc.Command.Properties["whole"].(json.Number); !ok || !strings.Contains(string(whole), ".") {
		t.Errorf("whole reads as %v: an integer", doc.Command.Properties["whole"])
	}
}

func TestClassOptionsAreRegistered(t *testing.T) {
	reg := NewRegistry()
	id := UniqueIDProperty("productId")
	reg.HandleFunc(`App\Jobs\A`, func(context.Context, *Job) error { return nil },
		UniqueVia("redis"), ShouldBeUniqueUntilProcessing(id), DeleteWhenMissingModels(),
		Models(Model{Class: `App\Models\User`, Table: "users"}))
	reg.HandleFunc(`App\Jobs\B`, func(context.Context, *Job) error { return nil })
	a := reg.Class(`app\jobs\a`)
	if a.Unique == nil || !a.Unique.UntilProcessing || a.Unique.Store != "redis" || !a.DeleteWhenMissingModels || len(a.Models) != 1 {
		t.Fatalf("class A: %+v", a)
	}
	if b := reg.Class(`App\Jobs\B`); b.Unique != nil || b.DeleteWhenMissingModels {
		t.Fatalf("class B: %+v", b)
	}
	if u := reg.Unique(); len(u) != 1 || !u[`App\Jobs\A`].UntilProcessing {
		t.Fatalf("Unique() = %+v", u)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "a Model needs a Class and a Table") {
			t.Fatalf("an incomplete Model was accepted: %v", r)
		}
	}()
	reg.HandleFunc(`App\Jobs\C`, func(context.Context, *Job) error { return nil }, Models(Model{Class: "X"}))
}

func TestUniqueIDPropertyIsPHPsStringConversion(t *testing.T) {
	cases := []struct {
		v    *phpserialize.Value
		want string
		bad  bool
	}{
		{phpserialize.Int(-42), "-42", false},
		{phpserialize.String("sku-1"), "sku-1", false},
		{phpserialize.Bool(true), "1", false},
		{phpserialize.Bool(false), "", false},
		{phpserialize.Null(), "", false},
		{phpserialize.Float(0.1), "", true},
		{phpserialize.List(), "", true},
	}
	for _, c := range cases {
		cmd := &payload.Command{Object: phpserialize.Object(`App\Jobs\U`, phpserialize.Public("productId", c.v))}
		got, err := UniqueIDProperty("productId")(cmd)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("%v: %q, %v", c.v.Kind, got, err)
		}
	}
	cmd := &payload.Command{Object: phpserialize.Object(`App\Jobs\U`)}
	if _, err := UniqueIDProperty("productId")(cmd); !errors.Is(err, phpserialize.ErrNoProperty) {
		t.Errorf("a missing property: %v", err)
	}
	typed := UniqueIDOf(func(c *struct {
		ID int64 `php:"productId"`
	}) string {
		return "p" + string(rune('0'+c.ID))
	})
	got, err := typed(&payload.Command{Object: phpserialize.Object(`App\Jobs\U`, phpserialize.Public("productId", phpserialize.Int(7)))})
	if err != nil || got != "p7" {
		t.Errorf("UniqueIDOf: %q %v", got, err)
	}
}

func TestModelNotFoundTexts(t *testing.T) {
	if got := ModelNotFound(`App\Models\User`).Error(); got != `No query results for model [App\Models\User].` {
		t.Errorf("%q", got)
	}
	if got := ModelNotFound(`App\Models\User`, 1, "b").Error(); got != `No query results for model [App\Models\User] 1, b` {
		t.Errorf("%q", got)
	}
	if !errors.Is(ModelNotFound("X"), ErrModelNotFound) {
		t.Error("errors.Is(ModelNotFound, ErrModelNotFound) is false")
	}
}
