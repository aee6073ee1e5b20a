// Package classcmd holds the commands that read PHP job classes through
// the app's own PHP: audit (what of each class carries over to Go) and gen
// (the Go struct and handler skeleton of a class).
package classcmd
