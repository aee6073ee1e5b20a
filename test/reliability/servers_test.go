package reliability

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/laraworker/laraworker/internal/testutil/testdb"
	"github.com/laraworker/laraworker/internal/testutil/testdsn"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/store/database"
)

// dbServer is a database server of the test's own: its data directory is
// a temp dir, it listens on a port of its own on 127.0.0.1, and the test
// stops and starts it at will. The shared servers (and a developer's own
// database on the default ports) are never touched.
type dbServer struct {
	engine  string
	dir     string
	port    int
	command func() *exec.Cmd // the server process, not started
	stopSig syscall.Signal   // a clean, quick shutdown
	cmd     *exec.Cmd
	exited  chan struct{}
	// log is the server's output over all its runs.
	log syncBuffer
}

// freePort is a TCP port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// serverBinary finds a server program, or skips the test (fails it when
// every database test must run).
func serverBinary(t *testing.T, candidates ...string) string {
	t.Helper()
	for _, c := range candidates {
		if matches, _ := filepath.Glob(c); len(matches) > 0 && isProgram(matches[len(matches)-1]) {
			return matches[len(matches)-1]
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	if testdsn.Required() {
		t.Fatalf("none of %v is installed: a private server cannot be started", candidates)
	}
	t.Skipf("none of %v is installed: a private server cannot be started", candidates)
	return ""
}

// isProgram: path is a regular file someone may run (not, say, the
// /dev/null that scripts/without-servers.sh mounts over server programs).
func isProgram(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
}

func serverDir(t *testing.T, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// privateMariaDB initialises a MariaDB data directory (root without a
// password, as the shared test server has) and starts a server on it.
func privateMariaDB(t *testing.T) *dbServer {
	t.Helper()
	installDB := serverBinary(t, "mariadb-install-db", "mysql_install_db")
	mariadbd := serverBinary(t, "mariadbd", "/usr/sbin/mariadbd", "mysqld", "/usr/sbin/mysqld")
	dir := serverDir(t, "laraworker-mariadb-")
	data := filepath.Join(dir, "data")
	args := []string{"--no-defaults", "--datadir=" + data, "--auth-root-authentication-method=normal", "--skip-test-db"}
	var asRoot []string
	if os.Geteuid() == 0 {
		asRoot = []string{"--user=root"} // the temp dir is root's
	}
	if out, err := exec.Command(installDB, append(args, asRoot...)...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", installDB, err, out)
	}
	s := &dbServer{engine: appconfig.EngineMySQL, dir: dir, port: freePort(t), stopSig: syscall.SIGTERM}
	s.command = func() *exec.Cmd {
		return exec.Command(mariadbd, append([]string{"--no-defaults", "--datadir=" + data,
			"--socket=" + filepath.Join(dir, "mysqld.sock"), "--pid-file=" + filepath.Join(dir, "mysqld.pid"),
			"--port=" + strconv.Itoa(s.port), "--bind-address=127.0.0.1", "--skip-log-bin",
			"--innodb-buffer-pool-size=32M"}, asRoot...)...)
	}
	s.start(t)
	t.Cleanup(func() { s.stop(t) })
	s.exec(t, "create database if not exists test")
	return s
}

// privatePostgres initialises a PostgreSQL cluster (trust authentication)
// and starts a server on it with the given settings (name=value). As root
// it runs as the postgres user, which PostgreSQL requires.
func privatePostgres(t *testing.T, settings ...string) *dbServer {
	t.Helper()
	bindir := "/usr/lib/postgresql/*/bin/"
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		bindir = string(out[:len(out)-1]) + "/"
	}
	initdb := serverBinary(t, bindir+"initdb", "initdb")
	postgres := serverBinary(t, bindir+"postgres", "postgres")
	dir := serverDir(t, "laraworker-pg-")
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skipf("running as root without a postgres user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	data := filepath.Join(dir, "data")
	init := exec.Command(initdb, "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
	init.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	init.Dir = dir
	if out, err := init.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	s := &dbServer{engine: appconfig.EnginePgSQL, dir: dir, port: freePort(t), stopSig: syscall.SIGINT}
	s.command = func() *exec.Cmd {
		args := []string{"-D", data, "-p", strconv.Itoa(s.port), "-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"}
		for _, kv := range settings {
			args = append(args, "-c", kv)
		}
		cmd := exec.Command(postgres, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		cmd.Dir = dir
		return cmd
	}
	s.start(t)
	t.Cleanup(func() { s.stop(t) })
	s.exec(t, "create database test")
	return s
}

// start runs the server and waits until it answers.
func (s *dbServer) start(t *testing.T) {
	t.Helper()
	s.cmd = s.command()
	s.cmd.Stdout, s.cmd.Stderr = &s.log, &s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", s.engine, err)
	}
	s.exited = make(chan struct{})
	go func(cmd *exec.Cmd, exited chan struct{}) { _ = cmd.Wait(); close(exited) }(s.cmd, s.exited)
	deadline := time.Now().Add(time.Minute)
	for {
		db, err := s.open("")
		if err == nil {
			err = db.Ping()
			db.Close()
		}
		if err == nil {
			return
		}
		select {
		case <-s.exited:
			t.Fatalf("%s exited at start:\n%s", s.engine, tail(s.log.String()))
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer within a minute: %v\n%s", s.engine, err, tail(s.log.String()))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop shuts the server down cleanly (killing it if it takes more than a
// minute) and waits for it to exit.
func (s *dbServer) stop(t *testing.T) {
	t.Helper()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(s.stopSig)
	select {
	case <-s.exited:
	case <-time.After(time.Minute):
		_ = s.cmd.Process.Kill()
		<-s.exited
		t.Errorf("%s did not shut down within a minute", s.engine)
	}
	s.cmd = nil
}

// open connects as the superuser to database (the server's default when
// empty).
func (s *dbServer) open(database string) (*sql.DB, error) {
	if s.engine == appconfig.EngineMySQL {
		return sql.Open("mysql", fmt.Sprintf("root@tcp(127.0.0.1:%d)/%s", s.port, database))
	}
	if database == "" {
		database = "postgres"
	}
	return sql.Open("pgx", fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s", s.port, database))
}

func (s *dbServer) exec(t *testing.T, stmt string) {
	t.Helper()
	db, err := s.open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

// config is a queue configuration on the server's test database, with
// fresh table names.
func (s *dbServer) config(t *testing.T) appconfig.Config {
	t.Helper()
	cfg := testdb.Config(t, s.engine)
	cfg.Host, cfg.Port, cfg.Socket, cfg.Database, cfg.Password = "127.0.0.1", s.port, "", "test", ""
	cfg.Username = "root"
	if s.engine == appconfig.EnginePgSQL {
		cfg.Username = "postgres"
	}
	return cfg
}

// openQueue opens a queue on cfg with a deadline for the connection.
func openQueue(t *testing.T, cfg appconfig.Config) *database.Queue {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := database.Open(ctx, cfg, database.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}
