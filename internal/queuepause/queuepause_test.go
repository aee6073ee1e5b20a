package queuepause

import "testing"

// TestTruthy: a cache value pauses as PHP's (bool) of what the store's
// get() returns: unserialize() of the stored bytes, false when PHP cannot
// unserialize them (the redis store gives numbers back as their text,
// which rediscache serializes as a string).
func TestTruthy(t *testing.T) {
	for in, want := range map[string]bool{
		"b:1;": true, "b:0;": false, "N;": false, "i:0;": false, "i:1;": true, "d:0;": false, "d:0.5;": true,
		`s:0:"";`: false, `s:1:"0";`: false, `s:1:"1";`: true, `s:4:"true";`: true, "a:0:{}": false,
		"a:1:{i:0;i:0;}": true, `O:8:"stdClass":0:{}`: true, "garbage": false, "": false,
	} {
		if got := Truthy([]byte(in)); got != want {
			t.Errorf("Truthy(%q) = %v, want %v", in, got, want)
		}
	}
}
