package classaudit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/laraworker/laraworker/internal/phpclass"
)

// The queue attributes of Illuminate\Queue\Attributes (Laravel 13.26:
// Backoff, Connection, DebounceFor, Delay, DeleteWhenMissingModels,
// FailOnTimeout, MaxExceptions, Queue, Timeout, Tries, UniqueFor,
// WithoutRelations). Each is named with who does it once the class runs
// in Go. Most are read by PHP at dispatch into the payload or the row,
// which Go reads as queue:work does; #[DebounceFor] is judged in the
// worker (Go skips superseded dispatches, when it can find their owner).

// queueAttributeNS is the namespace of Laravel's queue attributes.
const queueAttributeNS = `Illuminate\Queue\Attributes\`

// attributeRule is what one attribute means for a Go worker.
type attributeRule struct {
	// since is the Laravel version that reads it; before, it is ignored.
	since   string
	verdict Verdict
	how     string
}

// attributeRules are the attributes this laraworker knows, by short name.
// DeleteWhenMissingModels is judged with the models (models()).
var attributeRules = map[string]attributeRule{
	"Tries":            {"13.0", Go, "PHP writes it into the payload's maxTries at dispatch; Go applies it as queue:work does"},
	"Backoff":          {"13.0", Go, "PHP writes it into the payload's backoff at dispatch; Go releases with it as queue:work does"},
	"Timeout":          {"13.0", Go, "PHP writes it into the payload's timeout at dispatch; Go applies it as queue:work does"},
	"MaxExceptions":    {"13.0", Go, "PHP writes it into the payload's maxExceptions at dispatch; Go applies it as queue:work does"},
	"FailOnTimeout":    {"13.0", Go, "PHP writes it into the payload's failOnTimeout at dispatch; Go fails a timed-out job with it as queue:work does"},
	"UniqueFor":        {"13.0", PHP, "the unique lock's lifetime, set by PHP at dispatch; releasing the lock is the ShouldBeUnique item's"},
	"Queue":            {"13.0", PHP, "PHP picks the queue at dispatch: serve it with `work --queue` (Queue::forward is followed)"},
	"Connection":       {"13.0", PHP, "PHP picks the connection at dispatch: serve it with `work --connection`"},
	"Delay":            {"13.4", PHP, "PHP delays the row at dispatch (available_at); Go claims it when due, as queue:work does"},
	"WithoutRelations": {"10.19", Go, "PHP serializes the models without their relations at dispatch; Go reads the same model identifiers"},
}

// attributes judges the class's queue attributes, in name order.
func (a *auditor) attributes() {
	attrs := append([]phpclass.Attribute(nil), a.c.Attributes...)
	sort.Slice(attrs, func(i, j int) bool { return attrs[i].Name < attrs[j].Name })
	for _, attr := range attrs {
		short, ok := strings.CutPrefix(strings.TrimPrefix(attr.Name, `\`), queueAttributeNS)
		if !ok || short == "DeleteWhenMissingModels" {
			continue
		}
		it := Item{Area: "attribute", Name: "#[" + short + "]", Declared: attributeDecl(short, attr.Args)}
		rule, known := attributeRules[short]
		switch {
		case short == "DebounceFor":
			it.Verdict, it.How = a.debounce()
		case !known:
			it.Verdict, it.How = Lost, "this laraworker does not know the attribute (newer than Laravel 13.26?): find out what PHP does with it before the class runs in Go"
		default:
			it.Verdict, it.How = rule.verdict, rule.how
		}
		if since := attributeSince(short, rule); since != "" && a.version != "" && !a.atLeast(since) {
			it.Verdict, it.How = Go, fmt.Sprintf("Laravel %s ignores it (read from %s on), in PHP and in Go", a.version, since)
		}
		a.add(it)
	}
}

// attributeSince is the version that reads an attribute ("" unknown).
func attributeSince(short string, rule attributeRule) string {
	if short == "DebounceFor" {
		return "13.6"
	}
	return rule.since
}

// debounce judges #[DebounceFor]: Go deletes a dispatch a newer one
// superseded when it can read the owner's key, as CallQueuedHandler does.
func (a *auditor) debounce() (Verdict, string) {
	c := a.c
	const does = "Go skips a dispatch a newer one superseded (deleted without running, as CallQueuedHandler does), reading the owner of laravel_debounced_job:<class>:<debounceId> in the cache"
	store := "the default store"
	if c.HasMethod("debounceVia") {
		store = "the store debounceVia() returns"
	} else if d := a.app.Cache.Driver(""); d != "" && !lockDriverOK(d) {
		return PHP, fmt.Sprintf("the owner lives in the default cache store (%s driver), which Go cannot read: Go gives its jobs back to PHP workers", d)
	}
	var needs []string
	if c.HasMethod("debounceId") {
		needs = append(needs, "handlers.DebounceID(...) porting debounceId()")
	} else if p, ok := c.Property("debounceId"); ok && p.HasDefault {
		needs = append(needs, `handlers.DebounceID(handlers.UniqueIDProperty("debounceId")) (its default `+p.DefaultPHP+` is left out of the payload)`)
	}
	if c.HasMethod("debounceVia") {
		needs = append(needs, "handlers.DebounceVia(\"<store>\") naming debounceVia()'s store")
	}
	if len(needs) == 0 {
		return Go, does + " (" + store + "; the id is the payload's public $debounceId, or '')"
	}
	return GoDeclared, does + " when the registration declares " + strings.Join(needs, " and ") +
		"; a --route handler cannot, and would run every dispatch"
}

// attributeDecl is the attribute as written: #[Tries(3)].
func attributeDecl(short string, args json.RawMessage) string {
	args = bytes.TrimSpace(args)
	switch {
	case len(args) == 0 || string(args) == "[]" || string(args) == "{}":
		return "#[" + short + "]"
	case string(args) == "null":
		return "#[" + short + "(…)] (an argument names a constant the app lacks)"
	}
	var list []json.RawMessage
	if json.Unmarshal(args, &list) == nil {
		parts := make([]string, len(list))
		for i, v := range list {
			parts[i] = string(v)
		}
		return "#[" + short + "(" + strings.Join(parts, ", ") + ")]"
	}
	var named map[string]json.RawMessage
	if json.Unmarshal(args, &named) == nil {
		keys := make([]string, 0, len(named))
		for k := range named {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			if strings.Trim(k, "0123456789") == "" {
				parts[i] = string(named[k]) // positional, before the named ones
			} else {
				parts[i] = k + ": " + string(named[k])
			}
		}
		return "#[" + short + "(" + strings.Join(parts, ", ") + ")]"
	}
	return "#[" + short + "(" + string(args) + ")]"
}
