package sqldb

import (
	"fmt"
	"strconv"
	"time"
)

// ToInt64 reads an integer column whatever type the driver scanned it as.
func ToInt64(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int:
		return int64(x), nil
	case uint64:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case float64:
		return int64(x), nil
	case []byte:
		return strconv.ParseInt(string(x), 10, 64)
	case string:
		return strconv.ParseInt(x, 10, 64)
	case nil:
		return 0, nil
	}
	return 0, fmt.Errorf("unexpected type %T", v)
}

// ToNullInt64 is ToInt64 for a nullable column (nil for NULL).
func ToNullInt64(v any) (*int64, error) {
	if v == nil {
		return nil, nil
	}
	n, err := ToInt64(v)
	return &n, err
}

// ToString reads a text column; a timestamp without zone reads as its wall
// clock, as stored.
func ToString(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case time.Time:
		// timestamp columns without zone: the wall clock is what was stored.
		return x.Format(time.DateTime)
	}
	return fmt.Sprint(v)
}

// ScannedBytes is ToBytes for a value Scan stored in an *any: database/sql
// already copied the driver's bytes there, so they are not copied again.
func ScannedBytes(v any) []byte {
	switch x := v.(type) {
	case []byte:
		return x
	case string: // SQLite's TEXT
		return []byte(x)
	}
	return ToBytes(v)
}

// ToBytes copies a text or blob column's bytes.
func ToBytes(v any) []byte {
	switch x := v.(type) {
	case nil:
		return nil
	case []byte:
		return append([]byte(nil), x...)
	case string:
		return []byte(x)
	}
	return []byte(fmt.Sprint(v))
}
