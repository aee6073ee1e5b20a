package phprun

import (
	"bytes"
	_ "embed"
)

// bootAppPHP defines laraworker_artisan_boot($appDir): the code that boots
// a Laravel app as its artisan does (see the file's header).
//
//go:embed php/boot-app.php
var bootAppPHP []byte

// WithAppBoot returns script (a PHP file starting with "<?php") with
// laraworker_artisan_boot() defined before it, for the scripts that boot
// the app: `$app = eval(laraworker_artisan_boot($appDir));` at their top
// level runs artisan's own statements before bootstrap/app.php (its
// autoloader) and returns the application.
func WithAppBoot(script []byte) []byte {
	body, ok := bytes.CutPrefix(script, []byte("<?php"))
	if !ok {
		panic("phprun: WithAppBoot wants a script that starts with <?php")
	}
	out := make([]byte, 0, len(bootAppPHP)+len(body)+1)
	out = append(append(out, bootAppPHP...), '\n')
	return append(out, body...)
}
