package reliability

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/jobqueue"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// secretForms lists how a secret could show up in output: a password as
// is; a key as "base64:...", bare base64, hex and its raw bytes.
func secretForms(password string, keys ...string) []string {
	forms := []string{password}
	for _, k := range keys {
		b64 := strings.TrimPrefix(k, "base64:")
		raw, _ := base64.StdEncoding.DecodeString(b64)
		forms = append(forms, k, b64, hex.EncodeToString(raw), string(raw), base64.RawURLEncoding.EncodeToString(raw))
	}
	return forms
}

func assertNoSecrets(t *testing.T, what, output string, forms []string) {
	t.Helper()
	for _, f := range forms {
		if f != "" && strings.Contains(output, f) {
			t.Errorf("%s contains a secret (%d bytes):\n%s", what, len(f), tail(output))
		}
	}
}

// dbUser creates a MariaDB user with a random password that may use the
// test database, and drops it after the test.
func dbUser(t *testing.T, prefix string) (user, password string) {
	t.Helper()
	testdsn.Need(t, "MariaDB", "tcp", "127.0.0.1:3306")
	root, err := sql.Open("mysql", "root@tcp(127.0.0.1:3306)/test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	b := make([]byte, 12)
	rand.Read(b)
	user = prefix + hex.EncodeToString(b[:4])
	password = "pw-" + hex.EncodeToString(b[4:])
	for _, stmt := range []string{
		"create user '" + user + "'@'%' identified by '" + password + "'",
		"grant all on test.* to '" + user + "'@'%'",
	} {
		if _, err := root.Exec(stmt); err != nil {
			if os.Getenv("LARAWORKER_TEST_REQUIRE_DB") == "" {
				t.Skipf("MariaDB: %v", err)
			}
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		killUserConnections(t, root, user)
		if _, err := root.Exec("drop user '" + user + "'@'%'"); err != nil {
			t.Errorf("drop user: %v", err)
		}
	})
	return user, password
}

// runCLI runs a laraworker or relworker command to completion and returns
// its stdout and stderr together.
func runCLI(t *testing.T, env []string, bin string, args ...string) string {
	t.Helper()
	p := startProc(t, filepath.Base(bin), env, bin, args...)
	_ = p.wait(t, time.Minute)
	return p.out.String()
}

// TestSecretsNeverInOutput runs commands that fail on purpose and greps
// everything they print, and every failed_jobs row they write, for the
// database password and the APP_KEY in every encoding.
func TestSecretsNeverInOutput(t *testing.T) {
	cfg := testdb.Config(t, appconfig.EngineMySQL) // skips first where MariaDB is not there: no build
	needBins(t)
	q := testdb.Open(t, cfg)
	user, password := dbUser(t, "lw_sec_")
	key, enc := randomKey(t)
	otherKey, _ := randomKey(t)
	wrongPassword := "wrong-" + password
	forms := secretForms(password, key, otherKey)
	forms = append(forms, wrongPassword)
	cfg.Username, cfg.Password = user, appconfig.Secret(password)

	t.Run("wrong DB password", func(t *testing.T) {
		envFile := testEnvFile(t, cfg, key)
		env := append(cleanEnv(), "LARAWORKER_DB_PASSWORD="+wrongPassword)
		for _, args := range [][]string{
			{"work", "--env", envFile, "--route", noopClass + "=noop", "--stop-when-empty"},
			{"size", "--env", envFile},
			{"failed", "--env", envFile},
		} {
			out := runCLI(t, env, bins.laraworker, args...)
			if !strings.Contains(out, "Access denied") && !strings.Contains(strings.ToLower(out), "denied") {
				t.Errorf("%v: the failure does not say access was denied:\n%s", args[0], out)
			}
			assertNoSecrets(t, args[0]+" output", out, forms)
		}
		url := fmt.Sprintf("DB_URL=mysql://%s:%s@%s:%d/%s", user, wrongPassword, cfg.Host, cfg.Port, cfg.Database)
		out := runCLI(t, append(cleanEnv(), url), bins.laraworker, "size", "--env", testEnvFile(t, appconfig.Config{Driver: "mysql"}, key))
		assertNoSecrets(t, "size with DB_URL output", out, forms)
	})

	t.Run("malformed APP_KEY", func(t *testing.T) {
		bad := "base64:" + base64.StdEncoding.EncodeToString([]byte(password + "-31-bytes-long-key"))[:40]
		envFile := testEnvFile(t, cfg, bad)
		out := runCLI(t, cleanEnv(), bins.laraworker, "work", "--env", envFile, "--route", noopClass+"=noop", "--stop-when-empty")
		assertNoSecrets(t, "work output", out, append(forms, bad, strings.TrimPrefix(bad, "base64:")))
		if !strings.Contains(strings.ToLower(out), "key") {
			t.Errorf("the failure does not mention the key:\n%s", out)
		}
	})

	t.Run("wrong APP_KEY and undecryptable payloads", func(t *testing.T) {
		serialized, _ := phpserialize.Serialize(phpserialize.Object(noopClass))
		var items []jobqueue.PushItem
		for i := range 6 {
			cmd, err := payload.EncryptCommand(enc, serialized)
			if err != nil {
				t.Fatal(err)
			}
			switch i % 3 {
			case 1:
				cmd = tamperMAC(t, cmd)
			case 2:
				cmd = base64.StdEncoding.EncodeToString([]byte(`{"iv":"` + key + `","value":"x","mac":"y"}`))
			}
			items = append(items, jobqueue.PushItem{Payload: withCommand(t, cmd)})
		}
		if err := q.PushMany(context.Background(), items); err != nil {
			t.Fatal(err)
		}
		envFile := testEnvFile(t, cfg, otherKey)
		out := runCLI(t, cleanEnv(), bins.laraworker, "work", "--env", envFile, "--failed-table", cfg.FailedTable, "--batches-table", cfg.BatchesTable,
			"--route", noopClass+"=noop", "--stop-when-empty", "--sleep", "0.1")
		// The payloads PHP could not read either fail; those the worker's
		// key (the wrong one) cannot decrypt go back untouched, for PHP.
		f := failedRows(t, q.DB(), cfg.FailedTable)
		if len(f) != 2 {
			t.Fatalf("%d failed_jobs rows, want the 2 invalid payloads; output:\n%s", len(f), tail(out))
		}
		if n := count(t, q.DB(), "select count(*) from "+cfg.JobsTable+" where attempts = 0 and reserved_at is null"); n != 4 {
			t.Fatalf("%d jobs given back untouched, want the 4 the key cannot decrypt; output:\n%s", n, tail(out))
		}
		if !strings.Contains(out, "configuration problem") || !strings.Contains(out, "APP_KEY") {
			t.Errorf("the key problem is not reported:\n%s", tail(out))
		}
		assertNoSecrets(t, "work output", out, forms[:len(forms)-0])
		for _, r := range f {
			assertNoSecrets(t, "failed_jobs.exception", r.Exception, append(secretForms(password, otherKey), wrongPassword))
		}
		// `inspect` of an undecryptable payload with the wrong key.
		in := filepath.Join(t.TempDir(), "payload.json")
		os.WriteFile(in, items[0].Payload, 0o600)
		out = runCLI(t, cleanEnv(), bins.laraworker, "inspect", "--env", envFile, in)
		assertNoSecrets(t, "inspect output", out, append(secretForms(password, otherKey), wrongPassword))
		if _, err := q.DB().Exec("delete from " + cfg.JobsTable); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("panicking handler with the config in scope", func(t *testing.T) {
		if _, err := q.DB().Exec("delete from " + cfg.FailedTable); err != nil {
			t.Fatal(err)
		}
		raw, _ := payload.BuildObjectPayload(phpserialize.Object(`LaraWorker\Reliability\Panic`), payload.BuildOptions{})
		if _, err := q.Push(context.Background(), jobqueue.PushItem{Payload: raw}); err != nil {
			t.Fatal(err)
		}
		envFile := testEnvFile(t, cfg, key, "APP_PREVIOUS_KEYS="+otherKey)
		env := append(cleanEnv(), "LARAWORKER_ENV="+envFile)
		out := runCLI(t, env, bins.relworker, "work", "--failed-table", cfg.FailedTable, "--batches-table", cfg.BatchesTable, "--stop-when-empty", "--sleep", "0.1")
		f := failedRows(t, q.DB(), cfg.FailedTable)
		if len(f) != 1 || !strings.Contains(f[0].Exception, "handler gave up with config") {
			t.Fatalf("the panicking job did not fail with its panic: %d rows; output:\n%s", len(f), tail(out))
		}
		if !strings.Contains(f[0].Exception, user) {
			t.Errorf("the panic text lost the non-secret config (user name): %.300s", f[0].Exception)
		}
		assertNoSecrets(t, "relworker output", out, forms)
		assertNoSecrets(t, "failed_jobs.exception", f[0].Exception, forms)
	})
}

// TestExecHandlerTakesNoJobDataInArgv runs jobs full of shell
// metacharacters (in properties and in the queue name) through an exec
// handler: nothing they spell may run, the command's argv must be exactly
// the configured one, and the data must arrive intact on stdin and in the
// LARAWORKER_JOB_* variables.
func TestExecHandlerTakesNoJobDataInArgv(t *testing.T) {
	cfg := testdb.Config(t, appconfig.EngineMySQL) // skips first where MariaDB is not there: no build
	needBins(t)
	q := testdb.Open(t, cfg)
	dir := t.TempDir()
	canary := filepath.Join(dir, "canary")
	if err := os.Mkdir(canary, 0o755); err != nil {
		t.Fatal(err)
	}
	marker := func(n int) string { return filepath.Join(dir, fmt.Sprintf("pwned%d", n)) }
	hostile := []string{
		"$(touch " + marker(1) + ")",
		"`touch " + marker(2) + "`",
		"; touch " + marker(3) + "; rm -rf " + canary,
		"| touch " + marker(4),
		"&& touch " + marker(5) + " #",
		"'\"; touch " + marker(6) + "; echo '",
		"\n touch " + marker(7) + "\n",
	}
	queue := "q$(touch " + marker(8) + ");`touch " + marker(9) + "`"
	class := `App\Jobs\Shell`
	var props []phpserialize.Entry
	for i, s := range hostile {
		props = append(props, phpserialize.Public(fmt.Sprintf("p%d", i), phpserialize.String(s)))
	}
	raw, _ := payload.BuildObjectPayload(phpserialize.Object(class, props...), payload.BuildOptions{})
	p, _ := payload.Parse(raw)
	if _, err := q.Push(context.Background(), jobqueue.PushItem{Queue: queue, Payload: raw}); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(dir, "calls.jsonl")
	route := fmt.Sprintf(`%s=exec:%s %s fixed "two words"`, class, bins.argvdump, out)
	envFile := testEnvFile(t, cfg, "")
	log := runCLI(t, cleanEnv(), bins.laraworker, "work", "--env", envFile, "--failed-table", cfg.FailedTable, "--batches-table", cfg.BatchesTable,
		"--queue", queue, "--route", route, "--stop-when-empty", "--sleep", "0.1")

	for i := 1; i <= 9; i++ {
		if _, err := os.Stat(marker(i)); err == nil {
			t.Errorf("job data was executed: %s exists", marker(i))
		}
	}
	if _, err := os.Stat(canary); err != nil {
		t.Errorf("job data was executed: the canary directory is gone")
	}
	calls := readCalls(t, out)
	if len(calls) != 1 {
		t.Fatalf("the exec handler ran %d times, want 1; worker output:\n%s", len(calls), tail(log))
	}
	c := calls[0]
	want := []string{bins.argvdump, out, "fixed", "two words"}
	if strings.Join(c.Argv, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("argv = %q, want exactly %q", c.Argv, want)
	}
	if c.Env["LARAWORKER_JOB_QUEUE"] != queue || c.Env["LARAWORKER_JOB_UUID"] != p.UUID || c.Env["LARAWORKER_JOB_CLASS"] != class {
		t.Errorf("LARAWORKER_JOB_* = %v", c.Env)
	}
	var in handlers.ExecInput
	if err := json.Unmarshal([]byte(c.Stdin), &in); err != nil {
		t.Fatalf("stdin is not the job JSON: %v", err)
	}
	var cmd map[string]any
	if err := json.Unmarshal(in.Command, &cmd); err != nil {
		t.Fatalf("command on stdin: %v (%s)", err, in.Command)
	}
	got := fmt.Sprint(cmd)
	for _, s := range hostile {
		if !strings.Contains(got, s) && !strings.Contains(string(in.Command), mustJSON(s)) {
			t.Errorf("stdin does not carry %q intact: %s", s, in.Command)
		}
	}
	if n := count(t, q.DB(), "select count(*) from "+cfg.JobsTable); n != 0 {
		t.Errorf("the job was not deleted after exit 0 (%d left)", n)
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

type call struct {
	Argv  []string          `json:"argv"`
	Env   map[string]string `json:"env"`
	Stdin string            `json:"stdin"`
}

func readCalls(t *testing.T, path string) []call {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []call
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var c call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// TestSQLCatalogueHasNoLiteralValues reads store/database/SQL.md, the catalogue
// of every statement the queue runs (kept equal to the code by
// database.TestSQLDoc), and checks that no statement carries a value: once
// identifiers and placeholders are removed, only the fixed constants of
// the queries themselves (limit N, then 1 else 0, + 1, escape '!', the
// claim index's JSON path and widths) may remain.
func TestSQLCatalogueHasNoLiteralValues(t *testing.T) {
	doc, err := os.ReadFile("../../store/database/SQL.md")
	if err != nil {
		t.Fatal(err)
	}
	idents := regexp.MustCompile("`[^`]*`|\"[^\"]*\"")
	placeholders := regexp.MustCompile(`\$[0-9]+|\?`)
	// The claim index's fixed parts: the JSON path of the displayName,
	// the class column's width, PostgreSQL's floor on available_at; the
	// start-up route check's payload prefix (1,024 characters, none past
	// 1 MiB on SQLite).
	constants := regexp.MustCompile(`limit [0-9]+\b|then 1 else 0|\+ 1\b|escape '!'|'\$\.displayName'|->> 'displayName'|varchar\(255\)|, 255\)|>= -9223372036854775807\b|, 1, 1024\)|<= 1048576\b`)
	statements, checked := 0, 0
	inSQL, name := false, ""
	for _, line := range strings.Split(string(doc), "\n") {
		switch {
		case strings.HasPrefix(line, "**"):
			name = line
		case line == "```sql":
			inSQL = true
			statements++
		case line == "```":
			inSQL = false
		case inSQL && !strings.Contains(name, "create tables"):
			checked++
			rest := constants.ReplaceAllString(placeholders.ReplaceAllString(idents.ReplaceAllString(line, ""), ""), "")
			if strings.ContainsAny(rest, "'0123456789") {
				t.Errorf("%s: a literal value in %q (left after removing identifiers, placeholders and constants: %q)", name, line, rest)
			}
		}
	}
	if statements < 60 || checked < 60 {
		t.Fatalf("read only %d statements (%d lines) from SQL.md", statements, checked)
	}
	t.Logf("%d statements in SQL.md, %d lines checked: no literal values", statements, checked)
}

// TestSQLCallSitesUseTheCatalogue parses the SQL packages (sqldb,
// dbcache, store/database and its statement catalogue store/database/internal/sqlstmt)
// and checks that every query passed to database/sql comes from the
// statement catalogue (q.st.X(...)), the dialect, or a quoted identifier:
// never a string built from values.
func TestSQLCallSitesUseTheCatalogue(t *testing.T) {
	fset := token.NewFileSet()
	var files []string
	for _, dir := range []string{"internal/sqldb", "internal/cache/dbcache", "store/database", "store/database/internal/sqlstmt"} {
		more, err := filepath.Glob("../../" + dir + "/*.go")
		if err != nil || len(more) == 0 {
			t.Fatalf("no Go files in %s (%v): a package moved?", dir, err)
		}
		files = append(files, more...)
	}
	consts := map[string]bool{} // package-level string constants
	parsed := map[string]*ast.File{}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed[file] = f
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, spec := range g.Specs {
					for _, n := range spec.(*ast.ValueSpec).Names {
						consts[n.Name] = true
					}
				}
			}
		}
	}
	methods := map[string]bool{"ExecContext": true, "QueryContext": true, "QueryRowContext": true, "Exec": true, "Query": true, "QueryRow": true, "PrepareContext": true, "Prepare": true}
	calls := 0
	for _, f := range parsed {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !methods[sel.Sel.Name] || len(call.Args) == 0 {
				return true
			}
			arg := call.Args[0]
			// pgx's own methods take the context first without the suffix.
			ctxFirst := false
			if id, ok := arg.(*ast.Ident); ok && id.Name == "ctx" {
				ctxFirst = true
			}
			if strings.HasSuffix(sel.Sel.Name, "Context") || ctxFirst {
				if len(call.Args) < 2 {
					return true
				}
				arg = call.Args[1]
			}
			calls++
			if !safeQuery(arg, consts) {
				t.Errorf("%s: %s's query is not from the statement catalogue: %s", fset.Position(call.Pos()), sel.Sel.Name, exprString(fset, arg))
			}
			return true
		})
	}
	if calls < 20 {
		t.Fatalf("found only %d database calls in the SQL packages", calls)
	}
	t.Logf("%d database calls in the SQL packages: every query from the catalogue, the dialect or a quoted identifier", calls)
}

// safeQuery accepts q.st.X(...), d.X()/q.d.X(), a plain variable holding
// one (query, s), a constant string, "..." + Quote(ident), x.sql(constant
// template), and DDL helpers called with nothing but the dialect and table
// or index names.
func safeQuery(e ast.Expr, consts map[string]bool) bool {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Kind == token.STRING
	case *ast.Ident:
		return consts[e.Name] || e.Name == "query" || e.Name == "s" || e.Name == "stmt"
	case *ast.BinaryExpr:
		return e.Op == token.ADD && safeQuery(e.X, consts) && safeQuery(e.Y, consts)
	case *ast.CallExpr:
		if _, ok := e.Fun.(*ast.Ident); ok {
			for _, a := range e.Args {
				if !identifierArg(a) {
					return false
				}
			}
			return true
		}
		sel, ok := e.Fun.(*ast.SelectorExpr)
		if !ok {
			return false
		}
		if sel.Sel.Name == "Quote" {
			return true
		}
		// c.sql("... %[1]s ... ?"): a constant template whose slots take
		// quoted identifiers (the cache store's statements).
		if sel.Sel.Name == "sql" && len(e.Args) == 1 {
			return safeQuery(e.Args[0], consts)
		}
		switch x := sel.X.(type) {
		case *ast.SelectorExpr: // q.st.X(), q.hookSt.X(), q.d.X()
			return x.Sel.Name == "st" || x.Sel.Name == "hookSt" || x.Sel.Name == "d"
		case *ast.Ident: // d.ServerVersionQuery()
			return x.Name == "d"
		}
	}
	return false
}

// identifierArg is an argument naming SQL identifiers, not carrying
// values: the dialect (d, q.d), a table of the tables set (q.st.T.Jobs,
// q.cfg.JobsTable) or a method returning a name (q.ClaimIndexName()).
func identifierArg(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name == "d"
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.SelectorExpr); ok && (x.Sel.Name == "T" || x.Sel.Name == "cfg") {
			return true
		}
		return e.Sel.Name == "d"
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		return ok && strings.HasSuffix(sel.Sel.Name, "Name") && len(e.Args) == 0
	}
	return false
}

func exprString(fset *token.FileSet, e ast.Expr) string {
	return fmt.Sprintf("%T at %s", e, fset.Position(e.Pos()))
}
