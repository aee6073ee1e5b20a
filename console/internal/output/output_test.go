package output

import (
	"bytes"
	"testing"
)

func TestTableRendering(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, []string{"a", "name"}, [][]string{{"wörld", "x"}, {"bad\x1b[31m", "line\nbreak"}}); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"+-------------+-------------+\n" +
		"| a           | name        |\n" +
		"+-------------+-------------+\n" +
		"| wörld       | x           |\n" +
		"| bad\\x1b[31m | line\\nbreak |\n" +
		"+-------------+-------------+\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}
