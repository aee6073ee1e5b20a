package appconfig

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// This file reads, without PHP, what a queue connection with driver
// "redis" is served from: the config arrays as config() would return
// them, when every part of them is something Go evaluates.

// redisQueueFromFiles fills info.RedisQueue from the config files (or
// the cached config) for the served connection, or warns that they say it
// in a way Go does not evaluate.
func (f *appFiles) redisQueueFromFiles(store string) {
	queue, ok1 := f.array("queue.connections." + f.info.Connection)
	redis, ok2 := f.array("database.redis")
	cacheStore, _ := f.array("cache.stores." + store)
	if !ok1 || !ok2 {
		f.info.Warnings = append(f.info.Warnings, "the redis queue connection's config (config/queue.php, config/database.php's redis) could not be read without php: run laraworker where the app's php is, or simplify those arrays")
		return
	}
	_, err := os.Stat(filepath.Join(f.dir, "vendor", "laravel", "horizon"))
	f.info.RedisQueue = &RedisQueueConfig{Queue: queue, Redis: redis, CacheStore: cacheStore, Horizon: err == nil}
	if err == nil {
		f.info.RedisQueue.HorizonConfig = f.horizonConfig()
	}
}

// beanstalkdQueueFromFiles fills info.BeanstalkdQueue from the config
// files (or the cached config) for the served connection, or warns that
// they say it in a way Go does not evaluate.
func (f *appFiles) beanstalkdQueueFromFiles() {
	queue, ok := f.array("queue.connections." + f.info.Connection)
	if !ok {
		f.info.Warnings = append(f.info.Warnings, "the beanstalkd queue connection's config (config/queue.php) could not be read without php: run laraworker where the app's php is, or simplify that array")
		return
	}
	f.info.BeanstalkdQueue = queue
}

// sqsQueueFromFiles fills info.SQSQueue from the config files (or the
// cached config) for the served connection, or warns that they say it in
// a way Go does not evaluate. Vapor is laravel/vapor-core installed
// (Composer's package discovery registers its provider).
func (f *appFiles) sqsQueueFromFiles() {
	queue, ok := f.array("queue.connections." + f.info.Connection)
	if !ok {
		f.info.Warnings = append(f.info.Warnings, "the sqs queue connection's config (config/queue.php) could not be read without php: run laraworker where the app's php is, or simplify that array")
		return
	}
	_, err := os.Stat(filepath.Join(f.dir, "vendor", "laravel", "vapor-core"))
	f.info.SQSQueue = &SQSQueueConfig{Queue: queue, Vapor: err == nil}
}

// sharedRedisFromFiles fills info.SharedRedis from the config files (or
// the cached config): database.redis, and the default cache store's array
// when its driver is redis. Only a redis cache store Go cannot read is
// worth a warning (beside a database queue: a redis one has warned
// already); without it the connections serve the ...WithRedis middleware
// alone, which go back to PHP when they are not known.
func (f *appFiles) sharedRedisFromFiles(store string, redisStore bool) {
	redis, ok := f.array("database.redis")
	var cacheStore map[string]any
	okStore := true
	if redisStore {
		cacheStore, okStore = f.array("cache.stores." + store)
	}
	if redisStore && (!ok || !okStore) && f.info.QueueDriver != "redis" {
		f.info.Warnings = append(f.info.Warnings, "the redis cache store's config (config/cache.php's store, config/database.php's redis) could not be read without php: queue:restart, maxExceptions, unique locks and job middleware state are not shared with PHP; run laraworker where the app's php is, or simplify those arrays")
	}
	if !ok {
		return
	}
	if !okStore {
		cacheStore = nil
	}
	f.info.SharedRedis = &SharedRedisConfig{Redis: redis, CacheStore: cacheStore}
}

// markServerList tells redisSettings when the lock connection is a list
// of servers in the files (Redis Sentinel): REDIS_HOST then says nothing
// about where it is.
func (f *appFiles) markServerList(values map[string]string) {
	if f.info.SharedRedis == nil {
		return
	}
	name := orDefault(values["REDIS_CACHE_LOCK_CONNECTION"], "default")
	switch conn := f.info.SharedRedis.Redis[name].(type) {
	case []any:
		values[lockConnectionServers] = name
	case map[string]any:
		if _, list := conn["0"]; list {
			values[lockConnectionServers] = name
		}
	}
}

