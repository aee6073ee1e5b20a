package appconfig

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// appWithCredentials is the Laravel 8 test app with more connections than
// the queue's: a second database connection, one given by a url, a second
// Redis connection by url (user and password), an sqs queue connection
// with an AWS secret and session token. The secrets hold characters a
// page or JSON escapes.
func appWithCredentials(t *testing.T) (app string, secrets []string) {
	app = laravel8App(t)
	editFile(t, filepath.Join(app, "config", "database.php"), "        'mysql' => [", `        'reports' => [
            'driver' => 'mysql',
            'host' => 'reports.internal',
            'password' => env('REPORTS_DB_PASSWORD'),
        ],

        'legacy' => [
            'driver' => 'pgsql',
            'url' => env('LEGACY_DB_URL'),
        ],

        'mysql' => [`)
	editFile(t, filepath.Join(app, "config", "database.php"), "        'cache' => [", `        'sessions' => [
            'url' => env('SESSIONS_REDIS_URL'),
        ],

        'cache' => [`)
	editFile(t, filepath.Join(app, "config", "queue.php"), "        'database' => [", `        'sqs' => [
            'driver' => 'sqs',
            'key' => env('AWS_ACCESS_KEY_ID'),
            'secret' => env('AWS_SECRET_ACCESS_KEY'),
            'token' => env('AWS_SESSION_TOKEN'),
            'prefix' => 'https://sqs.eu-west-1.amazonaws.com/123456789012',
            'queue' => 'default',
            'region' => 'eu-west-1',
        ],

        'database' => [`)
	secrets = []string{"reports+/&<>'pw", "legacy p@ss/+", "redis-s3ss:ions+", "wJalrXUtnFEMI/K7MDENG/bPxRfiCY+EXAMPLEKEY", "IQoJb3JpZ2luX2Vj+/token=="}
	b, _ := os.ReadFile(filepath.Join(app, ".env"))
	env := string(b) + fmt.Sprintf("REPORTS_DB_PASSWORD=\"%s\"\nLEGACY_DB_URL=\"pgsql://legacy:%s@legacy.internal/app\"\nSESSIONS_REDIS_URL=\"redis://sessions:%s@redis.internal:6379/2\"\n"+
		"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\nAWS_SECRET_ACCESS_KEY=%s\nAWS_SESSION_TOKEN=%s\nREDIS_PASSWORD=redis-default-pw\n",
		secrets[0], "legacy%20p%40ss%2F%2B", "redis-s3ss%3Aions%2B", secrets[3], secrets[4])
	writeFile(t, filepath.Join(app, ".env"), env)
	return app, append(secrets, "pw-in-dotenv", testAppKey, "redis-default-pw")
}

// TestSecretValuesOfEveryConnection: SecretValues holds every credential
// of the app's config, through PHP and from the files: the queue
// connection's password and key, every other database connection's
// password (given directly or in a url, percent-decoded), every Redis
// connection's, the sqs connection's AWS secret and token; and nothing
// that is not a secret (the AWS key id, hosts).
func TestSecretValuesOfEveryConnection(t *testing.T) {
	for _, php := range []string{"", PHPOff} {
		t.Run("php "+orDefault(php, "on"), func(t *testing.T) {
			if php == "" {
				needPHP(t)
			}
			app, want := appWithCredentials(t)
			cfg, info, err := Load(context.Background(), Options{AppDir: app, PHP: php, Environ: []string{"PATH=" + os.Getenv("PATH")}})
			if err != nil {
				t.Fatal(err)
			}
			got := SecretValues(cfg, info)
			for _, w := range want {
				if !slices.Contains(got, w) {
					t.Errorf("SecretValues lacks %q", w)
				}
			}
			for _, g := range got {
				if strings.Contains(g, "AKIA") || strings.Contains(g, "internal") {
					t.Errorf("SecretValues holds %q, which is no secret", g)
				}
			}
			for _, printed := range []string{fmt.Sprint(info), fmt.Sprintf("%+v", info), info.Describe(), fmt.Sprint(cfg)} {
				for _, w := range want {
					if strings.Contains(printed, w) {
						t.Errorf("a printed AppInfo or Config shows %q", w)
					}
				}
			}
		})
	}
}

// TestSecretValuesWithoutApp: a .env alone gives its AWS credentials
// beside the database and Redis passwords (from DB_URL and REDIS_URL
// too).
func TestSecretValuesWithoutApp(t *testing.T) {
	dir := t.TempDir()
	env := filepath.Join(dir, ".env")
	writeFile(t, env, "DB_CONNECTION=mysql\nDB_URL=\"mysql://u:url%2Bpw@db/app\"\nREDIS_URL=\"redis://:redis%2Fpw@r:6379\"\nAPP_KEY="+testAppKey+
		"\nAWS_SECRET_ACCESS_KEY=aws/secret+key\n")
	cfg, info, err := Load(context.Background(), Options{EnvFile: env, Environ: []string{"AWS_SESSION_TOKEN=session+token"}})
	if err != nil {
		t.Fatal(err)
	}
	got := SecretValues(cfg, info)
	for _, w := range []string{"url+pw", "redis/pw", testAppKey, "aws/secret+key", "session+token"} {
		if !slices.Contains(got, w) {
			t.Errorf("SecretValues (%d values) lacks %q", len(got), w)
		}
	}
}

// TestScrubErrorInAnyEscaping: a driver error quoting the password as
// JSON or URL-encoded (a DSN) loses it too, and stays the same error for
// errors.Is.
func TestScrubErrorInAnyEscaping(t *testing.T) {
	pw := Secret(`p+/&<>'w0rd`)
	cause := fmt.Errorf(`dial "mysql://u:p%%2B%%2F%%26%%3C%%3E%%27w0rd@db" ({"password":"p+\/&<>'w0rd"}): %w`, context.DeadlineExceeded)
	err := ScrubError(cause, pw)
	if strings.Contains(err.Error(), "w0rd") || !strings.Contains(err.Error(), `"password":"[redacted]"`) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v", err)
	}
}
