package phpclass

import "testing"

// TestDecodeAppAsPHPWritesIt: the script's answer is read whatever shape
// json_encode gave an empty array: a class without methods, traits or
// interfaces, a cache without stores, come as [] where maps are read.
func TestDecodeAppAsPHPWritesIt(t *testing.T) {
	app, err := decodeApp([]byte(`{"version":"8.83.26","cache":{"default":"file","stores":[]},"classes":[{"class":"App\\Jobs\\Bare","traits":[],"interfaces":[],"methods":[],"properties":{},"attributes":{}}],"unmatched_routes":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	c := app.Class(`App\Jobs\Bare`)
	if c == nil || c.Methods == nil || len(c.Methods) != 0 || len(c.Traits) != 0 || len(c.Properties) != 0 || app.Cache.Stores == nil {
		t.Errorf("read as %+v (class %+v)", app, c)
	}
}
