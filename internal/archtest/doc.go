// Package archtest holds the import check of the module's layers: its
// test lists which group of packages may import which (layers.go) and
// fails when a package imports outside what its group may, so the seams
// between the vocabulary, the stores, the engine, the operations tools
// and the CLI stay where the tree puts them. `go test ./...` runs it.
package archtest
