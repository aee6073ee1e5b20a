package redact

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// keyPrefix marks a base64 key (Laravel's APP_KEY).
const keyPrefix = "base64:"

// minDerived is the shortest secret (in raw bytes) whose base64 and hex
// encodings are matched too: a key is 16 or 32 bytes; the encodings of a
// short password are short strings that would match innocent text.
const minDerived = 16

// Forms are the byte strings that stand for secret: the secret itself (and
// with its spaces written "+", as a query string has them); for
// a "base64:" key, the key without its prefix and its raw bytes; and for
// raw bytes of at least 16 bytes (a key, a long token), their standard and
// URL-safe base64, padded and not, and their hex. Each form is matched in
// every escaping the Redactor reads through.
func Forms(secret string) []string {
	if secret == "" {
		return nil
	}
	forms := []string{secret}
	if strings.Contains(secret, " ") {
		// A query string writes a space as "+" (url.QueryEscape).
		forms = append(forms, strings.ReplaceAll(secret, " ", "+"))
	}
	raw := []byte(secret)
	if body, ok := strings.CutPrefix(secret, keyPrefix); ok && body != "" {
		forms = append(forms, body)
		if b, err := base64.StdEncoding.DecodeString(body); err == nil && len(b) > 0 {
			raw = b
			forms = append(forms, string(b))
		}
	}
	if len(raw) >= minDerived {
		forms = append(forms,
			base64.StdEncoding.EncodeToString(raw), base64.RawStdEncoding.EncodeToString(raw),
			base64.URLEncoding.EncodeToString(raw), base64.RawURLEncoding.EncodeToString(raw),
			hex.EncodeToString(raw), strings.ToUpper(hex.EncodeToString(raw)))
	}
	return dedupe(forms)
}

func dedupe(in []string) []string {
	seen := map[string]bool{}
	out := in[:0]
	for _, s := range in {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
