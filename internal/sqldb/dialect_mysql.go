package sqldb

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/go-sql-driver/mysql"
	"github.com/laraworker/laraworker/laravel/appconfig"
)

// mysqlDialect covers MySQL and MariaDB (one PDO driver in Laravel too).
type mysqlDialect struct{}

func (mysqlDialect) Name() string               { return appconfig.EngineMySQL }
func (mysqlDialect) Quote(ident string) string  { return quoteWith(ident, '`') }
func (mysqlDialect) Rebind(query string) string { return query }
func (mysqlDialect) ForUpdate() string          { return "for update" }
func (mysqlDialect) ReturningID() string        { return "" }
func (mysqlDialect) ServerVersionQuery() string { return "select version()" }
func (mysqlDialect) DeleteLimited(table, where string, n int) string {
	return fmt.Sprintf("delete from %s where %s limit %d", quoteWith(table, '`'), where, n)
}

// TxOptions: READ COMMITTED keeps InnoDB from taking gap/next-key locks on
// the queue index during the claim scan, which under REPEATABLE READ makes
// concurrent claimers and pushers deadlock far more often.
func (mysqlDialect) TxOptions() *sql.TxOptions {
	return &sql.TxOptions{Isolation: sql.LevelReadCommitted}
}

// CreateTables renders Laravel's migrations (stubs jobs/failed_jobs/
// batches) as MySqlGrammar compiles them with the skeleton's default
// charset/collation, made idempotent with "if not exists" and inline
// indexes (MySQL has no "create index if not exists").
func (d mysqlDialect) CreateTables(t Tables) []string {
	const tail = " default character set utf8mb4 collate 'utf8mb4_unicode_ci'"
	q := d.Quote
	attempts, connQueue, failedIndex := "tinyint unsigned", "`connection` text not null, `queue` text not null, ", ""
	if t.Shape.SmallAttempts {
		attempts = "smallint unsigned"
	}
	if t.Shape.IndexedFailed {
		connQueue = "`connection` varchar(255) not null, `queue` varchar(255) not null, "
		failedIndex = ", index " + q(IndexName(LastPart(t.Failed), failedIndexColumns, "index")) + "(`connection`, `queue`, `failed_at`)"
	}
	return []string{
		"create table if not exists " + q(t.Jobs) + " (" +
			"`id` bigint unsigned not null auto_increment primary key, " +
			"`queue` varchar(255) not null, " +
			"`payload` longtext not null, " +
			"`attempts` " + attempts + " not null, " +
			"`reserved_at` int unsigned null, " +
			"`available_at` int unsigned not null, " +
			"`created_at` int unsigned not null, " +
			"index " + q(IndexName(LastPart(t.Jobs), "queue", "index")) + "(`queue`))" + tail,
		"create table if not exists " + q(t.Failed) + " (" +
			"`id` bigint unsigned not null auto_increment primary key, " +
			"`uuid` varchar(255) not null, " +
			connQueue +
			"`payload` longtext not null, " +
			"`exception` longtext not null, " +
			"`failed_at` timestamp default CURRENT_TIMESTAMP not null, " +
			"unique " + q(IndexName(LastPart(t.Failed), "uuid", "unique")) + "(`uuid`)" + failedIndex + ")" + tail,
		"create table if not exists " + q(t.Batches) + " (" +
			"`id` varchar(255) not null, " +
			"`name` varchar(255) not null, " +
			"`total_jobs` int not null, " +
			"`pending_jobs` int not null, " +
			"`failed_jobs` int not null, " +
			"`failed_job_ids` longtext not null, " +
			"`options` mediumtext null, " +
			"`cancelled_at` int null, " +
			"`created_at` int not null, " +
			"`finished_at` int null, " +
			"primary key (`id`))" + tail,
	}
}

func (mysqlDialect) Classify(err error) ErrorClass {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		switch me.Number {
		case 1213, // ER_LOCK_DEADLOCK (also Galera/WSREP conflicts)
			1205, // ER_LOCK_WAIT_TIMEOUT
			1020: // ER_CHECKREAD: "Record has changed since last read" (MariaDB)
			return ErrRetryable
		case 2006, 2013, 1053, 1927: // gone away, lost, shutdown, connection killed
			return ErrLostConnection
		}
		if me.SQLState == [5]byte{'4', '0', '0', '0', '1'} {
			return ErrRetryable
		}
		return messageClass(err)
	}
	if errors.Is(err, mysql.ErrInvalidConn) || commonLostConnection(err) {
		return ErrLostConnection
	}
	return messageClass(err)
}

// IsOutOfRange: ER_WARN_DATA_OUT_OF_RANGE (strict mode) and
// ER_DATA_OUT_OF_RANGE (unsigned arithmetic).
func (mysqlDialect) IsOutOfRange(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1264 || me.Number == 1690)
}

func (mysqlDialect) IsUniqueViolation(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && me.Number == 1062
}
