package archtest

import (
	"fmt"
	"sort"
	"strings"
)

// A group is packages with one place in the layers. A package may import
// the packages of its own group and of the groups its group may import,
// each of a lower layer: an import never runs from a lower layer to a
// higher one, nor sideways between groups of one layer (a store and the
// engine, two stores). What a package's tests import is not checked:
// tests may import what they exercise.
type group struct {
	name  string
	layer int
	// paths are the packages, by path in the module: a path stands for
	// itself and everything below it; the longest match wins.
	paths []string
	// may are the groups its packages may import besides their own;
	// "store:*" is every store, "*" every group of a lower layer.
	may []string
	why string
}

// groups are the layers, lowest first.
var groups = []group{
	{name: "leaf", layer: 0, why: "small helpers that import no package of the module",
		paths: []string{"internal/clock", "internal/didyoumean", "internal/gctune", "internal/httpguard", "internal/otelsetup",
			"internal/phparray", "internal/phphash", "internal/phprun", "internal/procmem",
			"internal/redact", "internal/servercpu", "internal/visible"}},
	{name: "vocabulary", layer: 0, paths: []string{"jobqueue"},
		why: "the job's vocabulary and the store contract: it imports nothing of the module, everything else may depend on it"},
	{name: "laravel", layer: 1, paths: []string{"laravel", "internal/phpjson"}, may: []string{"leaf"},
		why: "what Laravel writes and reads (payloads, serialization, PHP's JSON, config, the bridge's protocol)"},
	{name: "handlers", layer: 2, paths: []string{"handlers"}, may: []string{"leaf", "laravel"},
		why: "the handler API: what a job's handler sees"},
	{name: "sqldb", layer: 2, paths: []string{"internal/sqldb"}, may: []string{"leaf", "laravel"},
		why: "the lowest SQL layer (connections, dialects, retried transactions): no vocabulary"},
	{name: "laravel-rules", layer: 2, paths: []string{"internal/queuepause"}, may: []string{"leaf", "laravel", "vocabulary"},
		why: "Laravel's rules on the shared cache (queue:pause), read by the engine and the dashboard"},
	{name: "redis-protocol", layer: 2, paths: []string{"internal/redisproto", "internal/horizon"}, may: []string{"leaf", "laravel", "vocabulary"},
		why: "Laravel's Redis queue and Horizon's records on the wire: below the Redis store, the cache stores and the dashboard"},
	{name: "sqs-protocol", layer: 2, paths: []string{"internal/sqsproto"}, may: []string{"leaf"},
		why: "Laravel's SqsQueue requests on the AWS SDK: below the SQS store"},
	{name: "beanstalkd-protocol", layer: 2, paths: []string{"internal/beanstalkproto"}, may: []string{"leaf"},
		why: "beanstalkd's text protocol: below the beanstalkd store"},
	{name: "class-tools", layer: 2, paths: []string{"internal/phpclass", "internal/jobgen", "internal/classaudit"}, may: []string{"leaf", "laravel"},
		why: "reading the app's PHP classes (class audit and gen)"},
	{name: "cache", layer: 3, paths: []string{"internal/cache"}, may: []string{"leaf", "laravel", "vocabulary", "sqldb", "redis-protocol"},
		why: "the app's cache stores, locks and limiters, as the stores offer them (jobqueue.SharedState)"},
	{name: "fixtures", layer: 3, paths: []string{"internal/testutil"}, may: []string{"leaf", "laravel", "vocabulary", "sqldb"},
		why: "test fixtures: servers and databases for tests, above nothing they support"},
	{name: "conformance", layer: 4, paths: []string{"jobqueue/storetest"}, may: []string{"leaf", "laravel", "vocabulary", "fixtures"},
		why: "the store contract's conformance suite: written against the contract alone, run by each store's tests"},
	{name: "store", layer: 4, may: []string{"leaf", "laravel", "vocabulary", "sqldb", "cache"},
		why: "a store (store/<name>): implements the contract; never imports another store, the engine or anything above"},
	{name: "engine", layer: 4, paths: []string{"worker"}, may: []string{"leaf", "laravel", "vocabulary", "handlers", "laravel-rules"},
		why: "the worker: runs on the contract, names no store"},
	{name: "fleet", layer: 4, paths: []string{"internal/fleet"}, may: []string{"leaf", "laravel", "vocabulary"},
		why: "laraworker's own tables (workers, pauses, history): the vocabulary, not the engine"},
	{name: "fixture-testdb", layer: 5, paths: []string{"internal/testutil/testdb"}, may: []string{"leaf", "laravel", "fixtures", "store:database"},
		why: "the database store's fixture: it opens a store for the tests of the packages above it"},
	{name: "dashboard", layer: 5, paths: []string{"internal/dashboard"}, may: []string{"leaf", "laravel", "vocabulary", "laravel-rules", "redis-protocol", "fleet"},
		why: "the dashboard and its snapshot: the vocabulary and the fleet, not the engine or a store"},
	{name: "fixture-testdash", layer: 6, paths: []string{"internal/dashboard/internal/testdash"}, may: []string{"leaf", "laravel", "fleet", "fixtures", "store:database"},
		why: "the dashboard's test fixture: a database store with the fleet's tables"},
	{name: "pulse", layer: 5, paths: []string{"internal/pulse"}, may: []string{"leaf", "laravel", "sqldb", "engine"},
		why: "Laravel Pulse's entries: an observer of the engine"},
	{name: "longwait", layer: 6, paths: []string{"internal/longwait"}, may: []string{"leaf", "vocabulary", "fleet", "dashboard"},
		why: "the long-wait alerts, read from the dashboard's snapshot"},
	{name: "cli-output", layer: 4, paths: []string{"console/internal/cmdline", "console/internal/output"}, may: []string{"leaf"},
		why: "the CLI's flags and output"},
	{name: "cli-connection", layer: 7, paths: []string{"console/internal/queueconn"},
		may: []string{"leaf", "laravel", "vocabulary", "sqldb", "cache", "redis-protocol", "store:*", "fleet", "cli-output"},
		why: "the CLI's connection layer: opens the stores by driver, and imports no dashboard"},
	{name: "cli", layer: 8, paths: []string{"console"}, may: []string{"*"},
		why: "the CLI as a library, its commands and their fixtures"},
	{name: "top", layer: 9, paths: []string{"", "examples", "test", "docs", "deploy", "internal/archtest"}, may: []string{"*"},
		why: "the binary, examples, development suites and checks"},
}

