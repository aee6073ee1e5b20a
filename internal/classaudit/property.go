package classaudit

import (
	"github.com/laraworker/laraworker/internal/jobgen"
	"github.com/laraworker/laraworker/internal/phpclass"
)

// propertyItem says what a data property's values are in Go: the type gen
// writes for it, which decodes every value the declaration admits as
// Laravel serializes it, and, where a plainer Go type would fail on some
// of those values, which and why (Item.Risk). omitsDefaults: Laravel 9.4+
// leaves a property out while it holds its default.
func propertyItem(c *phpclass.Class, p phpclass.Property, omitsDefaults bool) Item {
	gt := jobgen.TypeIn(c, p)
	it := Item{Area: "property", Name: "$" + p.Name, Declared: declaration(p), Verdict: Go, How: "decoded as " + gt.Expr, Risk: gt.Risk}
	if gt.Note != "" && gt.Risk == "" {
		it.How += " (" + gt.Note + ")" // a risk says it all, and more
	}
	if gt.Lost {
		it.Verdict = Lost
		it.How = "a PHP closure: Go can read it but never run it"
	}
	switch {
	case p.HasDefault && !p.DefaultJSONOK && omitsDefaults:
		it.How += "; left out of the payload while it holds its default " + p.DefaultPHP + ", which JSON cannot say (gen tags default_php=)"
	case p.HasDefault && omitsDefaults:
		it.How += "; left out of the payload while it holds its default (gen tags default=)"
	}
	if !omitsDefaults && p.HasDefault && !p.DefaultJSONOK {
		it.Risk = "" // before 9.4 every property is in the payload
	}
	if it.Risk != "" {
		it.How += ". Go might not decode it in another type: " + it.Risk
	}
	return it
}
