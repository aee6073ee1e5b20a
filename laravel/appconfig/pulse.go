package appconfig

import "fmt"

// PulseConfig is Laravel Pulse's configuration as the app resolves it,
// when laravel/pulse is installed (read through the app's PHP only): what
// its Queues and SlowJobs recorders record and where Pulse writes. The
// values are config()'s as PHP returns them (an env() setting is a
// string); package internal/pulse reads them as Pulse does.
type PulseConfig struct {
	// Registered: the app registers PulseServiceProvider (without it Pulse
	// records nothing).
	Registered bool `json:"registered"`
	// Enabled is pulse.enabled.
	Enabled bool `json:"enabled"`
	// Queues and SlowJobs are the recorders' settings (sample_rate,
	// ignore, threshold: a number, or a list of {pattern, ms} in the
	// config's order); nil when the recorder is not registered (absent
	// from pulse.recorders, false, or not enabled).
	Queues   map[string]any `json:"queues"`
	SlowJobs map[string]any `json:"slow_jobs"`
	// Ingest is pulse.ingest: driver, buffer, trim_lottery, trim_keep,
	// redis_connection.
	Ingest map[string]any `json:"ingest"`
	// Storage is pulse.storage: driver, chunk (database.chunk), trim_keep.
	Storage map[string]any `json:"storage"`
	// RedisPrefix is database.redis.options.prefix, which Pulse's Redis
	// ingest puts before its stream's name itself.
	RedisPrefix string `json:"redis_prefix"`
	// DBConnection is the database connection Pulse's tables are on
	// (pulse.storage.database.connection, else database.default).
	DBConnection string `json:"db_connection"`
	// DB is that connection when it is not the queue's database
	// connection (AppInfo.DBConnection); nil when it is.
	DB *Config `json:"-"`
}

// answerPulse is read-config.php's "pulse".
type answerPulse struct {
	PulseConfig
	DB answerDB `json:"db"`
}

// pulseConfig completes the answer's Pulse configuration: its database
// connection's settings when they are not the queue's.
func (a appAnswer) pulseConfig(sec appSecrets, queueDB string) (*PulseConfig, error) {
	if a.Pulse == nil {
		return nil, nil
	}
	p := a.Pulse.PulseConfig
	if p.DBConnection == "" || p.DBConnection == queueDB {
		return &p, nil
	}
	v := map[string]string{"DB_TABLE_PREFIX": deref(a.Pulse.DB.Prefix), "APP_TIMEZONE": deref(a.App.Timezone)}
	for k, val := range map[string]*string{"DB_CONNECTION": a.Pulse.DB.Driver, "DB_HOST": a.Pulse.DB.Host, "DB_PORT": a.Pulse.DB.Port,
		"DB_DATABASE": a.Pulse.DB.Database, "DB_USERNAME": a.Pulse.DB.Username, "DB_SOCKET": a.Pulse.DB.UnixSocket,
		"DB_VERSION": a.Pulse.DB.Version, "DB_PASSWORD": sec.PulseDBPassword} {
		if val != nil {
			v[k] = *val
		}
	}
	cfg, err := configFromValues(v, "")
	if err != nil {
		return nil, fmt.Errorf("appconfig: Pulse's database connection %q: %w", p.DBConnection, err)
	}
	p.DB = &cfg
	return &p, nil
}
