package dashboard

import "github.com/laraworker/laraworker/dashboard/snapshot"

// The names the background reader had when it lived in this package.

// Snapshot is snapshot.Snapshot.
//
// Deprecated: use snapshot.Snapshot (package dashboard/snapshot).
type Snapshot = snapshot.Snapshot

// Summary is snapshot.Summary.
//
// Deprecated: use snapshot.Summary (package dashboard/snapshot).
type Summary = snapshot.Summary

// Tables is snapshot.Tables.
//
// Deprecated: use snapshot.Tables (package dashboard/snapshot).
type Tables = snapshot.Tables
