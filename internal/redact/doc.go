// Package redact removes secrets (passwords, keys, tokens) from text before
// it leaves the process: the dashboard's pages and JSON, log lines, exec
// handlers' input, error messages.
//
// A secret rarely shows as written. PHP's json_encode writes "/" as "\/"
// and non-ASCII as \u00e9, Go's encoding/json writes "<" as \u003c,
// html/template writes "+" as &#43; and "'" as &#39;, URLs carry %2B; a
// page shows JSON that was escaped for HTML, a payload holds JSON inside
// JSON. Matching the secret's raw bytes misses every one of those, and
// listing the encodings cannot be complete (any character may be written
// as \uXXXX, upper or lower case, &#NN; or &#xHH;).
//
// So a Redactor does not list encodings: it reads the text through every
// chain of up to three decodings of backslash escapes (JSON, Go, JS),
// HTML character references and percent escapes, finds the secret in each
// decoded view, maps each match back to the bytes of the text it came
// from, and replaces those bytes, whole escapes at a time, by "[redacted]".
// What is left is still valid JSON, HTML or URL text: no escape is cut in
// half. The forms of one secret are its raw bytes and, for keys, the
// encodings a key travels in (Forms): an APP_KEY with and without its
// "base64:" prefix, the standard and URL base64 of its raw bytes, padded
// or not, and their hex.
//
// Two ways to apply it: String/Bytes treat the whole text alike (a page, a
// message), JSON redacts inside a JSON document's strings only, so its
// structure is never touched. Value copies a Go value with every string
// in it redacted, for data about to be rendered by a template.
package redact
