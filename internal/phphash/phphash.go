// Package phphash is PHP's md5() and hash('xxh128', ...) as lowercase
// hex, the forms Laravel's lock and rate-limiter keys are built with.
package phphash

import (
	"crypto/md5"
	"encoding/hex"

	"github.com/zeebo/xxh3"
)

// MD5 is PHP's md5($s).
func MD5(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// XXH128 is PHP's hash('xxh128', $s).
func XXH128(s string) string {
	b := xxh3.HashString128(s).Bytes()
	return hex.EncodeToString(b[:])
}
