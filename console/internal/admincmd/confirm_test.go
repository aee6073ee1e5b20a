package admincmd

import (
	"os"
	"testing"

	"github.com/laraworker/laraworker/laravel/appconfig"
)

// TestAppEnvAsLaravelReadsIt: the environment wins over the .env,
// LARAWORKER_APP_ENV over both; unset is production.
func TestAppEnvAsLaravelReadsIt(t *testing.T) {
	dir := t.TempDir()
	envFile := dir + "/.env"
	if err := os.WriteFile(envFile, []byte("APP_NAME=shop\nAPP_ENV=staging\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	info := appconfig.AppInfo{EnvFile: envFile}
	lookup := func(vars map[string]string) func(string) (string, bool) {
		return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	}
	for _, c := range []struct {
		info appconfig.AppInfo
		vars map[string]string
		want string
	}{
		{info, nil, "staging"},
		{info, map[string]string{"APP_ENV": "production"}, "production"},
		{info, map[string]string{"APP_ENV": "production", "LARAWORKER_APP_ENV": "local"}, "local"},
		{appconfig.AppInfo{}, nil, "production"},
	} {
		if got, from := appEnv(c.info, lookup(c.vars)); got != c.want {
			t.Errorf("%+v, %v: %q (%s), want %q", c.info, c.vars, got, from, c.want)
		}
	}
}
