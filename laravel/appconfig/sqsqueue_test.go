package appconfig

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestSQSQueueConnection: serving the app's sqs queue connection, its
// array comes back as config() returns it (prefix, queue, suffix,
// region, endpoint, credentials), the same through PHP and from the
// files; failed jobs and batches are queue.failed's database; the AWS
// secret and token are secrets and never print.
func TestSQSQueueConnection(t *testing.T) {
	app := copyTestApp(t)
	db := filepath.Join(app, "database", "app.sqlite")
	writeFile(t, filepath.Join(app, ".env"), "DB_CONNECTION=sqlite\nDB_DATABASE="+db+"\nQUEUE_CONNECTION=sqs\n"+
		"AWS_ACCESS_KEY_ID=AKIATESTKEY\nAWS_SECRET_ACCESS_KEY=aws-s3cret-value\nSQS_PREFIX=http://127.0.0.1:4566/000000000000\n"+
		"SQS_QUEUE=emails\nSQS_SUFFIX=-prod\nSQS_ENDPOINT=http://127.0.0.1:4566\nAWS_DEFAULT_REGION=eu-west-1\n")
	sources := map[string]string{"files": PHPOff}
	if hasPHP() {
		sources["php"] = ""
	}
	var seen []map[string]any
	for name, php := range sources {
		cfg, info, err := Load(context.Background(), Options{AppDir: app, PHP: php, Environ: []string{}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		s := info.SQSQueue
		if info.QueueDriver != "sqs" || s == nil {
			t.Fatalf("%s: driver %q, sqs queue %v, warnings %v", name, info.QueueDriver, s, info.Warnings)
		}
		want := map[string]any{"driver": "sqs", "key": "AKIATESTKEY", "secret": "aws-s3cret-value", "prefix": "http://127.0.0.1:4566/000000000000",
			"queue": "emails", "suffix": "-prod", "region": "eu-west-1", "endpoint": "http://127.0.0.1:4566", "after_commit": false}
		if !reflect.DeepEqual(map[string]any(s.Queue), want) {
			t.Errorf("%s: connection array\n got %v\nwant %v", name, map[string]any(s.Queue), want)
		}
		if s.Vapor {
			t.Errorf("%s: vapor-core reported installed", name)
		}
		if cfg.ConnectionName != "sqs" || cfg.Database != db {
			t.Errorf("%s: database side %s", name, cfg)
		}
		if !slices.Contains(SecretValues(cfg, info), "aws-s3cret-value") {
			t.Errorf("%s: the AWS secret is not among the secrets", name)
		}
		js, _ := json.Marshal(info)
		printed := fmt.Sprintf("%v %+v %#v %s", info, s, s, s.Queue) + string(js)
		if strings.Contains(printed, "aws-s3cret") {
			t.Errorf("%s: the AWS secret printed", name)
		}
		seen = append(seen, s.Queue)
	}
	if len(seen) == 2 && !reflect.DeepEqual(seen[0], seen[1]) {
		t.Errorf("php and files read the sqs connection differently:\n%v\n%v", seen[0], seen[1])
	}
}
