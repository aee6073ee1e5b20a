package payload

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/laraworker/laraworker/internal/phpjson"
)

// ErrMalformedUTF8 is json_encode's error for a string that is not valid
// UTF-8; BuildObjectPayload fails with it where PHP's dispatch would.
var ErrMalformedUTF8 = phpjson.ErrMalformedUTF8

// jsonNode is a JSON document decoded with its key order kept, as PHP's
// json_decode($raw, true) sees it.
type jsonNode struct {
	kind   byte // 'o' object, 'a' array, 's' string, 'n' number, 'b' bool, 'z' null
	keys   []string
	vals   []*jsonNode
	str    string
	num    json.Number
	truthy bool
}

func decodeOrdered(raw []byte) (*jsonNode, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := readNode(dec)
	if err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON document")
	}
	return n, nil
}

func readNode(dec *json.Decoder) (*jsonNode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return readObject(dec)
		}
		return readArray(dec)
	case string:
		return &jsonNode{kind: 's', str: t}, nil
	case json.Number:
		return &jsonNode{kind: 'n', num: t}, nil
	case bool:
		return &jsonNode{kind: 'b', truthy: t}, nil
	default:
		return &jsonNode{kind: 'z'}, nil
	}
}

func readObject(dec *json.Decoder) (*jsonNode, error) {
	n := &jsonNode{kind: 'o'}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		v, err := readNode(dec)
		if err != nil {
			return nil, err
		}
		n.set(key, v)
	}
	_, err := dec.Token()
	return n, err
}

func readArray(dec *json.Decoder) (*jsonNode, error) {
	n := &jsonNode{kind: 'a'}
	for dec.More() {
		v, err := readNode(dec)
		if err != nil {
			return nil, err
		}
		n.vals = append(n.vals, v)
	}
	_, err := dec.Token()
	return n, err
}

// set replaces key in place (PHP keeps the first position of a repeated
// key and the last value), or appends it.
func (n *jsonNode) set(key string, v *jsonNode) {
	for i, k := range n.keys {
		if k == key {
			n.vals[i] = v
			return
		}
	}
	n.keys = append(n.keys, key)
	n.vals = append(n.vals, v)
}

func (n *jsonNode) get(key string) *jsonNode {
	for i, k := range n.keys {
		if k == key {
			return n.vals[i]
		}
	}
	return nil
}

// encodePHP writes the node as json_encode($decoded) would after PHP's
// json_decode($raw, true): objects become arrays, so an empty object comes
// out as [] and an object whose keys are 0..n-1 comes out as a list.
func (n *jsonNode) encodePHP(dst []byte, flags phpjson.Flags) ([]byte, error) {
	var err error
	switch n.kind {
	case 'z':
		return append(dst, "null"...), nil
	case 'b':
		return strconv.AppendBool(dst, n.truthy), nil
	case 's':
		return phpjson.AppendString(dst, n.str, flags)
	case 'n':
		return appendPHPNumber(dst, n.num)
	case 'a':
		return encodeList(dst, n.vals, flags)
	}
	if n.isPHPList() {
		return encodeList(dst, n.vals, flags)
	}
	dst = append(dst, '{')
	for i, k := range n.keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = phpjson.AppendString(dst, k, flags); err != nil {
			return nil, err
		}
		dst = append(dst, ':')
		if dst, err = n.vals[i].encodePHP(dst, flags); err != nil {
			return nil, err
		}
	}
	return append(dst, '}'), nil
}

func encodeList(dst []byte, vals []*jsonNode, flags phpjson.Flags) ([]byte, error) {
	var err error
	dst = append(dst, '[')
	for i, v := range vals {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, err = v.encodePHP(dst, flags); err != nil {
			return nil, err
		}
	}
	return append(dst, ']'), nil
}

// isPHPList reports whether a decoded object's keys are exactly "0".."n-1"
// in order, which PHP's assoc arrays cannot tell from a list.
func (n *jsonNode) isPHPList() bool {
	for i, k := range n.keys {
		if k != strconv.Itoa(i) {
			return false
		}
	}
	return true
}

// appendPHPNumber keeps integers as PHP would (floats beyond int64 become
// PHP floats) and re-formats floats as json_encode does.
func appendPHPNumber(dst []byte, num json.Number) ([]byte, error) {
	if i, err := strconv.ParseInt(string(num), 10, 64); err == nil {
		return strconv.AppendInt(dst, i, 10), nil
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return nil, fmt.Errorf("invalid number %s", num)
	}
	return phpjson.AppendFloat(dst, f)
}

// ReencodeLikeRetry returns the payload as `php artisan queue:retry` writes
// it back: json_decode($raw, true) then json_encode with no flags, so
// non-ASCII becomes \uXXXX and {} becomes [], and a (Redis-style) attempts
// key is reset to 0. retryUntil, when not nil,
// replaces payload.retryUntil (refreshRetryUntil).
func ReencodeLikeRetry(raw []byte, retryUntil *int64) ([]byte, error) {
	root, err := decodeOrdered(raw)
	if err != nil {
		return nil, fmt.Errorf("payload: invalid JSON: %w", err)
	}
	if root.kind != 'o' {
		return nil, errors.New("payload: not a JSON object")
	}
	if a := root.get("attempts"); a != nil && a.kind != 'z' {
		root.set("attempts", &jsonNode{kind: 'n', num: "0"})
	}
	if retryUntil != nil {
		root.set("retryUntil", &jsonNode{kind: 'n', num: json.Number(strconv.FormatInt(*retryUntil, 10))})
	}
	return root.encodePHP(nil, 0)
}
