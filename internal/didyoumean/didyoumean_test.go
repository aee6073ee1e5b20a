package didyoumean

import "testing"

func TestSuggestClassNames(t *testing.T) {
	present := []string{`App\Jobs\ScalarsJob`, `App\Jobs\NoopJob`, `App\Jobs\Reports\BuildReport`, `App\Jobs\Mail\BuildReport`}
	cases := []struct {
		in, want string
		ok       bool
	}{
		{`App\\Jobs\\ScalarsJob`, `App\Jobs\ScalarsJob`, true}, // doubled backslashes
		{`\App\Jobs\NoopJob`, `App\Jobs\NoopJob`, true},        // leading backslash
		{`app\jobs\scalarsjob`, `App\Jobs\ScalarsJob`, true},   // case
		{`App/Jobs/NoopJob`, `App\Jobs\NoopJob`, true},         // slashes
		{`ScalarsJob`, `App\Jobs\ScalarsJob`, true},            // short name
		{`App\Jobs\ScalarJob`, `App\Jobs\ScalarsJob`, true},    // typo
		{`App\Jobs\NopJob`, `App\Jobs\NoopJob`, true},
		{`ScalarJob`, `App\Jobs\ScalarsJob`, true}, // short and mistyped
		{`BuildReport`, "", false},                 // ambiguous short name
		{`App\Jobs\SendInvoice`, "", false},        // nothing close
		{`App\Jobs\NoopJob`, "", false},            // already right
	}
	for _, c := range cases {
		got, ok := Suggest(c.in, present, ClassName)
		if got != c.want || ok != c.ok {
			t.Errorf("Suggest(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestSuggestWords(t *testing.T) {
	if got, ok := Suggest("databse", []string{"sync", "database", "redis"}, nil); !ok || got != "database" {
		t.Errorf("got %q %v", got, ok)
	}
	if got, ok := Suggest("x", []string{"sync", "redis"}, nil); ok {
		t.Errorf("got %q for a one-letter input", got)
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"é", "e", 1}, {"flaw", "lawn", 2}} {
		if got := Distance(c.a, c.b); got != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.d)
		}
	}
}
