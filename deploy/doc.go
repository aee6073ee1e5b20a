// Package deploy holds no code: it ships the files that run laraworker in
// production (a systemd unit, a supervisor program), and its tests check
// them with the tools that will read them.
package deploy
