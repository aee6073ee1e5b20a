package appconfig

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
)

// TestBeanstalkdQueueConnection: serving the app's beanstalkd queue
// connection, its config array comes back as config() returns it (host,
// port, queue, retry_after, block_for), the same through PHP and from the
// files; the database side (failed_jobs, job_batches) is queue.failed's
// database.
func TestBeanstalkdQueueConnection(t *testing.T) {
	app := copyTestApp(t)
	db := filepath.Join(app, "database", "app.sqlite")
	writeFile(t, filepath.Join(app, ".env"), "DB_CONNECTION=sqlite\nDB_DATABASE="+db+
		"\nQUEUE_CONNECTION=beanstalkd\nBEANSTALKD_QUEUE_HOST=10.0.0.7\nBEANSTALKD_QUEUE_PORT=11400\nBEANSTALKD_QUEUE=jobs\nBEANSTALKD_QUEUE_RETRY_AFTER=120\nBEANSTALKD_QUEUE_BLOCK_FOR=5\n")
	sources := map[string]string{"files": PHPOff}
	if hasPHP() {
		sources["php"] = ""
	}
	want := map[string]any{"driver": "beanstalkd", "host": "10.0.0.7", "port": 11400.0, "queue": "jobs", "retry_after": 120.0, "block_for": 5.0, "after_commit": false}
	for name, php := range sources {
		cfg, info, err := Load(context.Background(), Options{AppDir: app, PHP: php, Environ: []string{}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if info.QueueDriver != "beanstalkd" || !reflect.DeepEqual(info.BeanstalkdQueue, want) {
			t.Errorf("%s: driver %q, beanstalkd queue %#v, warnings %v", name, info.QueueDriver, info.BeanstalkdQueue, info.Warnings)
		}
		if info.RedisQueue != nil {
			t.Errorf("%s: a redis queue config for a beanstalkd connection", name)
		}
		if cfg.ConnectionName != "beanstalkd" || cfg.Driver != EngineSQLite || cfg.Database != db {
			t.Errorf("%s: database side %s", name, cfg)
		}
	}
}
