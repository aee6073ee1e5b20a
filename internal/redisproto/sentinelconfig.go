package redisproto

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/laraworker/laraworker/internal/phparray"
)

// This file reads a connection of database.redis that is a list of
// servers: with predis and options.replication "sentinel", the sentinels
// of a Redis Sentinel setup (Predis\Connection\Replication\
// SentinelReplication). Laravel 8 to 13's phpredis connector has no
// Sentinel support: it reads one host.

// isServerList reports a connection written as a list of servers, as
// predis's Client::createConnection tells it (isset($parameters[0])).
func isServerList(raw any) bool {
	switch v := raw.(type) {
	case []any:
		return true
	case map[string]any:
		_, ok := v["0"]
		return ok
	}
	return false
}

// listConnection resolves database.redis.<name> written as a list of
// servers. Only predis's Sentinel replication is one Go follows; the
// other lists (predis's own master/replica replication, its client-side
// sharding, a list given to phpredis) are refused with what to do.
func listConnection(name, client string, raw any, global map[string]any) (RedisConfig, error) {
	where := "database.redis." + name
	if client != "predis" {
		return RedisConfig{}, fmt.Errorf("redisqueue: %s is a list of servers (a Sentinel or replication setup), but Laravel's phpredis connector connects to one host and has no Sentinel support (PHP cannot connect with it either); use predis with options.replication 'sentinel', or name the master's host", where)
	}
	entries, own, ownPrefix, _ := listEntries(raw)
	// PredisConnector: the global options (their "parameters" resolved
	// for this connection by RedisManager::resolve), then the list's own.
	options := merged(withoutKey(global, "parameters"), own)
	options["parameters"] = predisParameters(name, global, own)
	if ownPrefix != nil {
		options["prefix"] = ownPrefix
	}
	if err := checkSentinelReplication(options); err != nil {
		return RedisConfig{}, fmt.Errorf("redisqueue: %s: %w", where, err)
	}
	r := RedisConfig{Name: name, Client: client, Prefix: phparray.String(options["prefix"])}
	if err := r.readSentinels(entries, options); err != nil {
		return RedisConfig{}, fmt.Errorf("redisqueue: %s: %w", where, err)
	}
	if err := r.readOptions(options); err != nil {
		return RedisConfig{}, fmt.Errorf("redisqueue: %s: %w", where, err)
	}
	return r, nil
}

// checkSentinelReplication accepts the options of a Sentinel setup.
func checkSentinelReplication(options map[string]any) error {
	if _, set := options["aggregate"]; set {
		return errors.New("options.aggregate (a connection of predis built by the app's own code) is not supported")
	}
	v, set := options["replication"]
	if !set || v == nil {
		return errors.New("is a list of servers without options.replication 'sentinel' (predis then shards keys across them, or takes them for a cluster); name a cluster under database.redis.clusters, or a Sentinel setup with options.replication 'sentinel' and options.service")
	}
	switch mode := phparray.String(v); mode {
	case "sentinel", "redis-sentinel":
	default:
		return fmt.Errorf("options.replication %q (predis's own master/replica replication) is not supported; only 'sentinel' is", mode)
	}
	if phparray.String(options["service"]) == "" {
		return errors.New("options.service is not set: predis's Sentinel replication needs the name the sentinels monitor the master under")
	}
	return nil
}

// readSentinels reads the sentinels and the master's parameters: the
// master is reached with options.parameters (its password, database,
// scheme and ssl), each sentinel with its own parameters over those
// defaults, without database and with its own password only, as predis's
// createSentinelConnection does.
func (r *RedisConfig) readSentinels(entries []any, options map[string]any) error {
	defaults := asMap(options["parameters"])
	s := &SentinelConfig{Service: phparray.String(options["service"])}
	if _, _, err := r.readScheme(defaults); err != nil {
		return fmt.Errorf("options.parameters: %w", err)
	}
	if err := r.readAuth(defaults, "predis", "99"); err != nil {
		return fmt.Errorf("options.parameters: %w", err)
	}
	if r.TLS {
		opts, err := parseSSLContext("predis", asMap(defaults["ssl"]))
		if err != nil {
			return fmt.Errorf("options.parameters.ssl: %w", err)
		}
		r.TLSOptions = opts
	}
	credentials := ""
	for i, e := range entries {
		p, err := sentinelParameters(e)
		if err != nil {
			return fmt.Errorf("sentinel %d: %w", i, err)
		}
		own := phparray.String(p["password"])
		p = withDefaults(p, defaults)
		p["password"], p["database"] = own, nil
		if err := s.add(p); err != nil {
			return fmt.Errorf("sentinel %d: %w", i, err)
		}
		// go-redis authenticates to every sentinel alike.
		if who := s.Username + "\x00" + s.Password.Reveal(); i == 0 {
			credentials = who
		} else if who != credentials {
			return errors.New("the sentinels have different usernames or passwords; Go authenticates to every sentinel with the same ones")
		}
	}
	r.Sentinel = s
	return nil
}

