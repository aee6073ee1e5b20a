package classaudit

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/laraworker/laraworker/internal/jobgen"
	"github.com/laraworker/laraworker/internal/phpclass"
)

// Report is the audit of an app's classes.
type Report struct {
	LaravelVersion string        `json:"laravel_version"`
	Bridge         BridgeState   `json:"bridge"`
	Classes        []ClassReport `json:"classes"`
	// UnmatchedRoutes are bridge routes that match no job class under app/.
	UnmatchedRoutes []string `json:"unmatched_routes"`
	// Lost counts the items that will not carry over; Unreadable the
	// classes the app's PHP could not read.
	Lost       int `json:"lost"`
	Unreadable int `json:"unreadable"`
	// Skipped are the classes a look for every job class of the app left
	// out, and why (phpclass.Options.AllJobs).
	Skipped []phpclass.Skipped `json:"skipped"`
}

// BridgeState is the bridge as the audit saw it.
type BridgeState struct {
	Installed    bool     `json:"installed"`
	Capabilities []string `json:"capabilities"`
}

// ClassReport is one class's audit.
type ClassReport struct {
	Class    string   `json:"class"`
	File     string   `json:"file,omitempty"`
	RoutedBy []string `json:"routed_by"`
	Error    string   `json:"error,omitempty"`
	Items    []Item   `json:"items"`
	Lost     int      `json:"lost"`
}

// Audit judges every class of app.
func Audit(app *phpclass.App) Report {
	r := Report{
		LaravelVersion:  app.Version,
		Bridge:          BridgeState{Installed: app.Bridge.Installed, Capabilities: orEmpty(app.Bridge.Capabilities)},
		UnmatchedRoutes: orEmpty(app.UnmatchedRoutes),
		Skipped:         app.Skipped,
	}
	if r.Skipped == nil {
		r.Skipped = []phpclass.Skipped{}
	}
	for i := range app.Classes {
		cr := AuditClass(app, &app.Classes[i])
		r.Lost += cr.Lost
		if cr.Error != "" {
			r.Unreadable++
		}
		r.Classes = append(r.Classes, cr)
	}
	return r
}

