package snapshot

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/laraworker/laraworker/internal/fleet"
)

// What the statements on jobs and failed_jobs share.

// prefixLen is how much of a payload the caches read: enough for the
// uuid and displayName Laravel writes first.
const prefixLen = 400

// modelsCol is the whole payload of a row whose command holds a model
// (its tags), null for the others.
func modelsCol(d fleet.Dialect, payload string) string {
	return fmt.Sprintf("case when %s like '%%%s%%' then %s end", d.Quote(payload), modelMarker, d.Quote(payload))
}

// payloadsByID reads whole payloads by id from table (quoted), 200 ids a
// statement.
func payloadsByID(ctx context.Context, db *sql.DB, d fleet.Dialect, table string, ids []int64) (map[int64][]byte, error) {
	out := map[int64][]byte{}
	for len(ids) > 0 {
		n := min(len(ids), 200)
		rows, err := db.QueryContext(ctx, d.Rebind(fmt.Sprintf("select %s, %s from %s where %s in (%s)",
			d.Quote("id"), d.Quote("payload"), table, d.Quote("id"), placeholders(n))), int64Args(ids[:n])...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id int64
			var p []byte
			if err := rows.Scan(&id, &p); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = p
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		ids = ids[n:]
	}
	return out, nil
}

func placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

func int64Args(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}
