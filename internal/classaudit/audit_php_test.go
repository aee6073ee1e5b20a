package classaudit_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/laraworker/laraworker/internal/classaudit"
	"github.com/laraworker/laraworker/internal/phpclass"
	"github.com/laraworker/laraworker/internal/testutil/phptest"
)

// auditedClasses are the test app's classes the audit tests look at.
var auditedClasses = []string{
	`App\Jobs\Audit\MiddlewareJob`, `App\Jobs\Audit\FailedHookJob`, `App\Jobs\UniqueJob`, `App\Jobs\DeletableModelJob`,
	`App\Jobs\BatchMemberJob`, `App\Jobs\EncryptedJob`, `App\Jobs\OptionsJob`, `App\Jobs\RetryUntilJob`,
}

// reflectTestApp reads auditedClasses from the Laravel 8.83 test app (the
// bridge installed, with the capabilities it lists).
func reflectTestApp(t *testing.T) *phpclass.App {
	t.Helper()
	phptest.NeedPHP(t)
	a, err := phpclass.Reflect(context.Background(), phpclass.Options{AppDir: phptest.CopyApp(t), Classes: auditedClasses})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// itemList is a class's items as "name=verdict", in order; a conditional
// item gets a "?".
func itemList(r classaudit.ClassReport) []string {
	var out []string
	for _, it := range r.Items {
		s := it.Name + "=" + string(it.Verdict)
		if it.When != "" {
			s += "?"
		}
		out = append(out, s)
	}
	return out
}

func checkAudit(t *testing.T, a *phpclass.App, want map[string][]string, lost map[string]int) {
	t.Helper()
	r := classaudit.Audit(a)
	total := 0
	for _, cr := range r.Classes {
		if w, ok := want[cr.Class]; ok && !slices.Equal(itemList(cr), w) {
			t.Errorf("%s\n got %q\nwant %q", cr.Class, itemList(cr), w)
		}
		if cr.Lost != lost[cr.Class] {
			t.Errorf("%s: %d lost, want %d", cr.Class, cr.Lost, lost[cr.Class])
		}
		total += cr.Lost
	}
	if r.Lost != total {
		t.Errorf("report: %d lost, classes %d", r.Lost, total)
	}
}

var traits = []string{"InteractsWithQueue=go", "SerializesModels=go", "Dispatchable=php"}

func items(parts ...[]string) []string { return slices.Concat(parts...) }

// TestAuditTestApp: on the Laravel 8.83 test app with today's bridge (it
// runs failed(), chain catch and batch callbacks in PHP for Go and records
// unique locks, models and job middleware), each item of each class says
// who does it: the app's own middleware and closures are lost, Laravel's
// middleware shares its state with PHP, the hooks run in PHP through the
// bridge, unique and model classes need no Go declaration.
func TestAuditTestApp(t *testing.T) {
	a := reflectTestApp(t)
	checkAudit(t, a, map[string][]string{
		`App\Jobs\Audit\MiddlewareJob`: items([]string{"$customerId=go", "$lines=go", "tries=go"}, traits,
			[]string{"chain catch=php-bridge?", "WithoutOverlapping=shared", "RateLimited=shared", `App\Jobs\Middleware\EnsureTokenIsValid=lost`, "closure=lost"}),
		`App\Jobs\Audit\FailedHookJob`: items([]string{"$notBefore=go", "$recipient=go", "$fail=go", "tries=go", "backoff=go"}, traits,
			[]string{"failed()=php-bridge", "chain catch=php-bridge?"}),
		`App\Jobs\UniqueJob`:         items([]string{"$productId=go"}, traits, []string{"ShouldBeUnique=go", "chain catch=php-bridge?"}),
		`App\Jobs\DeletableModelJob`: items([]string{"$podcast=go"}, traits, []string{"deleteWhenMissingModels=go", `App\Models\Podcast=go`, "chain catch=php-bridge?"}),
		`App\Jobs\BatchMemberJob`:    items([]string{"$n=go", "$fail=go"}, traits, []string{"batch callbacks=php-bridge?", "chain catch=php-bridge?"}),
		`App\Jobs\EncryptedJob`:      items([]string{"$secret=go", "$podcastId=go", "ShouldBeEncrypted=go"}, traits, []string{"chain catch=php-bridge?"}),
		`App\Jobs\OptionsJob`: items([]string{"$podcastId=go", "tries=go", "backoff=go", "timeout=go", "maxExceptions=go", "failOnTimeout=go", "retryUntil=go"},
			traits, []string{"chain catch=php-bridge?"}),
		`App\Jobs\RetryUntilJob`: items([]string{"$minutes=go", "tries=go", "retryUntil=go"}, traits, []string{"chain catch=php-bridge?"}),
	}, map[string]int{`App\Jobs\Audit\MiddlewareJob`: 2})
}

// TestAuditWithoutBridgeHooks: with a bridge that only routes classes (one
// older than the hook jobs), failed() and chain catch are lost, unique and
// model classes need the Go registration, batch callbacks keep their
// members on PHP.
func TestAuditWithoutBridgeHooks(t *testing.T) {
	a := reflectTestApp(t)
	a.Bridge.Capabilities = nil
	checkAudit(t, a, map[string][]string{
		`App\Jobs\Audit\MiddlewareJob`: items([]string{"$customerId=go", "$lines=go", "tries=go"}, traits,
			[]string{"chain catch=lost?", "WithoutOverlapping=lost", "RateLimited=lost", `App\Jobs\Middleware\EnsureTokenIsValid=lost`, "closure=lost"}),
		`App\Jobs\Audit\FailedHookJob`: items([]string{"$notBefore=go", "$recipient=go", "$fail=go", "tries=go", "backoff=go"}, traits,
			[]string{"failed()=lost", "chain catch=lost?"}),
		`App\Jobs\UniqueJob`:         items([]string{"$productId=go"}, traits, []string{"ShouldBeUnique=go-declared", "chain catch=lost?"}),
		`App\Jobs\DeletableModelJob`: items([]string{"$podcast=go"}, traits, []string{"deleteWhenMissingModels=go-declared", `App\Models\Podcast=go-declared`, "chain catch=lost?"}),
		`App\Jobs\BatchMemberJob`:    items([]string{"$n=go", "$fail=go"}, traits, []string{"batch callbacks=php?", "chain catch=lost?"}),
	}, map[string]int{`App\Jobs\Audit\MiddlewareJob`: 4, `App\Jobs\Audit\FailedHookJob`: 1})
}

// TestAuditWithBridgeHooks: once the bridge runs PHP's hooks and records
// middleware, unique locks and models at dispatch, only closures and the
// app's own middleware are lost.
func TestAuditWithBridgeHooks(t *testing.T) {
	a := reflectTestApp(t)
	a.Bridge.Capabilities = []string{phpclass.CapFailed, phpclass.CapBatchCallbacks, phpclass.CapChainCatch, phpclass.CapMiddleware, phpclass.CapUnique, phpclass.CapModels}
	checkAudit(t, a, map[string][]string{
		`App\Jobs\Audit\MiddlewareJob`: items([]string{"$customerId=go", "$lines=go", "tries=go"}, traits,
			[]string{"chain catch=php-bridge?", "WithoutOverlapping=shared", "RateLimited=shared", `App\Jobs\Middleware\EnsureTokenIsValid=lost`, "closure=lost"}),
		`App\Jobs\Audit\FailedHookJob`: items([]string{"$notBefore=go", "$recipient=go", "$fail=go", "tries=go", "backoff=go"}, traits,
			[]string{"failed()=php-bridge", "chain catch=php-bridge?"}),
		`App\Jobs\UniqueJob`:         items([]string{"$productId=go"}, traits, []string{"ShouldBeUnique=go", "chain catch=php-bridge?"}),
		`App\Jobs\DeletableModelJob`: items([]string{"$podcast=go"}, traits, []string{"deleteWhenMissingModels=go", `App\Models\Podcast=go`, "chain catch=php-bridge?"}),
		`App\Jobs\BatchMemberJob`:    items([]string{"$n=go", "$fail=go"}, traits, []string{"batch callbacks=php-bridge?", "chain catch=php-bridge?"}),
	}, map[string]int{`App\Jobs\Audit\MiddlewareJob`: 2})

	// Go shares locks and counters only on the database and redis stores.
	file := "file"
	a.Cache.Default = &file
	r := classaudit.Audit(a)
	for _, cr := range r.Classes {
		for _, it := range cr.Items {
			if (it.Name == "WithoutOverlapping" || it.Name == "RateLimited" || it.Name == "ShouldBeUnique") && it.Verdict != classaudit.Lost {
				t.Errorf("%s %s on a file cache store: %s (%s)", cr.Class, it.Name, it.Verdict, it.How)
			}
		}
	}
}

// TestAuditVersions: what Laravel's payload carries by version decides
// whether Go needs a declaration: the unique lock's key from 11.39,
// deleteWhenMissingModels from 13.0.
func TestAuditVersions(t *testing.T) {
	a := reflectTestApp(t)
	a.Bridge.Installed = false
	verdict := func(class, item string) classaudit.Verdict {
		for _, cr := range classaudit.Audit(a).Classes {
			for _, it := range cr.Items {
				if cr.Class == class && it.Name == item {
					return it.Verdict
				}
			}
		}
		t.Fatalf("%s has no item %s", class, item)
		return ""
	}
	for _, tc := range []struct {
		version, class, item string
		want                 classaudit.Verdict
	}{
		{"8.83.26", `App\Jobs\UniqueJob`, "ShouldBeUnique", classaudit.GoDeclared},
		{"11.38.2", `App\Jobs\UniqueJob`, "ShouldBeUnique", classaudit.GoDeclared},
		{"11.39.0", `App\Jobs\UniqueJob`, "ShouldBeUnique", classaudit.Go},
		{"12.67.0", `App\Jobs\DeletableModelJob`, "deleteWhenMissingModels", classaudit.GoDeclared},
		{"13.0.0", `App\Jobs\DeletableModelJob`, "deleteWhenMissingModels", classaudit.Go},
		{"13.26.1", `App\Jobs\DeletableModelJob`, `App\Models\Podcast`, classaudit.GoDeclared},
		{"12.67.0", `App\Jobs\Audit\FailedHookJob`, "failed()", classaudit.Lost},
	} {
		a.Version = tc.version
		if got := verdict(tc.class, tc.item); got != tc.want {
			t.Errorf("Laravel %s, %s %s: %s, want %s", tc.version, tc.class, tc.item, got, tc.want)
		}
	}
	a.Version = "8.83.26"
	for _, cr := range classaudit.Audit(a).Classes {
		for _, it := range cr.Items {
			if it.Verdict == classaudit.Lost && !strings.Contains(it.How, "no laraworker bridge is installed") && (it.Name == "failed()" || it.Name == "WithoutOverlapping") {
				t.Errorf("%s %s: %q does not say the bridge is missing", cr.Class, it.Name, it.How)
			}
		}
	}
}

// TestAuditPropertyRisks: audit names each property whose values a Go
// type other than gen's fails on, and why, for the test app's classes as
// its PHP declares them: a plain Collection holding User::all() (a
// ModelIdentifier, as Firefly III's DownloadExchangeRates queues its
// users), a date the constructor may leave unset, models and collections
// of a class without SerializesModels (whole); the others carry no risk.
func TestAuditPropertyRisks(t *testing.T) {
	phptest.NeedPHP(t)
	a, err := phpclass.Reflect(context.Background(), phpclass.Options{AppDir: phptest.CopyApp(t),
		Classes: []string{`App\Jobs\Shapes\ExchangeRatesJob`, `App\Jobs\Shapes\WholeModelsJob`, `App\Jobs\ModelsJob`}})
	if err != nil {
		t.Fatal(err)
	}
	risks := map[string]string{}
	how := map[string]string{}
	for _, cr := range classaudit.Audit(a).Classes {
		for _, it := range cr.Items {
			if it.Area == "property" {
				risks[cr.Class[strings.LastIndexByte(cr.Class, '\\')+1:]+"."+it.Name] = it.Risk
				how[cr.Class[strings.LastIndexByte(cr.Class, '\\')+1:]+"."+it.Name] = it.How
			}
		}
	}
	for prop, want := range map[string]string{
		"ExchangeRatesJob.$users":   "a collection of Eloquent models (User::all(), a query's get()) arrives as a ModelIdentifier of their class and keys",
		"ExchangeRatesJob.$tags":    "a slice or map field fails on the first, a payload.ModelIdentifier on the second",
		"ExchangeRatesJob.$since":   "a job may leave it out (uninitialised: the constructor does not always set it)",
		"WholeModelsJob.$podcast":   "the model arrives whole, not as a ModelIdentifier (the class does not use SerializesModels)",
		"WholeModelsJob.$users":     "the collection arrives whole",
		"ExchangeRatesJob.$status":  "",
		"ExchangeRatesJob.$podcast": "",
		"ExchangeRatesJob.$nobody":  "",
		"ModelsJob.$podcast":        "",
		"ModelsJob.$users":          "",
	} {
		got, ok := risks[prop]
		if !ok || (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%s: risk %q, want one with %q", prop, got, want)
		}
	}
	if h := how["ExchangeRatesJob.$users"]; !strings.HasPrefix(h, "decoded as payload.Collection. ") || !strings.Contains(h, "Go might not decode it in another type: ") {
		t.Errorf("$users: %q", h)
	}
	if h := how["ExchangeRatesJob.$since"]; !strings.HasPrefix(h, "decoded as *time.Time. Go might not decode it in another type: a job may leave it out") {
		t.Errorf("$since: %q", h)
	}
}

// TestAuditNamesQueueAttributes: Laravel 13's queue attributes, as the
// app's PHP reflects them, each named with who does it in Go: the payload
// options Go applies, the dispatch-side ones PHP does, #[DebounceFor]
// that Go honours from the payload's id, or when the registration declares
// what debounceId() and debounceVia() compute. On this app's Laravel 8.83
// none is read: the audit says PHP ignores them.
func TestAuditNamesQueueAttributes(t *testing.T) {
	phptest.NeedPHP(t)
	a, err := phpclass.Reflect(context.Background(), phpclass.Options{AppDir: phptest.CopyApp(t),
		Classes: []string{`App\Jobs\Audit\AttributesJob`, `App\Jobs\Audit\DebouncedJob`, `App\Jobs\Audit\DebouncedViaJob`}})
	if err != nil {
		t.Fatal(err)
	}
	attrs := func(cr classaudit.ClassReport) []string {
		var out []string
		for _, it := range cr.Items {
			if it.Area == "attribute" {
				out = append(out, it.Name+"="+string(it.Verdict))
			}
		}
		return out
	}
	r := classaudit.Audit(a)
	for _, cr := range r.Classes {
		for _, it := range cr.Items {
			if it.Area == "attribute" && (it.Verdict != classaudit.Go || !strings.Contains(it.How, "Laravel 8.83")) {
				t.Errorf("%s %s on 8.83: %+v", cr.Class, it.Name, it)
			}
		}
	}
	a.Version = "13.26.1" // the same classes on a 13.26 app
	r = classaudit.Audit(a)
	want := map[string][]string{
		`App\Jobs\Audit\AttributesJob`: {"#[Backoff]=go", "#[Connection]=php", "#[Delay]=php", "#[FailOnTimeout]=go", "#[MaxExceptions]=go",
			"#[Queue]=php", "#[Timeout]=go", "#[Tries]=go", "#[UniqueFor]=php", "#[WithoutRelations]=go"},
		`App\Jobs\Audit\DebouncedJob`:    {"#[DebounceFor]=go"},
		`App\Jobs\Audit\DebouncedViaJob`: {"#[DebounceFor]=go-declared"},
	}
	for _, cr := range r.Classes {
		if got := attrs(cr); !slices.Equal(got, want[cr.Class]) {
			t.Errorf("%s:\n got %q\nwant %q", cr.Class, got, want[cr.Class])
		}
		for _, it := range cr.Items {
			switch it.Name {
			case "#[Backoff]":
				if it.Declared != "#[Backoff(1, 5)]" {
					t.Errorf("declared %q", it.Declared)
				}
			case "#[DebounceFor]":
				if cr.Class == `App\Jobs\Audit\DebouncedJob` && it.Declared != "#[DebounceFor(3, maxWait: 30)]" {
					t.Errorf("declared %q", it.Declared)
				}
				if cr.Class == `App\Jobs\Audit\DebouncedViaJob` && (!strings.Contains(it.How, "handlers.DebounceID") || !strings.Contains(it.How, "handlers.DebounceVia")) {
					t.Errorf("DebouncedViaJob: %s", it.How)
				}
			}
		}
	}
}
