package classaudit

// Verdict is who does an item when the class runs in Go.
type Verdict string

const (
	// Go does it from the payload or the class's registration.
	Go Verdict = "go"
	// GoDeclared: Go does it when the Go registration declares it
	// (laraworker gen writes the declaration); a --route handler cannot.
	GoDeclared Verdict = "go-declared"
	// Shared: Go does it with Laravel's own keys on the app's cache, so
	// PHP and Go share one lock or one budget while both run the class.
	Shared Verdict = "shared"
	// Bridge: PHP does it, through the bridge's hook jobs, at the moment
	// Laravel would.
	Bridge Verdict = "php-bridge"
	// PHP: the job (or this part of it) stays on PHP; nothing is lost.
	PHP Verdict = "php"
	// Lost: nobody does it once the class runs in Go.
	Lost Verdict = "lost"
)

// Text is the verdict as the table prints it.
func (v Verdict) Text() string {
	switch v {
	case Go:
		return "Go"
	case GoDeclared:
		return "Go, when declared"
	case Shared:
		return "Go, shared with PHP"
	case Bridge:
		return "PHP through the bridge"
	case PHP:
		return "PHP"
	case Lost:
		return "will not carry over"
	}
	return string(v)
}

// Item is one thing a class declares and who does it in Go.
type Item struct {
	// Area groups items: property, option, attribute, contract, trait,
	// model, hook, middleware, class.
	Area string `json:"area"`
	// Name is the item as PHP names it ($podcast, tries, failed(),
	// WithoutOverlapping...).
	Name string `json:"name"`
	// Declared is what the class declares (a type, a value, source).
	Declared string  `json:"declared"`
	Verdict  Verdict `json:"verdict"`
	// How says who does what, or why nobody can.
	How string `json:"how"`
	// When is set for an item that matters only in some uses of the class
	// (in a chain with catch()); such a loss does not fail the audit.
	When string `json:"when,omitempty"`
	// Risk, for a property, names values a Go type other than the one
	// How gives (and gen writes) fails to decode, and why: a collection
	// that arrives as a ModelIdentifier, a model that arrives whole, a
	// property a job may leave out.
	Risk string `json:"risk,omitempty"`
}

// Lost reports an unconditional loss.
func (i Item) Lost() bool { return i.Verdict == Lost && i.When == "" }