// relativeTo is file relative to the app's root when it is inside it.
func relativeTo(root, file string) string {
	if root == "" || file == "" {
		return file
	}
	rel, err := filepath.Rel(root, file)
	if err != nil || strings.HasPrefix(rel, "..") {
		return file
	}
	return filepath.ToSlash(rel)
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// AuditClass judges one class.
func AuditClass(app *phpclass.App, c *phpclass.Class) ClassReport {
	cr := ClassReport{Class: c.Name, File: relativeTo(app.AppDir, c.File), RoutedBy: orEmpty(c.RoutedBy), Error: c.Error, Items: []Item{}}
	if c.Error != "" {
		return cr
	}
	a := auditor{app: app, c: c, version: app.Version}
	a.class()
	a.properties()
	a.options()
	a.attributes()
	a.contracts()
	a.models()
	a.hooks()
	a.middleware()
	cr.Items = a.items
	for _, it := range a.items {
		if it.Lost() {
			cr.Lost++
		}
	}
	return cr
}

type auditor struct {
	app     *phpclass.App
	c       *phpclass.Class
	version string
	items   []Item
}

func (a *auditor) add(it Item) { a.items = append(a.items, it) }

func (a *auditor) atLeast(v string) bool { return phpclass.VersionAtLeast(a.version, v) }

func (a *auditor) bridgeHas(capability string) bool { return a.app.Bridge.Has(capability) }

// noBridge explains a missing capability: no bridge, or one without it.
func (a *auditor) noBridge(what string) string {
	if !a.app.Bridge.Installed {
		return "no laraworker bridge is installed to " + what
	}
	return "the installed bridge does not " + what + " (update it)"
}

func (a *auditor) class() {
	c := a.c
	if !c.Is("ShouldQueue") {
		a.add(Item{Area: "class", Name: "ShouldQueue", Declared: "not implemented", Verdict: PHP,
			How: "dispatch() runs the class at once in PHP: it is never queued, so Go never sees it"})
	}
	if c.HasMethod("displayName") {
		a.add(Item{Area: "class", Name: "displayName()", Declared: "method", Verdict: Go,
			How: "the payload's displayName is what it returns: register the Go handler under that name, not the class name"})
	}
}

func (a *auditor) properties() {
	for _, p := range a.c.DataProperties() {
		a.add(propertyItem(a.c, p, a.atLeast("9.4")))
	}
}

// declaration is a property as PHP declares it.
func declaration(p phpclass.Property) string {
	s := p.Visibility
	if p.Type != nil {
		s += " " + p.Type.Text
	}
	if p.HasDefault && p.Type != nil {
		s += " = " + p.DefaultPHP
	}
	if p.Promoted {
		s += " (promoted)"
	}
	return s
}

// queueOptions are read at dispatch into the payload, which Go applies.
var queueOptions = []struct{ name, how string }{
	{"tries", "payload maxTries"},
	{"backoff", "payload backoff"},
	{"timeout", "payload timeout"},
	{"maxExceptions", "payload maxExceptions"},
	{"failOnTimeout", "payload failOnTimeout"},
	{"retryUntil", "payload retryUntil"},
}

func (a *auditor) options() {
	c := a.c
	for _, o := range queueOptions {
		declared := ""
		if p, ok := c.Property(o.name); ok {
			declared = "$" + o.name + " = " + p.DefaultPHP
		}
		if c.HasMethod(o.name) {
			declared = strings.TrimPrefix(declared+", ", ", ") + o.name + "()"
		}
		if declared == "" {
			continue
		}
		how := "PHP writes it into the " + o.how + " at dispatch; Go applies it as queue:work does"
		if o.name == "maxExceptions" {
			how += a.exceptionCounter()
		}
		a.add(Item{Area: "option", Name: o.name, Declared: declared, Verdict: Go, How: how})
	}
	if p, ok := c.Property("afterCommit"); ok {
		a.add(Item{Area: "option", Name: "afterCommit", Declared: "$afterCommit = " + p.DefaultPHP, Verdict: PHP,
			How: "applies at dispatch, in PHP: nothing for the worker to do"})
	}
	if c.Is("ShouldBeEncrypted") {
		a.add(Item{Area: "contract", Name: "ShouldBeEncrypted", Declared: "implements", Verdict: Go,
			How: "Go decrypts the command with the app's APP_KEY (and previous keys)"})
	}
}

// exceptionCounter says where Go counts exceptions for maxExceptions.
func (a *auditor) exceptionCounter() string {
	if d := a.app.Cache.Driver(""); d != "database" {
		return fmt.Sprintf(" (the default cache store is %s, not database: Go counts a job's exceptions itself, not shared with PHP)", orUnknown(d))
	}
	return " (counted in the database cache store, shared with PHP)"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// lockDriverOK reports whether Go reaches a cache store's locks.
func lockDriverOK(driver string) bool { return driver == "database" || driver == "redis" }

func (a *auditor) contracts() {
	c := a.c
	for _, t := range []struct{ trait, how string }{
		{"InteractsWithQueue", "$this->job, attempts(), release(), delete(), fail(): handlers.Job's Attempts, Release, Delete, Fail"},
		{"SerializesModels", "models travel as payload.ModelIdentifier; Go loads nothing unless the handler does"},
	} {
		if c.Uses(t.trait) {
			a.add(Item{Area: "trait", Name: t.trait, Declared: "uses", Verdict: Go, How: t.how})
		}
	}
	if c.Uses("Dispatchable") {
		a.add(Item{Area: "trait", Name: "Dispatchable", Declared: "uses", Verdict: PHP, How: "dispatching stays in PHP"})
	}
	if c.Is("ShouldBeUnique") {
		a.add(a.unique())
	}
}

// unique judges a ShouldBeUnique class's lock.
func (a *auditor) unique() Item {
	c := a.c
	name := "ShouldBeUnique"
	if c.Is("ShouldBeUniqueUntilProcessing") {
		name = "ShouldBeUniqueUntilProcessing"
	}
	it := Item{Area: "contract", Name: name, Declared: a.uniqueDeclared()}
	store, known := a.uniqueStore()
	driver := a.app.Cache.Driver(store)
	switch {
	case len(c.RoutedBy) > 0 && !a.bridgeHas(phpclass.CapUnique):
		it.Verdict, it.How = PHP, "the class stays on PHP: "+a.noBridge("route ShouldBeUnique classes with their lock")
	case known && !lockDriverOK(driver):
		it.Verdict, it.How = Lost, fmt.Sprintf("the lock lives in the %s store (%s driver), which Go cannot reach: its lock would stay until uniqueFor expires (0: forever) and Laravel drops every dispatch meanwhile; keep the class on PHP", orUnknown(store), orUnknown(driver))
	case a.bridgeHas(phpclass.CapUnique):
		it.Verdict, it.How = Go, "Go releases the lock as CallQueuedHandler does; the bridge records its key, store and kind in the payload at dispatch"
	case !known && !a.atLeast("11.39"):
		it.Verdict, it.How = Lost, "uniqueVia() returns "+c.UniqueVia.Expr+": neither audit nor Go can tell the lock's store before Laravel 11.39"
	case a.atLeast("11.39") && name == "ShouldBeUnique":
		it.Verdict, it.How = Go, "Go releases the lock as CallQueuedHandler does; Laravel 11.39+ names its key and store in the payload"
	default:
		it.Verdict, it.How = GoDeclared, "Go releases the lock when the registration declares the class: handlers."+name+"("+a.uniqueIDDecl()+") (gen writes it); "+
			"Laravel "+a.version+" payloads do not say the class is unique"
		if name == "ShouldBeUniqueUntilProcessing" && a.atLeast("11.39") {
			it.How = "Go releases the lock before the handler when the registration declares handlers.ShouldBeUniqueUntilProcessing (gen writes it): 8-12 payloads name the lock but not its kind"
		}
	}
	if it.Verdict != PHP && it.Verdict != Lost && store != "" && known {
		it.How += fmt.Sprintf(" (store %s, %s driver)", store, driver)
	}
	return it
}

func (a *auditor) uniqueDeclared() string {
	c := a.c
	var parts []string
	if c.HasMethod("uniqueId") {
		parts = append(parts, "uniqueId()")
	} else if p, ok := c.Property("uniqueId"); ok {
		parts = append(parts, "$uniqueId = "+p.DefaultPHP)
	}
	if p, ok := c.Property("uniqueFor"); ok {
		parts = append(parts, "$uniqueFor = "+p.DefaultPHP)
	}
	if c.HasMethod("uniqueFor") {
		parts = append(parts, "uniqueFor()")
	}
	if c.UniqueVia != nil {
		parts = append(parts, "uniqueVia(): "+c.UniqueVia.Expr)
	}
	if len(parts) == 0 {
		return "implements"
	}
	return strings.Join(parts, ", ")
}

func (a *auditor) uniqueIDDecl() string {
	c := a.c
	switch {
	case c.UniqueIDProperty != nil:
		return `handlers.UniqueIDProperty("` + *c.UniqueIDProperty + `")`
	case c.HasMethod("uniqueId"):
		return "a UniqueIDFunc porting uniqueId()"
	}
	if _, ok := c.Property("uniqueId"); ok {
		return `handlers.UniqueIDProperty("uniqueId")`
	}
	return "nil"
}

// uniqueStore is the store uniqueVia() names ("" the default store), and
// whether audit could read it.
func (a *auditor) uniqueStore() (string, bool) {
	v := a.c.UniqueVia
	switch {
	case v == nil || v.Default:
		return "", true
	case v.Store != nil:
		return *v.Store, true
	}
	return "", false
}

func (a *auditor) models() {
	c := a.c
	deletes := jobgen.DeletesWhenMissingModels(c, a.version)
	if p, ok := c.Property("deleteWhenMissingModels"); ok || deletes {
		declared := "#[DeleteWhenMissingModels]"
		if ok {
			declared = "$deleteWhenMissingModels = " + p.DefaultPHP
		}
		it := Item{Area: "option", Name: "deleteWhenMissingModels", Declared: declared}
		switch {
		case !deletes:
			it.Verdict, it.How = Go, "false: a missing model fails the job, in PHP and in Go"
		case a.atLeast("13.0"):
			it.Verdict, it.How = Go, "Laravel 13 writes it into the payload; Go deletes a job whose model is gone, as PHP does"
		case a.bridgeHas(phpclass.CapModels):
			it.Verdict, it.How = Go, "the bridge records it in the payload at dispatch; Go deletes a job whose model is gone, as PHP does"
		default:
			it.Verdict, it.How = GoDeclared, "Laravel "+a.version+" payloads do not carry it: the registration declares handlers.DeleteWhenMissingModels() (gen writes it); "+
				a.noBridge("record it in the payload")+", so a --route handler would run the job without its model"
		}
		a.add(it)
	}
	if _, ok := c.Attribute(`Illuminate\Queue\Attributes\DeleteWhenMissingModels`); ok && !a.atLeast("11.3") {
		a.add(Item{Area: "option", Name: "#[DeleteWhenMissingModels]", Declared: "attribute", Verdict: Go,
			How: "Laravel " + a.version + " ignores it (11.3+): a missing model fails the job, in PHP and in Go"})
	}
	for _, m := range c.Models() {
		it := Item{Area: "model", Name: m.Class, Declared: "table " + m.Table}
		if a.bridgeHas(phpclass.CapModels) {
			it.Verdict, it.How = Go, "the bridge records the models' tables in the payload; Go looks each model up before running, as unserializing does in PHP"
		} else {
			it.Verdict, it.How = GoDeclared, "Go looks the model up before running when the registration names its table: handlers.Models(handlers.Model{Class: `"+m.Class+"`, Table: \""+m.Table+"\"}) (gen writes it); "+
				a.noBridge("record the tables in the payload")
		}
		a.add(it)
	}
}

func (a *auditor) hooks() {
	c := a.c
	if c.HasMethod("failed") {
		it := Item{Area: "hook", Name: "failed()", Declared: "method"}
		if a.bridgeHas(phpclass.CapFailed) {
			it.Verdict, it.How = Bridge, "runs in PHP once per Go failure, with Go's exception; JobFailed fires there"
		} else {
			it.Verdict, it.How = Lost, "when Go fails a job, failed() does not run and JobFailed does not fire: "+a.noBridge("run it in PHP")
		}
		a.add(it)
	}
	if c.Uses("Batchable") {
		it := Item{Area: "hook", Name: "batch callbacks", Declared: "uses Batchable", When: "in a Bus::batch with then/catch/finally"}
		switch {
		case a.bridgeHas(phpclass.CapBatchCallbacks):
			it.Verdict, it.How = Bridge, "then, catch and finally run in PHP as Laravel's Batch invokes them; Go updates job_batches"
		default:
			it.Verdict, it.How = PHP, "members of batches with callbacks stay on PHP (the bridge and the worker leave them there): "+a.noBridge("run the callbacks in PHP")
		}
		if !c.Uses("InteractsWithQueue") {
			it.How += "; without InteractsWithQueue a success never counts for the batch, in PHP as in Go"
		}
		a.add(it)
	}
	it := Item{Area: "hook", Name: "chain catch", Declared: "any link of a chain", When: "in a Bus::chain with catch()"}
	if a.bridgeHas(phpclass.CapChainCatch) {
		it.Verdict, it.How = Bridge, "a failed link's catch callbacks run in PHP"
	} else {
		it.Verdict, it.How = Lost, "when Go fails a link, the chain's catch callbacks do not run: "+a.noBridge("run them in PHP")
	}
	a.add(it)
}