// horizonConfig is config('horizon')'s prefix, use, trim, silenced, env,
// environments (with "environment_keys", their order) and defaults, and
// config('app.env') as "app_env", as far as the files say them in a way
// Go evaluates; a part that is not is left out (Horizon's default then
// applies) and warned about.
// Horizon merges its own config/horizon.php under the app's
// (mergeConfigFrom: the app's top-level keys win), so a key the app's
// file does not set comes from the package's.
func (f *appFiles) horizonConfig() map[string]any {
	out := map[string]any{}
	var vendor *phpNode
	if f.cached == nil {
		vendor = f.vendorHorizon()
	}
	for _, key := range []string{"prefix", "use", "trim", "silenced", "env", "environments", "defaults"} {
		n := f.node("horizon." + key)
		if n == nil && vendor != nil {
			n = vendor.lookup(key)
		}
		if n == nil {
			continue
		}
		if v, ok := n.toAny(f.env); ok {
			out[key] = v
		} else {
			f.info.Warnings = append(f.info.Warnings, "config('horizon."+key+"') could not be read without php; Horizon's records use its default (and --horizon-supervisor cannot read it): run laraworker where the app's php is, or simplify it")
			continue
		}
		if key == "environments" {
			out["environment_keys"] = n.keyOrder()
		}
	}
	if v, ok := f.node("app.env").toAny(f.env); ok && v != nil {
		out["app_env"] = v
	}
	return out
}

// keyOrder is an array node's keys in PHP's order (a key's first place),
// as strings.
func (n *phpNode) keyOrder() []any {
	var out []any
	seen := map[string]bool{}
	next := int64(0)
	for _, key := range n.keys {
		name := key.String()
		if key.Kind == kindNull {
			name = strconv.FormatInt(next, 10)
			next++
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}

// vendorHorizon is laravel/horizon's own config/horizon.php.
func (f *appFiles) vendorHorizon() *phpNode {
	src, err := os.ReadFile(filepath.Join(f.dir, "vendor", "laravel", "horizon", "config", "horizon.php"))
	if err != nil {
		return nil
	}
	n, err := parsePHPConfig(string(src))
	if err != nil {
		return nil
	}
	return n
}

// node is the config file's node at a dotted key (nil when absent).
func (f *appFiles) node(key string) *phpNode {
	path := strings.Split(key, ".")
	if f.cached != nil {
		return f.cached.lookup(path...)
	}
	if root := f.file(path[0]); root != nil {
		return root.lookup(path[1:]...)
	}
	return nil
}

// array evaluates the config array at a dotted key.
func (f *appFiles) array(key string) (map[string]any, bool) {
	path := strings.Split(key, ".")
	var n *phpNode
	if f.cached != nil {
		n = f.cached.lookup(path...)
	} else if root := f.file(path[0]); root != nil {
		n = root.lookup(path[1:]...)
	}
	v, ok := n.toAny(f.env)
	m, isMap := v.(map[string]any)
	if list, isList := v.([]any); isList && len(list) == 0 {
		m, isMap = map[string]any{}, true
	}
	return m, ok && isMap
}

// toAny is the value config() returns, as JSON decodes it: arrays with
// keys 0..n-1 in order as []any, other arrays as map[string]any, numbers
// as float64. ok is false when any part is not understood.
func (n *phpNode) toAny(env phpEnv) (any, bool) {
	if n == nil {
		return nil, false
	}
	if n.kind != "array" {
		v := n.eval(env)
		switch v.Kind {
		case kindNull:
			return nil, true
		case kindBool:
			return v.Bool, true
		case kindInt:
			return float64(v.Int), true
		case kindFloat:
			f, err := strconv.ParseFloat(v.Str, 64)
			return f, err == nil
		case kindString:
			return v.Str, true
		}
		return nil, false
	}
	keys := make([]string, 0, len(n.items))
	values := map[string]any{}
	next := int64(0)
	for i, item := range n.items {
		key := n.keys[i]
		var name string
		switch key.Kind {
		case kindNull:
			name = strconv.FormatInt(next, 10)
			next++
		case kindInt:
			name = strconv.FormatInt(key.Int, 10)
			next = max(next, key.Int+1)
		case kindString:
			name = key.Str
			if k, err := strconv.ParseInt(name, 10, 64); err == nil && strconv.FormatInt(k, 10) == name {
				next = max(next, k+1) // PHP makes "1" the integer key 1
			}
		default:
			return nil, false
		}
		v, ok := item.toAny(env)
		if !ok {
			return nil, false
		}
		if _, dup := values[name]; !dup {
			keys = append(keys, name)
		}
		values[name] = v
	}
	for i, k := range keys {
		if k != strconv.Itoa(i) {
			return values, true
		}
	}
	list := make([]any, len(keys))
	for i, k := range keys {
		list[i] = values[k]
	}
	return list, true
}