// add appends one sentinel's address, credentials and TLS options.
func (s *SentinelConfig) add(p map[string]any) error {
	if phparray.String(p["host"]) == "" {
		return errors.New("no host")
	}
	var node RedisConfig
	if err := node.readServer(p, "predis", "99"); err != nil {
		return err
	}
	if isSocketPath(node.Addrs[0]) {
		return errors.New("a Unix socket; Go reaches sentinels over TCP")
	}
	s.Addrs = append(s.Addrs, node.Addrs[0])
	s.Username, s.Password = "", node.Password
	if node.Password.IsSet() {
		s.Username = node.Username
	}
	var opts *TLSOptions
	if node.TLS {
		o, err := parseSSLContext("predis", asMap(p["ssl"]))
		if err != nil {
			return fmt.Errorf("ssl: %w", err)
		}
		opts = &o
	}
	s.TLS = append(s.TLS, opts)
	return nil
}

// sentinelParameters is one entry of the list: an array of parameters,
// or a URI as Predis\Connection\Parameters::parse reads it (its query
// holds parameters; redis:// and rediss:// URIs also carry a username,
// password and database).
func sentinelParameters(e any) (map[string]any, error) {
	switch v := e.(type) {
	case map[string]any:
		return merged(v), nil
	case string:
		return parsePredisURI(v)
	}
	return nil, errors.New("neither a URI nor an array of parameters")
}

// parsePredisURI is Parameters::parse. A malformed URI is never echoed:
// it may hold a password.
func parsePredisURI(s string) (map[string]any, error) {
	if !strings.Contains(s, "://") {
		// parse_url("host:port") gives a host and a port.
		host, port, err := net.SplitHostPort(s)
		if err != nil {
			host, port = s, ""
		}
		p := map[string]any{"host": host}
		if port != "" {
			p["port"] = port
		}
		return p, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, errors.New("the URI is malformed")
	}
	p := map[string]any{"scheme": strings.ToLower(u.Scheme)}
	if h := u.Hostname(); h != "" {
		p["host"] = h
	}
	if port := u.Port(); port != "" {
		p["port"] = port
	}
	for k, vs := range u.Query() {
		if len(vs) > 0 {
			p[k] = vs[len(vs)-1]
		}
	}
	if strings.HasPrefix(strings.ToLower(s), "redis") {
		if u.User != nil {
			if name := u.User.Username(); name != "" {
				p["username"] = name
			}
			if pw, ok := u.User.Password(); ok && pw != "" {
				p["password"] = pw
			}
		}
		if db, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/"); db != "" {
			if _, err := strconv.Atoi(db); err == nil {
				p["database"] = db
			}
		}
	}
	return p, nil
}

// predisParameters is the "parameters" option a predis connection gets
// (RedisManager::resolve: options.parameters.<name>, else
// options.parameters; then the connection's own options.parameters):
// the defaults predis's connection factory fills in.
func predisParameters(name string, global, own map[string]any) map[string]any {
	if p, set := own["parameters"]; set {
		return asMap(p)
	}
	all := asMap(global["parameters"])
	if p, set := all[name]; set {
		return asMap(p)
	}
	return all
}

// withDefaults is PHP's $parameters + $defaults: the defaults fill the
// keys the parameters do not have.
func withDefaults(params, defaults map[string]any) map[string]any {
	out := merged(params)
	for k, v := range defaults {
		if _, set := out[k]; !set {
			out[k] = v
		}
	}
	return out
}
