package redact

import (
	"bytes"
	"io"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/zeebo/xxh3"
)

// Mark is what a secret is replaced by.
const Mark = "[redacted]"

// maxDepth is the longest chain of decodings read through: JSON inside
// JSON shown in an HTML page is three.
const maxDepth = 3

// Redactor removes a set of secrets from text. The zero value and a nil
// *Redactor remove nothing. It is safe for concurrent use; Add may be
// called while others redact (a logger made before the configuration is
// read).
type Redactor struct {
	mu  sync.Mutex // serialises Add
	set atomic.Pointer[secretSet]
}

// secretSet is an immutable set of secrets and their forms, indexed by
// their first two bytes: a search reads each view once, whatever the
// number of forms.
type secretSet struct {
	secrets []string
	forms   []form
	// single are the forms of one byte; pairs has a bit set for the first
	// two bytes of every other form, byPair lists those forms.
	single []int
	pairs  [1 << 16 / 64]uint64
	byPair map[uint16][]int
	// minLen is the shortest form: a text shorter than it holds no secret
	// (no decoding makes a text longer).
	minLen int
}

type form struct {
	b     []byte
	owner int // index in secrets
}

// New returns a Redactor for secrets (empty ones are ignored).
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add adds secrets to the set.
func (r *Redactor) Add(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var all []string
	if cur := r.set.Load(); cur != nil {
		all = slices.Clone(cur.secrets)
	}
	for _, s := range secrets {
		if s != "" && !slices.Contains(all, s) {
			all = append(all, s)
		}
	}
	r.set.Store(compile(all))
}

func compile(secrets []string) *secretSet {
	set := &secretSet{secrets: secrets, byPair: map[uint16][]int{}}
	for i, s := range secrets {
		for _, f := range Forms(s) {
			k := len(set.forms)
			set.forms = append(set.forms, form{b: []byte(f), owner: i})
			if set.minLen == 0 || len(f) < set.minLen {
				set.minLen = len(f)
			}
			if len(f) == 1 {
				set.single = append(set.single, k)
				continue
			}
			key := pairKey(f[0], f[1])
			set.pairs[key>>6] |= 1 << (key & 63)
			set.byPair[key] = append(set.byPair[key], k)
		}
	}
	return set
}

func pairKey(a, b byte) uint16 { return uint16(a)<<8 | uint16(b) }

func (r *Redactor) load() *secretSet {
	if r == nil {
		return nil
	}
	s := r.set.Load()
	if s == nil || len(s.forms) == 0 {
		return nil
	}
	return s
}

// Active reports whether there is any secret to remove.
func (r *Redactor) Active() bool { return r.load() != nil }

// Secrets lists the secrets, in the order they were added.
func (r *Redactor) Secrets() []string {
	if s := r.load(); s != nil {
		return slices.Clone(s.secrets)
	}
	return nil
}

// String is s with every secret, in any escaping, replaced by Mark.
func (r *Redactor) String(s string) string {
	set := r.load()
	if set == nil || s == "" {
		return s
	}
	src := []byte(s)
	spans := set.find(src)
	if len(spans) == 0 {
		return s
	}
	return string(replace(src, spans))
}

// Bytes is b with every secret, in any escaping, replaced by Mark. It
// returns b itself when there is nothing to replace.
func (r *Redactor) Bytes(b []byte) []byte {
	set := r.load()
	if set == nil {
		return b
	}
	spans := set.find(b)
	if len(spans) == 0 {
		return b
	}
	return replace(b, spans)
}

// JSON redacts inside the strings of a JSON document (keys included) and
// leaves everything else as it is, so a valid document stays valid: what a
// replacement spans never reaches past a string's quotes.
func (r *Redactor) JSON(doc []byte) []byte {
	set := r.load()
	if set == nil {
		return doc
	}
	var spans [][2]int
	jsonStrings(doc, func(start, end int) {
		for _, sp := range set.find(doc[start:end]) {
			spans = append(spans, [2]int{sp[0] + start, sp[1] + start})
		}
	})
	if len(spans) == 0 {
		return doc
	}
	return replace(doc, spans)
}

// Contains reports whether text holds any secret, in any escaping.
func (r *Redactor) Contains(text []byte) bool {
	set := r.load()
	return set != nil && len(set.find(text)) > 0
}

// Without is a Redactor of the secrets none of whose forms occurs in text,
// in any escaping, and whose raw length is at least minLen: the dashboard
// redacts its finished pages with it, where a secret that is also a word
// of the page's own markup (a password "password") would break the page.
func (r *Redactor) Without(text []byte, minLen int) *Redactor {
	out := &Redactor{}
	set := r.load()
	if set == nil {
		return out
	}
	found := map[int]bool{}
	for _, sp := range set.matches(text) {
		found[sp.owner] = true
	}
	var keep []string
	for i, s := range set.secrets {
		if !found[i] && len(s) >= minLen {
			keep = append(keep, s)
		}
	}
	out.Add(keep...)
	return out
}

// Writer passes each Write to w redacted as a JSON document (a zerolog
// line is one Write).
func (r *Redactor) Writer(w io.Writer) io.Writer { return jsonWriter{r, w} }

type jsonWriter struct {
	r *Redactor
	w io.Writer
}

