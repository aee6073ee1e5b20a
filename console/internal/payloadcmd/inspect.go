package payloadcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/laraworker/laraworker/console/internal/cmdline"
	"github.com/laraworker/laraworker/console/internal/output"
	"github.com/laraworker/laraworker/console/internal/queueconn"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
	"github.com/urfave/cli/v2"
)

// InspectCommand is `inspect`: a payload, a serialized value or a queued
// job decoded to JSON.
func InspectCommand() *cli.Command {
	return &cli.Command{
		Name:      "inspect",
		Usage:     "decode a job payload (JSON) or a bare serialized PHP value and print it as JSON; or a job of the queue by --id / --uuid",
		ArgsUsage: "[FILE|-]",
		Description: `Without --id or --uuid it decodes FILE (or stdin). --id N reads the job N of
the jobs table (reserved or not), --failed --id N the failed job N; --uuid U
looks in failed_jobs (its uuid index), then in the jobs table (which has no
uuid column: the payloads of every row are read). The document is the one
inspect FILE prints, with "row": the row's other columns.`,
		Flags: append(cmdline.ConnectionFlags(),
			&cli.BoolFlag{Name: "compact", Usage: "print the JSON on one line"},
			&cli.StringFlag{Name: "class-file", EnvVars: []string{"LARAWORKER_CLASS_FILE"}, Usage: "`FILE` declaring the class's properties (as for push): those absent from the command are listed under \"absent\""},
			&cli.Int64Flag{Name: "id", Usage: "inspect the job `N` of the jobs table (with --failed: of failed_jobs)"},
			&cli.StringFlag{Name: "uuid", Usage: "inspect the job whose payload's uuid is `UUID` (failed_jobs, then jobs)"},
			&cli.BoolFlag{Name: "failed", Usage: "--id and --uuid read failed_jobs only"},
		),
		Action: runInspect,
	}
}

func runInspect(c *cli.Context) error {
	fromQueue := c.IsSet("id") || c.IsSet("uuid")
	switch {
	case c.NArg() > 1:
		return cli.Exit("inspect: takes one FILE (or - for stdin)", 2)
	case fromQueue && c.NArg() > 0:
		return cmdline.UsageError("inspect: give FILE or --id/--uuid, not both")
	case c.IsSet("id") && c.IsSet("uuid"):
		return cmdline.UsageError("inspect: give --id or --uuid, not both")
	case c.Bool("failed") && !fromQueue:
		return cmdline.UsageError("inspect: --failed goes with --id or --uuid")
	case c.IsSet("id") && c.Int64("id") <= 0:
		return cmdline.UsageError("inspect: --id %d: want a job id (1 or more)", c.Int64("id"))
	}
	var (
		input []byte
		row   map[string]any
		err   error
		enc   *payload.Encrypter
	)
	if fromQueue {
		input, row, enc, err = inspectFromQueue(c)
		if err != nil {
			return err
		}
	} else if input, err = readInput(c.Args().First(), c.App.Reader); err != nil {
		return cli.Exit("inspect: "+err.Error(), 1)
	}
	doc, err := inspect(input, enc)
	if !fromQueue && (errors.Is(err, payload.ErrEncrypted) || c.IsSet("key-file")) {
		// Only an encrypted command needs the app's key (--key-file, the
		// .env, APP_KEY): a file is decoded without any app, database or
		// .env at hand.
		if enc, err = queueconn.EncrypterFromFlags(c); err != nil {
			return cli.Exit("inspect: "+err.Error(), 1)
		}
		doc, err = inspect(input, enc)
	}
	if err != nil {
		return cli.Exit("inspect: "+output.OneLine(err.Error()), 1)
	}
	if err := markAbsent(doc, input, enc, c.String("class-file")); err != nil {
		return cli.Exit("inspect: "+output.OneLine(err.Error()), 1)
	}
	if m, ok := doc.(map[string]any); ok && row != nil {
		m["row"] = row
	}
	out, err := formatJSON(doc, c.Bool("compact"))
	if err != nil {
		return cli.Exit("inspect: "+err.Error(), 1)
	}
	_, err = c.App.Writer.Write(append(out, '\n'))
	return err
}

// inspectFromQueue reads the job --id or --uuid names from the queue's
// tables: its payload, its row's other columns, and the app's key.
func inspectFromQueue(c *cli.Context) ([]byte, map[string]any, *payload.Encrypter, error) {
	s, err := queueconn.OpenSession(c)
	if err != nil {
		return nil, nil, nil, err
	}
	defer s.Close()
	enc, err := queueconn.Encrypter(s.Cfg)
	if err != nil {
		return nil, nil, nil, s.Fail(err)
	}
	id, uuid, failedOnly := c.Int64("id"), c.String("uuid"), c.Bool("failed")
	if failedOnly || uuid != "" {
		key := uuid
		if key == "" {
			key = strconv.FormatInt(id, 10)
		}
		f, err := s.Q.FindFailed(c.Context, key)
		switch {
		case err == nil && (uuid == "" || f.UUID == uuid):
			return f.Payload, failedRowDoc(f, s.Cfg.FailedTable), enc, nil
		case err != nil && !errors.Is(err, jobqueue.ErrFailedJobNotFound):
			return nil, nil, nil, s.Fail(err)
		case failedOnly:
			return nil, nil, nil, s.Fail(fmt.Errorf("no failed job %s in [%s] (retried, forgotten or pruned)", key, s.Cfg.FailedTable))
		}
	}
	var j jobqueue.JobRow
	if uuid != "" {
		j, err = s.Q.FindJobByUUID(c.Context, uuid)
	} else {
		j, err = s.Q.FindJob(c.Context, id)
	}
	if errors.Is(err, jobqueue.ErrNotSupported) {
		return nil, nil, nil, s.Fail(s.Conn.Lacks("lookup of single jobs"))
	}
	if errors.Is(err, jobqueue.ErrJobNotFound) {
		if uuid != "" {
			return nil, nil, nil, s.Fail(fmt.Errorf("no job with uuid %s in [%s] nor in [%s]", uuid, s.Cfg.FailedTable, s.Cfg.JobsTable))
		}
		return nil, nil, nil, s.Fail(fmt.Errorf("no job %d in [%s] (done, failed or released meanwhile; for a failed job's id add --failed)", id, s.Cfg.JobsTable))
	}
	if err != nil {
		return nil, nil, nil, s.Fail(err)
	}
	return j.Payload, jobRowDoc(j, s.Cfg.JobsTable), enc, nil
}

// jobRowDoc is a jobs row's columns beside the payload.
func jobRowDoc(j jobqueue.JobRow, table string) map[string]any {
	var reserved any
	if j.ReservedAt != nil {
		reserved = *j.ReservedAt
	}
	return map[string]any{"table": table, "id": j.ID, "queue": j.Queue, "attempts": j.Attempts,
		"reserved_at": reserved, "available_at": j.AvailableAt, "created_at": j.CreatedAt}
}

// failedRowDoc is a failed_jobs row's columns beside the payload.
func failedRowDoc(f jobqueue.FailedJob, table string) map[string]any {
	return map[string]any{"table": table, "id": f.ID, "uuid": f.UUID, "connection": f.Connection, "queue": f.Queue,
		"failed_at": f.FailedAt, "exception": f.Exception}
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
	// For people: "&", "<" and ">" as they are, not \u0026, \u003c, \u003e.
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	out := bytes.TrimSuffix(plain.Bytes(), []byte{'\n'})
	if compact {
		return out, nil
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, out, "", "  "); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
