package output

import (
	"bytes"
	"encoding/json"
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

// TestTableShowsBidiAndC1Escaped: a bidi override (U+202E makes
// "Invoice\u202egpj.exe" read "Invoiceexe.jpg"), isolates and C1 controls
// in a cell are shown as escapes, and the columns stay aligned.
func TestTableShowsBidiAndC1Escaped(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, []string{"class"}, [][]string{{"App\\Jobs\\Invoice\u202egpj.exe"}, {"q\u2066x\u2069\u0085\u009b"}}); err != nil {
		t.Fatal(err)
	}
	want := "" +
		"+-------------------------------+\n" +
		"| class                         |\n" +
		"+-------------------------------+\n" +
		"| App\\Jobs\\Invoice\\u202egpj.exe |\n" +
		"| q\\u2066x\\u2069\\u0085\\u009b    |\n" +
		"+-------------------------------+\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestJSONShowsBidiEscaped: WriteJSON writes a bidi override as \u202e,
// and the document still decodes to the same value.
func TestJSONShowsBidiEscaped(t *testing.T) {
	var b bytes.Buffer
	in := map[string]string{"queue": "mail\u202efdp.exe\u0085"}
	if err := WriteJSON(&b, in); err != nil {
		t.Fatal(err)
	}
	if b.String() != "{\n  \"queue\": \"mail\\u202efdp.exe\\u0085\"\n}\n" {
		t.Fatalf("%q", b.String())
	}
	var out map[string]string
	if err := json.Unmarshal(b.Bytes(), &out); err != nil || out["queue"] != in["queue"] {
		t.Fatalf("%v %q", err, out)
	}
}
