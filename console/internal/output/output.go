package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/laraworker/laraworker/internal/visible"
	"github.com/urfave/cli/v2"
)

// WriteTable draws rows the way Symfony's default table style does
// (artisan's $this->table()):
//
//	+----+-------+
//	| ID | Queue |
//	+----+-------+
//	| 1  | high  |
//	+----+-------+
//
// Widths count runes, close to mb_strwidth for the text a queue holds.
func WriteTable(w io.Writer, headers []string, rows [][]string) error {
	cells := make([][]string, 0, len(rows)+1)
	cells = append(cells, cleanRow(headers))
	for _, r := range rows {
		cells = append(cells, cleanRow(r))
	}
	widths := make([]int, len(headers))
	for _, r := range cells {
		for i := range widths {
			if i < len(r) {
				widths[i] = max(widths[i], utf8.RuneCountInString(r[i]))
			}
		}
	}
	var b strings.Builder
	border := tableBorder(widths)
	b.WriteString(border)
	for i, r := range cells {
		writeTableRow(&b, widths, r)
		if i == 0 {
			b.WriteString(border)
		}
	}
	if len(rows) > 0 {
		b.WriteString(border)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func tableBorder(widths []int) string {
	var b strings.Builder
	b.WriteByte('+')
	for _, w := range widths {
		b.WriteString(strings.Repeat("-", w+2))
		b.WriteByte('+')
	}
	b.WriteByte('\n')
	return b.String()
}

func writeTableRow(b *strings.Builder, widths []int, row []string) {
	b.WriteByte('|')
	for i, w := range widths {
		cell := ""
		if i < len(row) {
			cell = row[i]
		}
		b.WriteByte(' ')
		b.WriteString(cell)
		b.WriteString(strings.Repeat(" ", w-utf8.RuneCountInString(cell)+1))
		b.WriteByte('|')
	}
	b.WriteByte('\n')
}

func cleanRow(r []string) []string {
	out := make([]string, len(r))
	for i, c := range r {
		out[i] = Printable(c)
	}
	return out
}

// Printable keeps table cells on one line and stops text taken from the
// database (class names come from payloads anyone could write) from
// sending terminal escape sequences: control characters and invalid UTF-8
// are shown escaped.
func Printable(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && invalidAt(s, i):
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !unicode.IsPrint(r) && r != ' ':
			q := fmt.Sprintf("%+q", string(r))
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func invalidAt(s string, i int) bool {
	_, size := utf8.DecodeRuneInString(s[i:])
	return size == 1
}

// WriteJSON prints v indented, with a final newline. HTML escaping is off:
// class names hold backslashes and the output is not meant for a browser.
// C1 and bidirectional control characters in strings are written as \u
// escapes (the same value for a program; visible on a terminal).
func WriteJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(visible.JSON(b.Bytes()))
	return err
}

// Say prints one line of a command's human output.
func Say(c *cli.Context, format string, args ...any) {
	fmt.Fprintf(c.App.Writer, format+"\n", args...)
}

// Warn prints one line on stderr (artisan's $this->error for one item of
// several).
func Warn(c *cli.Context, format string, args ...any) {
	w := c.App.ErrWriter
	if w == nil {
		w = io.Discard
	}
	fmt.Fprintf(w, format+"\n", args...)
}

// OneLine joins the lines of s with spaces: an error printed on one line.
func OneLine(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r", ""), "\n", " ")
}
