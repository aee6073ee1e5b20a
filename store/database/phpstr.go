package database

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/laraworker/laraworker/internal/phparray"
	"github.com/laraworker/laraworker/internal/phpjson"
)

// decodePHPList reads a JSON list of strings as PHP's json_decode(..., true)
// would see it; a JSON object (what json_encode makes of a non-list array,
// {} the empty one) yields its values in order. Empty or null input is an
// empty list.
func decodePHPList(raw []byte) ([]string, error) {
	s := bytes.TrimSpace(raw)
	if len(s) == 0 || string(s) == "null" {
		return nil, nil
	}
	var list []string
	if err := phparray.Unmarshal(s, &list); err != nil {
		return nil, fmt.Errorf("dbqueue: failed_job_ids is not a JSON list of strings: %w", err)
	}
	return list, nil
}

// utf8OrQuestionMarks is mb_convert_encoding($s, 'UTF-8') on PHP 8.2, which
// Laravel 9.2+ applies to the exception text of a failed job: each maximal
// invalid subsequence (Unicode's "maximal subpart", e.g. a truncated
// 3-byte sequence) becomes one '?'.
func utf8OrQuestionMarks(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || size > 1 {
			b.WriteString(s[i : i+size])
			i += size
			continue
		}
		b.WriteByte('?')
		i += maximalSubpart(s[i:])
	}
	return b.String()
}

// maximalSubpart returns the length (>= 1) of the longest prefix of s that
// starts a well-formed UTF-8 sequence without completing it.
func maximalSubpart(s string) int {
	c := s[0]
	var need int
	lo, hi := byte(0x80), byte(0xBF)
	switch {
	case c >= 0xC2 && c <= 0xDF:
		need = 1
	case c == 0xE0:
		need, lo = 2, 0xA0
	case c >= 0xE1 && c <= 0xEC, c == 0xEE, c == 0xEF:
		need = 2
	case c == 0xED:
		need, hi = 2, 0x9F
	case c == 0xF0:
		need, lo = 3, 0x90
	case c >= 0xF1 && c <= 0xF3:
		need = 3
	case c == 0xF4:
		need, hi = 3, 0x8F
	default:
		return 1
	}
	n := 1
	for k := 0; k < need && n < len(s); k++ {
		b := s[n]
		if k == 0 {
			if b < lo || b > hi {
				return n
			}
		} else if b < 0x80 || b > 0xBF {
			return n
		}
		n++
	}
	return n
}

// payloadMeta extracts the top-level uuid and displayName from a payload.
func payloadMeta(payload []byte) (uuid, displayName string, err error) {
	var m struct {
		UUID        *string `json:"uuid"`
		DisplayName *string `json:"displayName"`
	}
	if err := json.Unmarshal(payload, &m); err != nil {
		return "", "", fmt.Errorf("dbqueue: payload is not valid JSON: %w", err)
	}
	if m.UUID != nil {
		uuid = *m.UUID
	}
	if m.DisplayName != nil {
		displayName = *m.DisplayName
	}
	return uuid, displayName, nil
}

// likeEscaper escapes LIKE metacharacters for `escape '!'` (a Replacer
// is safe for concurrent use; building one costs more than using it).
var likeEscaper = strings.NewReplacer("!", "!!", "%", "!%", "_", "!_")

// likeEscapeString escapes LIKE metacharacters for `escape '!'`.
func likeEscapeString(s string) string { return likeEscaper.Replace(s) }

// classPatterns holds displayNamePatterns' results by name: every claim
// filters on the same few classes (those with a handler, those stopped),
// so their patterns are rendered once, not per claim. Valid names only
// (an invalid one is an error every time); at most maxClassPatterns of
// them, then rendered as they come.
var classPatterns struct {
	sync.Map
	n atomic.Int32
}

const maxClassPatterns = 4096

// cachedDisplayNamePatterns is displayNamePatterns through classPatterns.
func cachedDisplayNamePatterns(name string) ([]string, error) {
	if pats, ok := classPatterns.Load(name); ok {
		return pats.([]string), nil
	}
	pats, err := displayNamePatterns(name)
	if err == nil && classPatterns.n.Add(1) <= maxClassPatterns {
		classPatterns.Store(name, pats)
	}
	return pats, err
}

// displayNamePatterns returns the LIKE patterns matching payloads whose
// displayName is exactly name: the closing quote stops App\Jobs\Foo from
// matching App\Jobs\FooBar. Two encodings are covered: Laravel's dispatch
// (JSON_UNESCAPED_UNICODE) and queue:retry's re-encode (\u escapes); they
// differ only for non-ASCII names.
//
// A name that is not valid UTF-8 is an error: json_encode refuses it, so no
// payload can carry it.
func displayNamePatterns(name string) ([]string, error) {
	raw, err := phpjson.String(name, phpjson.UnescapedUnicode)
	if err != nil {
		return nil, fmt.Errorf("dbqueue: display name %q: %w", name, err)
	}
	esc, err := phpjson.String(name, 0)
	if err != nil {
		return nil, fmt.Errorf("dbqueue: display name %q: %w", name, err)
	}
	pats := []string{"%" + likeEscapeString(`"displayName":`+raw) + "%"}
	if esc != raw {
		pats = append(pats, "%"+likeEscapeString(`"displayName":`+esc)+"%")
	}
	return pats, nil
}
