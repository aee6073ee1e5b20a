package jobmiddleware

import (
	"fmt"
	"time"

	"github.com/laraworker/laraworker/handlers"
	"github.com/laraworker/laraworker/laravel/appconfig"
	"github.com/laraworker/laraworker/laravel/bridgeproto"
	"github.com/laraworker/laraworker/laravel/payload"
)

// PlanFromRegistration is the plan of the middleware a registration
// declares, with the keys the app's Laravel version computes for this job
// (the bridge's record, for a job that has none). An error is what PHP's
// middleware() throwing would be: a job exception.
func (d *Resolver) PlanFromRegistration(decls []handlers.JobMiddleware, p *payload.Payload, cmd *payload.Command) (Plan, error) {
	plan := Plan{From: "registration"}
	commandName := p.Data.CommandName
	if commandName == "" {
		commandName = cmd.Class()
	}
	for _, decl := range decls {
		step, err := d.declaredStep(decl, p, cmd, commandName)
		if err != nil {
			return plan, fmt.Errorf("%s: %w", decl.Type, err)
		}
		plan.Steps = append(plan.Steps, step)
	}
	return plan, nil
}

func (d *Resolver) declaredStep(decl handlers.JobMiddleware, p *payload.Payload, cmd *payload.Command, commandName string) (Step, error) {
	m := bridgeproto.Middleware{Type: decl.Type, Class: `Illuminate\Queue\Middleware\` + decl.Type, Source: "registration"}
	step := Step{}
	switch decl.Type {
	case handlers.TypeWithoutOverlapping:
		s, err := d.store(d.DefaultStore, bridgeproto.Store{}, true)
		if err != nil {
			return step, err
		}
		key, err := decl.Key(cmd)
		if err != nil {
			return step, err
		}
		m.Key = overlapKey(d.Version, decl.Prefix, commandName, p.DisplayName, key, decl.Shared)
		m.CacheKey, m.Store = s.Prefix+m.Key, d.DefaultStore
		m.DontRelease, m.Shared, m.ExpiresAfter = decl.DontRelease, decl.Shared, seconds(decl.ExpireAfter)
		if !decl.DontRelease {
			after := int64(0)
			if decl.ReleaseAfter != nil {
				after = seconds(*decl.ReleaseAfter)
			}
			m.ReleaseAfter = &after
		}
		step.locks, step.lockSeconds = s.Locks, lockSeconds(m.ExpiresAfter, s, bridgeproto.Store{})
	case handlers.TypeRateLimited, handlers.TypeRateLimitedWithRedis:
		if err := d.declaredLimits(&m, decl, cmd); err != nil {
			return step, err
		}
		if decl.Type == handlers.TypeRateLimitedWithRedis {
			m.RedisConnection = redisConnectionOf(decl.Connection)
			l, err := d.limiter(m.RedisConnection)
			if err != nil {
				return step, err
			}
			step.limiter = l
			break
		}
		s, err := d.store(d.DefaultStore, bridgeproto.Store{}, false)
		if err != nil {
			return step, err
		}
		m.Store, step.cache = d.DefaultStore, s.Cache
		for i := range m.Limits {
			m.Limits[i].CacheKey = s.Prefix + m.Limits[i].Key
		}
	case handlers.TypeThrottlesExceptions, handlers.TypeThrottlesExceptionsWithRedis:
		by := ""
		if decl.By != nil {
			var err error
			if by, err = decl.By(cmd); err != nil {
				return step, err
			}
		}
		m.Key = throttlesKey(d.Version, decl.Prefix, commandName, p.DisplayName, p.UUID, by, decl.ByJob)
		m.MaxAttempts, m.DecaySeconds, m.BackoffSeconds, m.ByJob = decl.MaxAttempts, seconds(decl.Decay), seconds(decl.Backoff), decl.ByJob
		if decl.Type == handlers.TypeThrottlesExceptionsWithRedis {
			// DurationLimiter takes the key as it is.
			m.RedisConnection = redisConnectionOf(decl.Connection)
			l, err := d.limiter(m.RedisConnection)
			if err != nil {
				return step, err
			}
			step.limiter = l
			break
		}
		cleaned, err := cleanRateLimiterKey(d.Version, m.Key)
		if err != nil {
			return step, err
		}
		s, err := d.store(d.DefaultStore, bridgeproto.Store{}, false)
		if err != nil {
			return step, err
		}
		m.Key, m.CacheKey, m.Store, step.cache = cleaned, s.Prefix+cleaned, d.DefaultStore, s.Cache
	case handlers.TypeSkipIfBatchCancelled:
	}
	step.m = m
	return step, nil
}

// declaredLimits evaluates the limiter for the job, as RateLimited does
// with RateLimiter::limiter($name)($job): each limit keyed
// md5(name . key), with 11.29+'s fallbackKey() for limits sharing a key.
func (d *Resolver) declaredLimits(m *bridgeproto.Middleware, decl handlers.JobMiddleware, cmd *payload.Command) error {
	m.Limiter, m.Registered, m.Release = decl.Limiter, true, !decl.DontRelease
	if decl.ReleaseAfter != nil {
		after := seconds(*decl.ReleaseAfter)
		m.ReleaseAfter = &after
	}
	limits, err := decl.Limits(cmd)
	if err != nil {
		return err
	}
	if len(limits) == 0 {
		m.Unlimited = true // Limit::none(): the job runs
		return nil
	}
	shared := map[string]int{}
	for _, l := range limits {
		shared[l.Key]++
	}
	dedupe := appconfig.VersionCompare(d.Version, "11.29") >= 0
	for _, l := range limits {
		if l.MaxAttempts < 1 || l.Decay < time.Second {
			return fmt.Errorf("limiter %s: a limit needs at least 1 attempt and a decay of at least a second", decl.Limiter)
		}
		key := l.Key
		if dedupe && shared[l.Key] > 1 {
			key = fallbackLimitKey(l.Key, l.MaxAttempts, seconds(l.Decay))
		}
		m.Limits = append(m.Limits, bridgeproto.Limit{Key: LimiterKey(decl.Limiter, key), MaxAttempts: l.MaxAttempts, DecaySeconds: seconds(l.Decay)})
	}
	return nil
}

// seconds is a duration in whole seconds, as Laravel keeps them.
func seconds(d time.Duration) int64 { return int64(d / time.Second) }
