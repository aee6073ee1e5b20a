package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/laraworker/laraworker/internal/phpjson"
)

// encoding is one way text reaches a page, a JSON document or a log line,
// with the standard library's (or PHP's documented) way back.
type encoding struct {
	name   string
	encode func(r *rand.Rand, s string) string
	decode func(s string) (string, error)
}

func jsonDecode(s string) (string, error) {
	var out string
	err := json.Unmarshal([]byte(s), &out)
	return out, err
}

func goJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func phpJSON(flags phpjson.Flags) func(*rand.Rand, string) string {
	return func(_ *rand.Rand, s string) string {
		out, err := phpjson.String(s, flags)
		if err != nil {
			panic(err)
		}
		return out
	}
}

// phpJSONHex is json_encode with JSON_HEX_TAG|JSON_HEX_AMP|JSON_HEX_APOS|
// JSON_HEX_QUOT: <, >, &, ' and " as uppercase \u003C...
func phpJSONHex(_ *rand.Rand, s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '<', '>', '&', '\'', '"':
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			one, _ := phpjson.String(string(r), 0)
			b.WriteString(one[1 : len(one)-1])
		}
	}
	b.WriteByte('"')
	return b.String()
}

// jsonEachChar writes every character as \uXXXX (surrogate pairs beyond
// the BMP), hex digits in a random case: what any JSON writer may do.
func jsonEachChar(r *rand.Rand, s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		for _, u := range utf16.Encode([]rune{c}) {
			h := fmt.Sprintf(`\u%04x`, u)
			if r.IntN(2) == 0 {
				h = `\u` + strings.ToUpper(h[2:])
			}
			b.WriteString(h)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// jsonMixed escapes each character or not at random, where JSON allows.
func jsonMixed(r *rand.Rand, s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\' || c < 0x20 || r.IntN(3) == 0:
			one := jsonEachChar(r, string(c))
			b.WriteString(one[1 : len(one)-1])
		case c == '/' && r.IntN(2) == 0:
			b.WriteString(`\/`)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

var (
	textTemplate = template.Must(template.New("").Parse(`<td>{{.}}</td>`))
	attrTemplate = template.Must(template.New("").Parse(`<p title="{{.}}">`))
	hrefTemplate = template.Must(template.New("").Parse(`<a href="/failed?q={{.}}">`))
)

func execute(t *template.Template, s string) string {
	var b strings.Builder
	if err := t.Execute(&b, s); err != nil {
		panic(err)
	}
	return b.String()
}

func htmlText(_ *rand.Rand, s string) string { return execute(textTemplate, s) }
func htmlAttr(_ *rand.Rand, s string) string { return execute(attrTemplate, s) }
func htmlHref(_ *rand.Rand, s string) string { return execute(hrefTemplate, s) }

func between(s, open, close string) (string, error) {
	a, rest, ok := strings.Cut(s, open)
	b, _, ok2 := strings.Cut(rest, close)
	if !ok || !ok2 || a != "" {
		return "", fmt.Errorf("not %s...%s: %q", open, close, s)
	}
	return b, nil
}

func unText(s string) (string, error) {
	in, err := between(s, "<td>", "</td>")
	return html.UnescapeString(in), err
}

func unAttr(s string) (string, error) {
	in, err := between(s, `<p title="`, `">`)
	return html.UnescapeString(in), err
}

func unHref(s string) (string, error) {
	in, err := between(s, `<a href="/failed?q=`, `">`)
	if err != nil {
		return "", err
	}
	return url.QueryUnescape(html.UnescapeString(in))
}

// htmlspecialchars is PHP's htmlspecialchars($s, ENT_QUOTES).
func htmlspecialchars(_ *rand.Rand, s string) string {
	return strings.NewReplacer("&", "&amp;", `"`, "&quot;", "'", "&#039;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// htmlEachChar writes every character as a numeric reference, decimal or
// hex at random.
func htmlEachChar(r *rand.Rand, s string) string {
	var b strings.Builder
	for _, c := range s {
		if r.IntN(2) == 0 {
			fmt.Fprintf(&b, "&#%d;", c)
		} else {
			fmt.Fprintf(&b, "&#x%X;", c)
		}
	}
	return b.String()
}

func then(a, b func(*rand.Rand, string) string) func(*rand.Rand, string) string {
	return func(r *rand.Rand, s string) string { return b(r, a(r, s)) }
}

func undo(a, b func(string) (string, error)) func(string) (string, error) {
	return func(s string) (string, error) {
		x, err := b(s)
		if err != nil {
			return "", err
		}
		return a(x)
	}
}

func plain(f func(string) string) func(*rand.Rand, string) string {
	return func(_ *rand.Rand, s string) string { return f(s) }
}

func never(f func(string) string) func(string) (string, error) {
	return func(s string) (string, error) { return f(s), nil }
}

var encodings = []encoding{
	{"raw", plain(func(s string) string { return s }), never(func(s string) string { return s })},
	{"PHP json_encode", phpJSON(0), jsonDecode},
	{"PHP json_encode JSON_UNESCAPED_UNICODE", phpJSON(phpjson.UnescapedUnicode), jsonDecode},
	{"PHP json_encode JSON_HEX_*", phpJSONHex, jsonDecode},
	{"Go encoding/json", plain(goJSON), jsonDecode},
	{"JSON, every character \\uXXXX", jsonEachChar, jsonDecode},
	{"JSON, escapes at random", jsonMixed, jsonDecode},
	{"html/template text", htmlText, unText},
	{"html/template attribute", htmlAttr, unAttr},
	{"html/template URL query", htmlHref, unHref},
	{"html.EscapeString", plain(html.EscapeString), never(html.UnescapeString)},
	{"htmlspecialchars ENT_QUOTES", htmlspecialchars, never(html.UnescapeString)},
	{"HTML, every character a reference", htmlEachChar, never(html.UnescapeString)},
	{"Go JSON in html/template", then(plain(goJSON), htmlText), undo(jsonDecode, unText)},
	{"PHP JSON in html/template", then(phpJSON(0), htmlText), undo(jsonDecode, unText)},
	{"PHP JSON in PHP JSON", then(phpJSON(0), phpJSON(0)), undo(jsonDecode, jsonDecode)},
	{"PHP JSON in PHP JSON in html/template", then(then(phpJSON(0), phpJSON(phpjson.UnescapedUnicode)), htmlText), undo(undo(jsonDecode, jsonDecode), unText)},
	{"html.EscapeString in Go JSON", then(plain(html.EscapeString), plain(goJSON)), undo(never(html.UnescapeString), jsonDecode)},
	{"url.QueryEscape", plain(url.QueryEscape), url.QueryUnescape},
	{"url.PathEscape", plain(url.PathEscape), url.PathUnescape},
	{"url.QueryEscape in PHP JSON", then(plain(url.QueryEscape), phpJSON(0)), undo(url.QueryUnescape, jsonDecode)},
	{"strconv.Quote", plain(strconv.Quote), strconv.Unquote},
	{"strconv.QuoteToASCII", plain(strconv.QuoteToASCII), strconv.Unquote},
}

const printable = " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"

var nonASCII = []rune("éñß€✗日本😀\u00a0Ωж")

// randomSecret is 8 to 40 characters of printable ASCII, with some
// non-ASCII characters in one secret of three.
func randomSecret(r *rand.Rand) string {
	n := 8 + r.IntN(33)
	withUnicode := r.IntN(3) == 0
	var b strings.Builder
	for range n {
		if withUnicode && r.IntN(4) == 0 {
			b.WriteRune(nonASCII[r.IntN(len(nonASCII))])
		} else {
			b.WriteByte(printable[r.IntN(len(printable))])
		}
	}
	return b.String()
}

// randomKey is an APP_KEY: "base64:" and 32 random bytes.
func randomKey(r *rand.Rand) (key string, raw []byte) {
	raw = make([]byte, 32)
	for i := range raw {
		raw[i] = byte(r.IntN(256))
	}
	return "base64:" + base64.StdEncoding.EncodeToString(raw), raw
}

// Texts around a secret: none of them ends or starts with a character
// that could join an escape across the border.
var (
	prefixes = []string{"", "error: ", "SQLSTATE[HY000] [1045] Access denied (using password: ", "x "}
	suffixes = []string{"", " in /app/Jobs/X.php:12", "\nStack trace:\n#0 {main}", " é ✗"}
)

// TestRandomSecretsInEveryEncoding: a random secret (printable ASCII, some
// non-ASCII), inside a text, written in each encoding a page, a JSON
// document, a URL or a log line gives it; the redacted text decodes (with
// the standard library, not this package) to the text with the secret
// replaced by Mark, and nothing else changed.
func TestRandomSecretsInEveryEncoding(t *testing.T) {
	r := rand.New(rand.NewPCG(1, uint64(38)))
	for i := range 400 {
		secret := randomSecret(r)
		key, raw := randomKey(r)
		red := New(randomSecret(r), secret, key)
		keyForms := []string{key, strings.TrimPrefix(key, "base64:"), base64.RawStdEncoding.EncodeToString(raw),
			base64.URLEncoding.EncodeToString(raw), base64.RawURLEncoding.EncodeToString(raw), hex.EncodeToString(raw)}
		for _, s := range append([]string{secret}, keyForms[i%len(keyForms)]) {
			for _, enc := range encodings {
				pre, suf := prefixes[r.IntN(len(prefixes))], suffixes[r.IntN(len(suffixes))]
				checkRedacted(t, red, enc, r, pre, s, suf)
			}
		}
	}
}

func checkRedacted(t *testing.T, red *Redactor, enc encoding, r *rand.Rand, pre, secret, suf string) {
	t.Helper()
	in := enc.encode(r, pre+secret+suf)
	out := red.String(in)
	got, err := enc.decode(out)
	if err != nil {
		t.Fatalf("%s: the redacted text no longer decodes: %v\nsecret %q\nin  %q\nout %q", enc.name, err, secret, in, out)
	}
	if want := pre + Mark + suf; got != want {
		t.Fatalf("%s: redacted text decodes to %q, want %q\nsecret %q\nin  %q\nout %q", enc.name, got, want, secret, in, out)
	}
}

// TestJSONKeepsTheDocument: JSON redacts a secret inside keys and values
// of a document in any escaping and leaves a valid document whose other
// values are unchanged.
func TestJSONKeepsTheDocument(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 38))
	jsonEncodings := encodings[1:7]
	for range 300 {
		secret := randomSecret(r)
		red := New(secret)
		enc := jsonEncodings[r.IntN(len(jsonEncodings))]
		doc := `{"n":1,"list":[true,null,` + enc.encode(r, "pw "+secret) + `],` + enc.encode(r, secret) + `:"x","after":"\u00e9\/"}`
		out := red.JSON([]byte(doc))
		var v struct {
			N     int
			List  []any
			After string
		}
		var keys map[string]any
		if err := json.Unmarshal(out, &v); err != nil || json.Unmarshal(out, &keys) != nil {
			t.Fatalf("%s: not JSON after redaction: %v\n%s", enc.name, err, out)
		}
		if v.N != 1 || len(v.List) != 3 || v.List[2] != "pw "+Mark || v.After != "é/" || keys[Mark] != "x" {
			t.Fatalf("%s: %s", enc.name, out)
		}
	}
}

// TestNoSecretNoChange: text that holds no secret comes back as it was,
// whatever escapes it holds.
func TestNoSecretNoChange(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 38))
	for range 300 {
		secret := randomSecret(r)
		red := New(secret)
		other := randomSecret(r)
		if strings.Contains(other, secret) {
			continue
		}
		for _, enc := range encodings {
			in := enc.encode(r, "a "+other+" b")
			if out := red.String(in); out != in {
				t.Fatalf("%s: %q changed to %q (secret %q)", enc.name, in, out, secret)
			}
		}
	}
	var nilRed *Redactor
	if nilRed.String("x") != "x" || New().Active() || !bytes.Equal(New().JSON([]byte(`"x"`)), []byte(`"x"`)) {
		t.Fatal("an empty redactor changed text")
	}
}

// TestNoEscapeCutInHalf: a secret that looks like the inside of an escape
// (u0041, #43;) takes the whole escape with it.
func TestNoEscapeCutInHalf(t *testing.T) {
	red := New("u0041bcdefgh", "#43;abcdefg", "2Fabcdefghi")
	for in, want := range map[string]string{
		`{"a":"x\u0041bcdefgh"}`: `{"a":"x` + Mark + `"}`,
		`a&#43;abcdefg`:          `a` + Mark,
		`q=%2Fabcdefghi`:         `q=` + Mark,
	} {
		if got := red.String(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}

// TestFormsOfAKey: an APP_KEY stands for itself, its base64 without the
// prefix, its raw bytes and their other base64 and hex spellings.
func TestFormsOfAKey(t *testing.T) {
	raw := []byte("0123456789abcdef0123456789ab>>?~")
	key := "base64:" + base64.StdEncoding.EncodeToString(raw)
	forms := Forms(key)
	for _, want := range []string{key, key[7:], string(raw), base64.RawStdEncoding.EncodeToString(raw), base64.URLEncoding.EncodeToString(raw),
		base64.RawURLEncoding.EncodeToString(raw), hex.EncodeToString(raw)} {
		found := false
		for _, f := range forms {
			found = found || f == want
		}
		if !found {
			t.Errorf("Forms(key) lacks %q", want)
		}
	}
	if f := Forms("short pw"); len(f) != 2 || f[1] != "short+pw" {
		t.Errorf("Forms of a short password: %q", f)
	}
}

// TestWithout: a secret that occurs in the vocabulary, or is shorter than
// the minimum, is left out.
func TestWithout(t *testing.T) {
	red := New("password", "a-long-secret+/", "short")
	vocab := []byte(`<input type="password" name="token">`)
	net := red.Without(vocab, 8)
	if got := net.Secrets(); len(got) != 1 || got[0] != "a-long-secret+/" {
		t.Fatalf("Without kept %q", got)
	}
	if out := net.String(`<input type="password"> a-long-secret&#43;/`); out != `<input type="password"> `+Mark {
		t.Fatalf("%s", out)
	}
}

// TestWriterRedactsEachLine: a log line written through Writer is valid
// JSON without the secret.
func TestWriterRedactsEachLine(t *testing.T) {
	red := New()
	var buf bytes.Buffer
	w := red.Writer(&buf)
	red.Add(`p+/&<>'x"y`) // added after the writer was made, as a logger is
	line, _ := json.Marshal(map[string]string{"error": `dial: password p+/&<>'x"y refused`})
	if n, err := w.Write(append(line, '\n')); err != nil || n != len(line)+1 {
		t.Fatal(n, err)
	}
	var v map[string]string
	if err := json.Unmarshal(buf.Bytes(), &v); err != nil || v["error"] != "dial: password "+Mark+" refused" {
		t.Fatalf("%v %s", err, buf.Bytes())
	}
}

// FuzzRedact: whatever the text and the secret, the redacted text holds
// no raw form of the secret (unless the secret is part of Mark), and a
// JSON document stays valid.
func FuzzRedact(f *testing.F) {
	f.Add("p+/&<>'x", `{"a":"p+\/&<>'x"}`)
	f.Add("secret12", `x&#43;secret12\u0073`)
	f.Fuzz(func(t *testing.T, secret, text string) {
		if len(secret) < 4 || strings.Contains(Mark, secret) {
			return
		}
		red := New(secret)
		out := red.String(text)
		if strings.Contains(out, secret) {
			t.Fatalf("%q still holds %q: %q", text, secret, out)
		}
		if json.Valid([]byte(text)) {
			if doc := red.JSON([]byte(text)); !json.Valid(doc) {
				t.Fatalf("%q: JSON made it invalid: %q", text, doc)
			}
		}
	})
}

// BenchmarkPage: a 1 MB page of escaped JSON (a large payload shown on
// /jobs/{id}), five secrets, none of them in it.
func BenchmarkPage(b *testing.B) {
	r := rand.New(rand.NewPCG(4, 38))
	var doc strings.Builder
	for doc.Len() < 1<<20 {
		doc.WriteString(goJSON("App\\Jobs\\X " + randomSecret(r) + " é/"))
		doc.WriteString(",\n")
	}
	page := []byte(htmlText(r, doc.String()))
	red := New(randomSecret(r), randomSecret(r), randomSecret(r), "abcdefghijklmnop", "base64:"+base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")))
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		red.Bytes(page)
	}
}

// BenchmarkLogLine: a JSON log line of a job, as zerolog writes it.
func BenchmarkLogLine(b *testing.B) {
	red := New("p+/&<>'x-secret", "base64:"+base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")))
	line := []byte(`{"level":"info","uuid":"0d5c0e5e-8f0e-4a43-9d3b-4d1f0b9b3f4a","class":"App\\Jobs\\ProcessPodcast","queue":"default","attempt":1,"runtime_ms":12.5,"time":"2026-12-06T10:00:00Z","message":"job done"}` + "\n")
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		red.JSON(line)
	}
}