func (j jsonWriter) Write(p []byte) (int, error) {
	if _, err := j.w.Write(j.r.JSON(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// match is a secret's occurrence: source bytes [start, end).
type match struct {
	start, end, owner int
}

// find returns the source ranges to replace in src: every occurrence of
// a form in src read through each chain of decodings, widened to whole
// escapes and whole UTF-8 characters, sorted and merged.
func (s *secretSet) find(src []byte) [][2]int {
	ms := s.matches(src)
	if len(ms) == 0 {
		return nil
	}
	spans := make([][2]int, len(ms))
	for i, m := range ms {
		spans[i] = [2]int{m.start, m.end}
	}
	return widen(src, spans)
}

// matches searches src and every view of it up to maxDepth decodings
// deep; views that decode to the same bytes are searched once.
func (s *secretSet) matches(src []byte) []match {
	if len(src) < s.minLen {
		return nil
	}
	var out []match
	level := []*view{{data: src}}
	s.search(level[0], &out)
	if !hasTrigger(src) {
		return out
	}
	seen := []uint64{xxh3.Hash(src)}
	for depth := 0; depth < maxDepth && len(level) > 0; depth++ {
		var next []*view
		for _, v := range level {
			for _, d := range decoders {
				nv, ok := decode(v, d)
				if !ok {
					continue
				}
				h := xxh3.Hash(nv.data)
				if slices.Contains(seen, h) {
					continue
				}
				seen = append(seen, h)
				s.search(nv, &out)
				next = append(next, nv)
			}
		}
		level = next
	}
	return out
}

// hasTrigger reports whether any decoder could read something in src.
func hasTrigger(src []byte) bool {
	for _, d := range decoders {
		if bytes.IndexByte(src, d.trigger) >= 0 {
			return true
		}
	}
	return false
}

func (s *secretSet) search(v *view, out *[]match) {
	d := v.data
	found := func(i int, f form) {
		start, end := v.source(i, i+len(f.b))
		*out = append(*out, match{start, end, f.owner})
	}
	for _, k := range s.single {
		c := s.forms[k].b[0]
		for i := next(d, 0, c); i >= 0; i = next(d, i+1, c) {
			found(i, s.forms[k])
		}
	}
	for i := 0; i+1 < len(d); i++ {
		key := pairKey(d[i], d[i+1])
		if s.pairs[key>>6]&(1<<(key&63)) == 0 {
			continue
		}
		for _, k := range s.byPair[key] {
			if bytes.HasPrefix(d[i:], s.forms[k].b) {
				found(i, s.forms[k])
			}
		}
	}
}

// widen sorts and merges spans, extending each so it neither begins nor
// ends inside one of src's escapes or UTF-8 characters, until stable.
func widen(src []byte, spans [][2]int) [][2]int {
	toks := tokens(src)
	for {
		for i := range spans {
			spans[i][0] = tokenStart(toks, runeStart(src, spans[i][0]))
			spans[i][1] = tokenEnd(toks, runeEnd(src, spans[i][1]))
		}
		merged := merge(spans)
		if len(merged) == len(spans) {
			return merged
		}
		spans = merged
	}
}

func merge(spans [][2]int) [][2]int {
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	out := make([][2]int, 0, len(spans))
	for _, sp := range spans {
		if n := len(out); n > 0 && sp[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], sp[1])
			continue
		}
		out = append(out, sp)
	}
	return out
}

// tokenStart moves pos back to the start of the escape it is inside.
func tokenStart(toks [][2]int, pos int) int {
	i := sort.Search(len(toks), func(i int) bool { return toks[i][1] > pos })
	if i < len(toks) && toks[i][0] < pos {
		return toks[i][0]
	}
	return pos
}

// tokenEnd moves pos on to the end of the escape it is inside.
func tokenEnd(toks [][2]int, pos int) int {
	i := sort.Search(len(toks), func(i int) bool { return toks[i][1] > pos })
	if i < len(toks) && toks[i][0] < pos {
		return toks[i][1]
	}
	return pos
}

func runeStart(src []byte, pos int) int {
	for k := 0; k < utf8.UTFMax-1 && pos > 0 && pos < len(src) && !utf8.RuneStart(src[pos]); k++ {
		pos--
	}
	return pos
}

func runeEnd(src []byte, pos int) int {
	for k := 0; k < utf8.UTFMax-1 && pos < len(src) && !utf8.RuneStart(src[pos]); k++ {
		pos++
	}
	return pos
}

// replace writes src with each of the sorted, disjoint spans replaced by
// Mark.
func replace(src []byte, spans [][2]int) []byte {
	out := make([]byte, 0, len(src))
	last := 0
	for _, sp := range spans {
		out = append(out, src[last:sp[0]]...)
		out = append(out, Mark...)
		last = sp[1]
	}
	return append(out, src[last:]...)
}

// jsonStrings calls fn with the [start, end) range of the inside of each
// of doc's string literals (between the quotes). A string left open runs
// to the end.
func jsonStrings(doc []byte, fn func(start, end int)) {
	for i := 0; i < len(doc); i++ {
		if doc[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(doc) && doc[j] != '"' {
			if doc[j] == '\\' {
				j++
			}
			j++
		}
		end := min(j, len(doc))
		fn(i+1, end)
		i = end
	}
}
