package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

// modulePackages lists the module's packages and their imports within
// the module (not their tests'), by path in the module, as `go list`
// reports them.
func modulePackages(t *testing.T) []Package {
	t.Helper()
	mod, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	module := strings.TrimSpace(string(mod))
	// One line per package: its path, the error go list met there (a
	// pattern go list could not walk comes back as a package named by the
	// pattern), its imports.
	cmd := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}}\t{{if .Error}}{{.Error}}{{end}}\t{{join .Imports \" \"}}", module+"/...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	inModule := func(path string) (string, bool) {
		if path == module {
			return "", true
		}
		rest, ok := strings.CutPrefix(path, module+"/")
		return rest, ok
	}
	var pkgs []Package
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		importPath, rest, _ := strings.Cut(line, "\t")
		listErr, imports, _ := strings.Cut(rest, "\t")
		if listErr != "" {
			t.Fatalf("go list %s: %s", importPath, listErr)
		}
		path, _ := inModule(importPath)
		p := Package{Path: path}
		for _, imp := range strings.Fields(imports) {
			if rel, ok := inModule(imp); ok {
				p.Imports = append(p.Imports, rel)
			}
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 50 {
		t.Fatalf("go list found %d packages: %s", len(pkgs), out)
	}
	return pkgs
}

// TestImportsFollowTheLayers: no package imports outside what its group
// may (layers.go), and every package has a group.
func TestImportsFollowTheLayers(t *testing.T) {
	if v := Violations(modulePackages(t)); len(v) > 0 {
		t.Errorf("imports the layers forbid:\n\t%s\n\nthe layers:\n%s", strings.Join(v, "\n\t"), Rules())
	}
}

// TestTheRulesAreLayered: a group may import only groups that exist and
// sit in a lower layer, so the rules themselves run one way.
func TestTheRulesAreLayered(t *testing.T) {
	byName := map[string]group{}
	for _, g := range groups {
		if _, dup := byName[g.name]; dup {
			t.Errorf("group %s twice", g.name)
		}
		byName[g.name] = g
	}
	for _, g := range groups {
		for _, m := range g.may {
			name := strings.TrimPrefix(m, "store:")
			if m == "*" || m == "store:*" {
				continue
			}
			if name != m {
				name = "store"
			}
			to, ok := byName[name]
			switch {
			case !ok:
				t.Errorf("group %s may import %s, which is no group", g.name, m)
			case to.layer >= g.layer:
				t.Errorf("group %s (layer %d) may import %s (layer %d): not a lower layer", g.name, g.layer, m, to.layer)
			}
		}
	}
}

// TestViolationsAreFound: the seams the check keeps, each crossed once in
// a made-up tree, are each reported.
func TestViolationsAreFound(t *testing.T) {
	pkgs := []Package{
		{Path: "store/redis", Imports: []string{"jobqueue", "internal/redisproto", "store/database"}},
		{Path: "store/beanstalkd", Imports: []string{"internal/beanstalkproto", "internal/sqsproto"}},
		{Path: "store/sqs", Imports: []string{"jobqueue", "internal/sqldb", "worker"}},
		{Path: "internal/sqldb", Imports: []string{"laravel/appconfig", "jobqueue"}},
		{Path: "console/internal/queueconn", Imports: []string{"store/database", "store/sqs", "internal/dashboard/snapshot"}},
		{Path: "internal/fleet", Imports: []string{"jobqueue", "worker"}},
		{Path: "internal/dashboard/snapshot", Imports: []string{"internal/fleet", "worker"}},
		{Path: "internal/testutil/testredis", Imports: []string{"internal/testutil/testdsn", "store/redis"}},
		{Path: "jobqueue", Imports: []string{"laravel/payload"}},
		{Path: "worker", Imports: []string{"jobqueue", "handlers", "store/database"}},
		{Path: "laravel/payload", Imports: []string{"internal/phparray", "console"}},
		{Path: "internal/newthing", Imports: nil},
	}
	got := strings.Join(Violations(pkgs), "\n")
	for _, want := range []string{
		"store/redis (store:redis, layer 4) imports store/database (store:database, layer 4)",
		"store/sqs (store:sqs, layer 4) imports worker (engine, layer 4)",
		"store/beanstalkd (store:beanstalkd, layer 4) imports internal/sqsproto (sqs-protocol, layer 2)",
		"internal/sqldb (sqldb, layer 2) imports jobqueue (vocabulary, layer 0)",
		"console/internal/queueconn (cli-connection, layer 7) imports internal/dashboard/snapshot (dashboard, layer 5)",
		"internal/fleet (fleet, layer 4) imports worker (engine, layer 4)",
		"internal/dashboard/snapshot (dashboard, layer 5) imports worker (engine, layer 4)",
		"internal/testutil/testredis (fixtures, layer 3) imports store/redis (store:redis, layer 4)",
		"jobqueue (vocabulary, layer 0) imports laravel/payload (laravel, layer 1)",
		"worker (engine, layer 4) imports store/database (store:database, layer 4)",
		"laravel/payload (laravel, layer 1) imports console (cli, layer 8)",
		"internal/newthing is in no group",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("not reported: %s\ngot:\n%s", want, got)
		}
	}
	if n := len(Violations(pkgs)); n != 12 {
		t.Errorf("%d violations, want 12 (the allowed imports reported too?):\n%s", n, got)
	}
}
