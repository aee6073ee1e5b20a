// Package sqlstmt is package store/database's statement catalogue: every SQL
// statement the database queue runs, rendered for one dialect and one set
// of table names by a Statements value. Laravel's own statements
// (DatabaseQueue, DatabaseUuidFailedJobProvider, DatabaseBatchRepository)
// are in statements.go, the claims outside --laravel-exact in claim.go,
// the claim index's DDL in index.go, laraworker move's in move.go.
//
// Statements only render text: values are always bound as parameters by
// the caller, never written into a statement (reliability's
// TestSQLCallSitesUseTheCatalogue checks store/database's call sites take their
// queries from here). Catalogue lists them all with representative
// parameters; store/database's TestSQLDoc renders that list into store/database/SQL.md
// and fails when the file and the code disagree.
package sqlstmt
