package appconfig

import "testing"

// TestPHPConfigEvaluation: what the fallback reader evaluates, and what it
// refuses (unknown) rather than guess.
func TestPHPConfigEvaluation(t *testing.T) {
	src := `<?php

use Illuminate\Support\Str;

/* a block comment with 'quotes' => and [brackets] */
return [
    'literal' => 90,                      // a comment
    'negative' => -5,
    'string' => "double \"quoted\" \$x",
    'env_default' => env('MISSING', 'fallback'),
    'env_set' => env('SET_VALUE', 'unused'),
    'env_quoted' => env('QUOTED'),
    'env_null' => env('NULL_WORD', 'x'),
    'env_bool' => env('TRUE_WORD'),
    'int_cast' => (int) env('NUMBER', 90),
    'int_of_text' => (int) '12abc',
    'concat' => env('APP_NAME', 'laravel').'_'.'cache',
    'slug' => Str::slug(env('APP_NAME', 'laravel'), '_').'_cache',
    'slug_fqcn' => \Illuminate\Support\Str::slug('My App').'-cache-',
    'prefix_12' => env('CACHE_PREFIX', Str::slug((string) env('APP_NAME', 'laravel')).'-cache-'),
    'closure' => (function () { return 'x'; })(),
    'helper' => storage_path('framework/cache'),
    'ternary' => env('X') ? 'a' : 'b',
    'coalesce' => env('X') ?? 'b',
    'interpolated' => "prefix_{$name}",
    'nested' => [
        'deeper' => array('key' => 'var_export style', 'list' => [1, 2, 3]),
        'after' => 'still read',
    ],
    'duplicate' => 'first',
    'duplicate' => 'second',
];
`
	root, err := parsePHPConfig(src)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"SET_VALUE": "from env", "QUOTED": `"quoted value"`, "NULL_WORD": "null", "TRUE_WORD": "(true)", "NUMBER": " 300 ", "APP_NAME": "My Shop"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	want := map[string]struct {
		s     string
		known bool
	}{
		"literal": {"90", true}, "negative": {"-5", true}, "string": {`double "quoted" $x`, true},
		"env_default": {"fallback", true}, "env_set": {"from env", true}, "env_quoted": {"quoted value", true},
		"env_null": {"", true}, "env_bool": {"1", true}, "int_cast": {"300", true}, "int_of_text": {"12", true},
		"concat": {"My Shop_cache", true}, "slug": {"my_shop_cache", true}, "slug_fqcn": {"my-app-cache-", true}, "prefix_12": {"my-shop-cache-", true},
		"closure": {"", false}, "helper": {"", false}, "ternary": {"", false}, "coalesce": {"", false}, "interpolated": {"", false},
		"duplicate": {"second", true},
	}
	for key, w := range want {
		v := root.lookup(key).eval(lookup)
		if v.known() != w.known || (w.known && v.String() != w.s) {
			t.Errorf("%s = %q (known %v), want %q (known %v)", key, v.String(), v.known(), w.s, w.known)
		}
	}
	if v := root.lookup("nested", "deeper", "key").eval(lookup); v.String() != "var_export style" {
		t.Errorf("nested.deeper.key = %q", v.String())
	}
	if v := root.lookup("nested", "after").eval(lookup); v.String() != "still read" {
		t.Errorf("nested.after = %q", v.String())
	}
	if root.lookup("nested", "missing") != nil || root.lookup("literal", "x") != nil {
		t.Error("lookups past the tree must be nil")
	}
	for _, bad := range []string{"<?php echo 'x';", "<?php return new Foo;", "<?php return 'x"} {
		if _, err := parsePHPConfig(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
