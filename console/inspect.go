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

func payloadDocument(p *payload.Payload) map[string]any {
	fields := map[string]any{
		"uuid": p.UUID, "displayName": p.DisplayName, "job": p.Job,
		"maxTries": p.MaxTries, "maxExceptions": p.MaxExceptions, "failOnTimeout": p.FailOnTimeout,
		"backoff": p.Backoff, "timeout": p.Timeout, "retryUntil": p.RetryUntil,
		"deleteWhenMissingModels": p.DeleteWhenMissingModels, "createdAt": p.CreatedAt, "delay": p.Delay,
	}
	if p.Data.CommandName != "" || p.Data.Command != "" {
		fields["data"] = map[string]any{"commandName": p.Data.CommandName, "batchId": p.Data.BatchID}
	} else {
		fields["data"] = p.Data.Raw
	}
	if len(p.Extra) > 0 {
		fields["extra"] = p.Extra
	}
	return map[string]any{"kind": "payload", "payload": fields}
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
