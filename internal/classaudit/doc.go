// Package classaudit says, for each thing a Laravel job class declares
// (properties, queue options, contracts, hooks, middleware, models), who
// does it once the class runs in Go: Go, Go sharing state with PHP, PHP
// through the laraworker bridge, or nobody ("will not carry over"). Its
// input is what package phpclass read of the class through the app's PHP.
package classaudit
