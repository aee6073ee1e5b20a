package bench

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/urfave/cli/v2"
)

// --processes N starts N laraworker processes for each lw-* drain (and
// continuous window), each with the contender's --concurrency; PHP
// contenders keep their own count.
func TestProcessesStartsThatManyWorkers(t *testing.T) {
	set := flag.NewFlagSet("bench", flag.ContinueOnError)
	set.Int("processes", 1, "")
	if err := set.Set("processes", "3"); err != nil {
		t.Fatal(err)
	}
	b := &runner{c: cli.NewContext(cli.NewApp(), set, nil), exe: "laraworker", phpBin: "php", envFile: filepath.Join(t.TempDir(), ".env")}
	cmds := b.drainCommands(contender{name: "lw-c16", concurrency: 16})
	if len(cmds) != 3 {
		t.Fatalf("%d commands, want 3", len(cmds))
	}
	for _, cmd := range cmds {
		if !containsPair(cmd.Args, "--concurrency", "16") || !containsPair(cmd.Args, "--stop-when-empty", "") {
			t.Errorf("args %q", cmd.Args)
		}
	}
	if php := b.drainCommands(contender{name: "php-2", php: true, procs: 2}); len(php) != 2 {
		t.Errorf("php-2: %d commands, want 2", len(php))
	}
}

func containsPair(args []string, name, value string) bool {
	for i, a := range args {
		if a == name && (value == "" || i+1 < len(args) && args[i+1] == value) {
			return true
		}
	}
	return false
}