// storeProtocols: the wire protocol group a store sits on, which no
// other store may import (the protocols live in internal/ so that the CLI
// and the dashboard share them without making them API).
var storeProtocols = map[string]string{"redis": "redis-protocol", "sqs": "sqs-protocol", "beanstalkd": "beanstalkd-protocol"}

// storePrefix is where the stores live: each store/<name> is a group of
// its own ("store:<name>"), with the store group's rules.
const storePrefix = "store/"

// groupOf finds the group of a package path of the module ("" is the
// module's root). ok is false for a package no group holds.
func groupOf(path string) (g group, name string, ok bool) {
	best := -1
	for _, cand := range groups {
		for _, p := range cand.paths {
			if (path == p || p != "" && strings.HasPrefix(path, p+"/")) && len(p) > best {
				g, name, best = cand, cand.name, len(p)
			}
		}
	}
	if rest, isStore := strings.CutPrefix(path, storePrefix); isStore && best < len(storePrefix) {
		store := strings.SplitN(rest, "/", 2)[0]
		for _, cand := range groups {
			if cand.name == "store" {
				g, name, best = cand, "store:"+store, len(storePrefix)+len(store)
			}
		}
		if wire, ok := storeProtocols[store]; ok {
			g.may = append(append([]string(nil), g.may...), wire)
		}
	}
	return g, name, best >= 0
}

// Package is a package and what it imports, by path in the module.
type Package struct {
	Path    string
	Imports []string
}

// Violations lists the imports the layers forbid, and the packages no
// group holds.
func Violations(pkgs []Package) []string {
	var out []string
	for _, p := range pkgs {
		from, fromName, ok := groupOf(p.Path)
		if !ok {
			out = append(out, fmt.Sprintf("%s is in no group: place it in internal/archtest/layers.go", show(p.Path)))
			continue
		}
		for _, imp := range p.Imports {
			to, toName, ok := groupOf(imp)
			if !ok || toName == fromName || allowed(from, to, toName) {
				continue
			}
			out = append(out, fmt.Sprintf("%s (%s, layer %d) imports %s (%s, layer %d): %s may import only %s",
				show(p.Path), fromName, from.layer, show(imp), toName, to.layer, fromName, mayText(from)))
		}
	}
	sort.Strings(out)
	return out
}

// allowed tells whether group from may import group to.
func allowed(from, to group, toName string) bool {
	if to.layer >= from.layer {
		return false
	}
	for _, m := range from.may {
		if m == "*" || m == toName || m == "store:*" && strings.HasPrefix(toName, "store:") {
			return true
		}
	}
	return false
}

// mayText is what a group may import, for messages.
func mayText(g group) string {
	if len(g.may) == 0 {
		return "its own packages"
	}
	return strings.Join(g.may, ", ")
}

// show names the module's root.
func show(path string) string {
	if path == "" {
		return "(module root)"
	}
	return path
}

// Rules lists the groups, lowest layer first, as the check applies them.
func Rules() string {
	gs := append([]group(nil), groups...)
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].layer < gs[j].layer })
	var b strings.Builder
	for _, g := range gs {
		var paths []string
		for _, p := range g.paths {
			paths = append(paths, show(p))
		}
		if g.name == "store" {
			paths = []string{storePrefix + "<name> (each a group: store:<name>)"}
		}
		fmt.Fprintf(&b, "layer %d %s: %s\n\tmay import: %s\n\t(%s)\n", g.layer, g.name, strings.Join(paths, ", "), mayText(g), g.why)
	}
	return b.String()
}
