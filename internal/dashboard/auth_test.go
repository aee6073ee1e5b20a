package dashboard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadAuth(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "auth")
	if err := os.WriteFile(file, []byte("# ops\nLARAWORKER_DASHBOARD_USER=ops\nLARAWORKER_DASHBOARD_PASSWORD = from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := LoadAuth([]string{EnvAuthFile + "=" + file})
	if err != nil || a.User != "ops" || a.Password != "from-file" {
		t.Fatalf("from the file: %+v %v", a, err)
	}
	a, err = LoadAuth([]string{EnvAuthFile + "=" + file, EnvPassword + "=from-env"})
	if err != nil || a.Password != "from-env" {
		t.Fatalf("the environment should win: %+v %v", a, err)
	}
	if err := os.Chmod(file, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadAuth([]string{EnvAuthFile + "=" + file}); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a world-readable auth file: %v", err)
	}
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("hunter2-is-my-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadAuth([]string{EnvAuthFile + "=" + bad}); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("a malformed line must fail without being echoed: %v", err)
	}
	for _, env := range [][]string{
		{EnvToken + "=short"},
		{EnvUser + "=ops"},
		{EnvToken + "=0123456789abcdef0", EnvUser + "=ops", EnvPassword + "=x"},
		{EnvUser + "=a:b", EnvPassword + "=x"},
	} {
		if _, err := LoadAuth(env); err == nil {
			t.Errorf("LoadAuth(%v) accepted it", env)
		}
	}
	if a, err := LoadAuth(nil); err != nil || a.Configured() {
		t.Errorf("nothing set: %+v %v", a, err)
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8089": true, "[::1]:8089": true, "localhost:1": true,
		"0.0.0.0:8089": false, ":8089": false, "10.1.2.3:80": false, "example.com:80": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v", addr, got)
		}
	}
}
