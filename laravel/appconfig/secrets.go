package appconfig

import (
	"net/url"
	"path/filepath"
	"slices"
)

// credentialKeys are the config array keys whose values are credentials:
// a database or Redis connection's password, an SQS connection's AWS
// secret and session token.
var credentialKeys = map[string]bool{"password": true, "secret": true, "token": true}

// awsSecretVars are the AWS credentials Laravel's skeleton reads from the
// environment (config/queue.php's sqs connection, config/filesystems.php's
// s3 disk).
var awsSecretVars = []string{"AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"}

// SecretValues lists every secret value laraworker read from the app's
// configuration, which no page, log line, error or exec handler input may
// show: the queue connection's database password, APP_KEY and
// APP_PREVIOUS_KEYS, the Redis lock connection's password, and
// info.Secrets (every other database and Redis connection's password, the
// SQS connections' secret and token, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN). Empty values are left out; each value once.
func SecretValues(cfg Config, info AppInfo) []string {
	all := append([]Secret{cfg.Password, cfg.AppKey, cfg.Redis.Password}, cfg.AppPreviousKeys...)
	all = append(all, info.Secrets...)
	var out []string
	for _, s := range all {
		if s.IsSet() && !slices.Contains(out, s.Reveal()) {
			out = append(out, s.Reveal())
		}
	}
	return out
}

// credentialOf is the credential a config value holds under key: all of
// it for a credential key, the password of a URL (decoded: redaction
// reads percent escapes).
func credentialOf(key, value string) []Secret {
	switch {
	case value == "":
		return nil
	case credentialKeys[key]:
		return []Secret{Secret(value)}
	case key == "url":
		u, err := url.Parse(value)
		if err != nil || u.User == nil {
			return nil
		}
		pw, ok := u.User.Password()
		if !ok || pw == "" {
			return nil
		}
		return []Secret{Secret(pw)}
	}
	return nil
}

// envCredentials are the AWS credentials of the environment and the .env
// (the environment wins, as Laravel's env() reads them).
func envCredentials(env func(string) (string, bool)) []Secret {
	var out []Secret
	for _, k := range awsSecretVars {
		if v, ok := env(k); ok && v != "" {
			out = append(out, Secret(v))
		}
	}
	return out
}

// envFileCredentials are the AWS credentials when there is no app folder:
// the .env (loadEnvOnly's) and the environment. A .env that cannot be read
// fails loadEnvOnly already; here it only gives none.
func envFileCredentials(envFile, baseDir string, environ []string) []Secret {
	if envFile == "" {
		envFile = filepath.Join(orDefault(baseDir, "."), ".env")
	}
	vals, err := envValues(envFile, environ)
	if err != nil {
		vals = environMap(environ)
	}
	return envCredentials(func(k string) (string, bool) { v, ok := vals[k]; return v, ok })
}

// credentials are the credentials the config files hold, as far as Go
// evaluates them, and the environment's AWS credentials.
func (f *appFiles) credentials() []Secret {
	var out []Secret
	for _, key := range []string{"database.connections", "database.redis", "queue.connections"} {
		out = append(out, nodeCredentials(f.node(key), "", f.env)...)
	}
	return append(out, envCredentials(f.env)...)
}

// nodeCredentials walks a config array literal: each value it can
// evaluate under a credential key (or a url's password). A part Go does
// not evaluate is skipped, not the whole array.
func nodeCredentials(n *phpNode, key string, env phpEnv) []Secret {
	if n == nil {
		return nil
	}
	if n.kind == "array" {
		var out []Secret
		for i, item := range n.items {
			k := ""
			if n.keys[i].Kind != kindNull {
				k = n.keys[i].String()
			}
			out = append(out, nodeCredentials(item, k, env)...)
		}
		return out
	}
	v := n.eval(env)
	if v.Kind != kindString && v.Kind != kindInt {
		return nil
	}
	return credentialOf(key, v.String())
}
