package phprun

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWithAppBootRunsArtisansPreamble: the booted app is what artisan's
// own statements and its require of bootstrap/app.php give, in the global
// scope, with __DIR__ as artisan's folder; what artisan does afterwards
// (handling the command line) does not run.
func TestWithAppBootRunsArtisansPreamble(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		t.Skip("php is not installed")
	}
	app := t.TempDir()
	files := map[string]string{
		"artisan": "#!/usr/bin/env php\n<?php\n\nuse Shop\\Boot;\n\ndefine('LARAVEL_START', microtime(true));\n" +
			"$loader = (require __DIR__.'/lib/loader.php');\n$loader('shop');\n\n" +
			"/** @var object $app */\n$app = require_once __DIR__.'/bootstrap/app.php';\n\n" +
			"echo 'artisan handled the command line';\nexit(3);\n",
		"lib/loader.php":    "<?php\nreturn function (string $name) { $GLOBALS['booted_by'] = $name; };\n",
		"bootstrap/app.php": "<?php\nreturn (object) ['by' => $GLOBALS['booted_by'], 'loader' => isset($loader), 'dir' => __DIR__];\n",
	}
	for name, content := range files {
		path := filepath.Join(app, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := []byte("<?php\n$app = eval(laraworker_artisan_boot($argv[1]));\necho json_encode([$app->by, $app->loader, $app->dir, defined('LARAVEL_START')]);\n")
	out, err := Run(context.Background(), Script{PHP: php, Source: WithAppBoot(script), Args: []string{app}, Dir: app})
	if err != nil {
		t.Fatal(err)
	}
	want := `["shop",true,` + strings.ReplaceAll(`"`+filepath.Join(app, "bootstrap")+`"`, "/", `\/`) + `,true]`
	if string(out) != want {
		t.Errorf("got %s\nwant %s", out, want)
	}
}
