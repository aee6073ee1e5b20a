package console

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/laraworker/laraworker/payload"
	"github.com/laraworker/laraworker/phpserialize"
	"github.com/urfave/cli/v2"
)

func inspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "decode a job payload (JSON) or a bare serialized PHP value and print it as JSON",
		ArgsUsage: "[FILE|-]",
		Flags: append(keyFlags(),
			&cli.BoolFlag{Name: "compact", Usage: "print the JSON on one line"},
			&cli.StringFlag{Name: "class-file", EnvVars: []string{"LARAWORKER_CLASS_FILE"}, Usage: "`FILE` declaring the class's properties (as for push): those absent from the command are listed under \"absent\""},
		),
		Action: runInspect,
	}
}

func runInspect(c *cli.Context) error {
	if c.NArg() > 1 {
		return cli.Exit("inspect: takes one FILE (or - for stdin)", 2)
	}
	input, err := readInput(c.Args().First(), c.App.Reader)
	if err != nil {
		return cli.Exit("inspect: "+err.Error(), 1)
	}
	enc, err := encrypterFromFlags(c)
	if err != nil {
		return cli.Exit("inspect: "+err.Error(), 1)
	}
	doc, err := inspect(input, enc)
	if err != nil {
		return cli.Exit("inspect: "+oneLine(err.Error()), 1)
	}
	if err := markAbsent(doc, input, enc, c.String("class-file")); err != nil {
		return cli.Exit("inspect: "+oneLine(err.Error()), 1)
	}
	out, err := formatJSON(doc, c.Bool("compact"))
	if err != nil {
		return cli.Exit("inspect: "+err.Error(), 1)
	}
	_, err = c.App.Writer.Write(append(out, '\n'))
	return err
}

func readInput(name string, stdin io.Reader) ([]byte, error) {
	if name == "" || name == "-" {
		if stdin == nil {
			stdin = os.Stdin
		}
		return io.ReadAll(io.LimitReader(stdin, maxInspectBytes+1))
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxInspectBytes+1))
	if err == nil && len(b) > maxInspectBytes {
		err = fmt.Errorf("%s is larger than %d MB", name, maxInspectBytes>>20)
	}
	return b, err
}

const maxInspectBytes = 256 << 20

// inspect auto-detects a JSON payload (starts with '{') or a bare
// serialized value, and builds the document to print.
func inspect(input []byte, enc *payload.Encrypter) (any, error) {
	trimmed := bytes.TrimSpace(input)
	if len(trimmed) == 0 {
		return nil, errors.New("empty input")
	}
	if trimmed[0] == '{' {
		return inspectPayload(trimmed, enc)
	}
	v, err := phpserialize.Unserialize(bytes.TrimRight(input, "\r\n"))
	if err != nil {
		return nil, err
	}
	tree, err := payload.ReadableJSON(v)
	if err != nil {
		return nil, err
	}
	return map[string]any{"kind": "serialized", "value": json.RawMessage(tree)}, nil
}

func inspectPayload(raw []byte, enc *payload.Encrypter) (any, error) {
	p, err := payload.Parse(raw)
	if err != nil {
		return nil, err
	}
	doc := payloadDocument(p)
	if p.Data.Command == "" {
		return doc, nil
	}
	cmd, err := payload.DecodeCommand(p, enc)
	if err != nil {
		return nil, err
	}
	tree, err := payload.ReadableJSON(cmd.Object)
	if err != nil {
		return nil, err
	}
	doc["encrypted"] = cmd.Encrypted
	doc["command"] = json.RawMessage(tree)
	return doc, nil
}

// payloadDocument shows the payload's keys as they are stored: in their
// order, with their JSON values, whichever Laravel version wrote them
// (nothing is added that the payload lacks). data.command is shown
// decoded under "command" instead.
func payloadDocument(p *payload.Payload) map[string]any {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range p.Fields() {
		if i > 0 {
			b.WriteByte(',')
		}
		writeKey(&b, f.Key)
		if f.Key == "data" && p.Data.Fields() != nil {
			writeData(&b, p.Data.Fields())
			continue
		}
		b.Write(f.Raw)
	}
	b.WriteByte('}')
	return map[string]any{"kind": "payload", "payload": json.RawMessage(b.Bytes())}
}

// writeData writes data's keys without the command string, which the
// document shows decoded.
func writeData(b *bytes.Buffer, fields []payload.Field) {
	b.WriteByte('{')
	first := true
	for _, f := range fields {
		if f.Key == "command" {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		writeKey(b, f.Key)
		b.Write(f.Raw)
	}
	b.WriteByte('}')
}

func writeKey(b *bytes.Buffer, key string) {
	k, _ := json.Marshal(key)
	b.Write(k)
	b.WriteByte(':')
}

// markAbsent lists, for a payload whose class the class file declares,
// the declared properties the serialized command leaves out (Laravel 9.4+
// omits every property still holding its declared default): a handler
// sees them at the default only if its registration declares it.
func markAbsent(doc any, input []byte, enc *payload.Encrypter, classFile string) error {
	m, ok := doc.(map[string]any)
	if classFile == "" || !ok || m["command"] == nil {
		return nil
	}
	p, err := payload.Parse(bytes.TrimSpace(input))
	if err != nil {
		return err
	}
	cmd, err := payload.DecodeCommand(p, enc)
	if err != nil {
		return err
	}
	decl, err := loadClassDecl(classFile, cmd.Class())
	if err != nil {
		return fmt.Errorf("--class-file %s: %w", classFile, err)
	}
	if decl == nil {
		return fmt.Errorf("--class-file %s has no entry for %s", classFile, cmd.Class())
	}
	absent := []string{}
	for _, name := range decl.propertyNames() {
		if _, err := cmd.Object.Prop(name); errors.Is(err, phpserialize.ErrNoProperty) {
			absent = append(absent, name)
		}
	}
	m["absent"] = absent
	return nil
}

func formatJSON(doc any, compact bool) ([]byte, error) {
	out, err := json.Marshal(doc)
	if err != nil || compact {
		return out, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, out, "", "  "); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func oneLine(s string) string {
	return string(bytes.ReplaceAll(bytes.ReplaceAll([]byte(s), []byte("\r"), nil), []byte("\n"), []byte(" ")))
}
