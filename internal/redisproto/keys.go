package redisproto

import (
	"fmt"
	"strings"
)

// Keys are the four Redis keys of one queue, prefixed as the PHP client
// sends them: <prefix>queues:<name>, and its :delayed, :reserved and
// :notify companions.
type Keys struct {
	// Ready is the list of jobs ready to run (RPUSH, LPOP).
	Ready string
	// Delayed is the sorted set of delayed and released jobs, scored by
	// the Unix second they become ready.
	Delayed string
	// Reserved is the sorted set of running jobs, scored by the Unix
	// second their reservation expires; the member is the reserved copy.
	Reserved string
	// Notify is the list of "1" tokens that wakes blocking pops.
	Notify string
}

// Keys returns the keys of queue ("" is the connection's default queue).
func (c Config) Keys(queue string) Keys {
	base := c.Redis.Prefix + "queues:" + c.keyName(c.queueName(queue))
	return Keys{Ready: base, Delayed: base + ":delayed", Reserved: base + ":reserved", Notify: base + ":notify"}
}

// queueKeys are a queue's name (the default's for ""), its keys and
// CheckQueue's verdict on them.
type queueKeys struct {
	name string
	Keys
	err error
}

// maxCachedQueues bounds Queue.keys's cache: a worker uses a few queues,
// the dashboard and the CLI may name any number.
const maxCachedQueues = 1024

// keys returns a queue's queueKeys, worked out once per queue: each push,
// pop, delete, release and wait needs them, and building them again was
// four calls and four new strings each time. The inspections that take
// any queue name (classes, move, bulk pushes) build theirs.
func (q *Queue) keys(queue string) *queueKeys {
	if k, ok := q.keyCache.Load(queue); ok {
		return k.(*queueKeys)
	}
	name := q.cfg.queueName(queue)
	k := &queueKeys{name: name, Keys: q.cfg.Keys(name), err: q.cfg.CheckQueue(name)}
	if q.cached.Add(1) <= maxCachedQueues {
		q.keyCache.Store(queue, k)
	}
	return k
}

// queueName is RedisQueue::getQueue's name: the queue, else the default.
func (c Config) queueName(queue string) string {
	if queue == "" {
		return c.Queue
	}
	return queue
}

// keyName is the name as it appears in the key: wrapped in braces on a
// cluster from Laravel 13.5 (getQueueRedisKey) when it has no hash tag.
func (c Config) keyName(name string) string {
	if c.HashTagQueues && c.Redis.Cluster && !HasHashTag(name) {
		return "{" + name + "}"
	}
	return name
}

// HasHashTag is Laravel's Connection::hasHashTag: a "{", a later "}" and
// at least one byte between them.
func HasHashTag(key string) bool {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return false
	}
	closing := strings.IndexByte(key[open+1:], '}')
	return closing > 0
}

// all lists the keys in a fixed order.
func (k Keys) all() []string { return []string{k.Ready, k.Delayed, k.Reserved, k.Notify} }

// CheckQueue reports whether queue can be used on this connection: on a
// cluster every script touches all four keys of a queue, which Redis
// allows only when they hash to one slot (else every pop fails with
// CROSSSLOT, as it does for PHP). The error names the fix.
func (c Config) CheckQueue(queue string) error {
	if !c.Redis.Cluster {
		return nil
	}
	k := c.Keys(queue)
	slot := Slot(k.Ready)
	for _, key := range k.all()[1:] {
		if Slot(key) != slot {
			return fmt.Errorf("redisqueue: on a Redis Cluster the keys of queue %q hash to different slots; name the queue with a hash tag as Laravel documents (e.g. {%s}), or run Laravel 13.5+ which adds one", c.queueName(queue), c.queueName(queue))
		}
	}
	return nil
}

// sameSlot reports whether every key hashes to one cluster slot (always
// true off a cluster, where a script may touch any keys).
func (c Config) sameSlot(keys ...string) bool {
	if !c.Redis.Cluster || len(keys) == 0 {
		return true
	}
	slot := Slot(keys[0])
	for _, k := range keys[1:] {
		if Slot(k) != slot {
			return false
		}
	}
	return true
}

// Slot is the Redis Cluster hash slot of key: CRC16 (XMODEM) of the key,
// or of its hash tag (the bytes between the first "{" and the next "}",
// when not empty), modulo 16384.
func Slot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if closing := strings.IndexByte(key[open+1:], '}'); closing > 0 {
			key = key[open+1 : open+1+closing]
		}
	}
	return int(crc16(key) % 16384)
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial 0), the checksum
// Redis Cluster's key distribution is defined with.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
