// Package docs holds the project's documentation and the tests that keep
// it honest: every measured figure that README.md and docs/*.md quote comes
// from docs/figures.json (its value, unit, and the run that measured it:
// date, commit, load, command), and every path or link a document cites
// exists in the repository. There is no code here; see figures_test.go and
// links_test.go.
package docs
