package httpguard

import (
	"sync"
	"time"
)

// Policy says how many failed credential checks are free, and how long
// the lockouts after them last.
type Policy struct {
	// Free failures before the first lockout.
	Free int
	// Base is the first lockout; each further failure doubles it, up to
	// Max.
	Base, Max time.Duration
	// Forget: failures are forgotten this long after the last one.
	Forget time.Duration
}

// The dashboard's and the metrics server's policies: 5 free guesses per
// client, then 1 s, 2 s, 4 s ... up to 15 minutes between guesses; 100 free
// guesses from everyone together (many addresses), then up to one a
// minute.
var (
	ClientPolicy = Policy{Free: 5, Base: time.Second, Max: 15 * time.Minute, Forget: 15 * time.Minute}
	GlobalPolicy = Policy{Free: 100, Base: time.Second, Max: time.Minute, Forget: 15 * time.Minute}
)

// maxClients bounds the memory the limiter keeps: past it, clients
// without a lockout are forgotten first (the global count still holds).
const maxClients = 10000

// Limiter counts failed credential checks per client and for everyone.
// A check is reserved (Begin) before the credential is compared, so
// parallel guesses cannot all be compared before the first failure is
// counted: past the free failures, one check at a time is let through,
// and none while a lockout lasts.
type Limiter struct {
	mu             sync.Mutex
	now            func() time.Time
	client, global Policy
	clients        map[string]*record
	all            record
}

// record is one client's (or everyone's) failures.
type record struct {
	failures int
	inflight int
	last     time.Time // of the last failure
	until    time.Time // locked until
}

// NewLimiter is a limiter with the given policies on the clock now (nil:
// time.Now).
func NewLimiter(now func() time.Time, client, global Policy) *Limiter {
	if now == nil {
		now = time.Now
	}
	return &Limiter{now: now, client: client, global: global, clients: map[string]*record{}}
}

// Attempt is one credential check in flight: end it with Done.
type Attempt struct {
	l   *Limiter
	r   *record
	key string
}

// Begin reserves a credential check for client (ClientKey). It is
// refused (nil) while the client or everyone is locked out, or while
// checks in flight could use up the free failures; wait is then how long
// to wait before trying again.
func (l *Limiter) Begin(client string) (a *Attempt, wait time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	l.all.forget(now, l.global)
	if w := l.all.blocked(now, l.global); w > 0 {
		return nil, w
	}
	r := l.record(client, now)
	if w := r.blocked(now, l.client); w > 0 {
		return nil, w
	}
	r.inflight++
	l.all.inflight++
	return &Attempt{l: l, r: r, key: client}, 0
}

// Done ends the check: a success clears the client's failures, a
// failure counts for the client and for everyone. locked is the lockout
// the failure started (0: none); global tells whether it is everyone's.
func (a *Attempt) Done(ok bool) (locked time.Duration, global bool) {
	l := a.l
	l.mu.Lock()
	defer l.mu.Unlock()
	a.r.inflight--
	l.all.inflight--
	if ok {
		a.r.failures, a.r.until = 0, time.Time{}
		if a.r.inflight == 0 && l.clients[a.key] == a.r {
			delete(l.clients, a.key) // a client that signs in costs no memory
		}
		return 0, false
	}
	now := l.now()
	locked = a.r.fail(now, l.client)
	if g := l.all.fail(now, l.global); g > 0 {
		return g, true
	}
	return locked, false
}

// Failures is how many failures are counted now for client and for
// everyone (for tests and logs).
func (l *Limiter) Failures(client string) (mine, all int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r := l.clients[client]; r != nil {
		mine = r.failures
	}
	return mine, l.all.failures
}

// record finds or makes client's record, keeping the map bounded.
func (l *Limiter) record(client string, now time.Time) *record {
	if r := l.clients[client]; r != nil {
		r.forget(now, l.client)
		return r
	}
	if len(l.clients) >= maxClients {
		l.sweep(now)
	}
	r := &record{}
	l.clients[client] = r
	return r
}

// sweep drops the records that hold nothing, then, if the map is still
// full, the one whose last failure is oldest (not one in flight).
func (l *Limiter) sweep(now time.Time) {
	var oldest string
	for k, r := range l.clients {
		r.forget(now, l.client)
		if r.inflight > 0 {
			continue
		}
		if r.failures == 0 {
			delete(l.clients, k)
			continue
		}
		if oldest == "" || r.last.Before(l.clients[oldest].last) {
			oldest = k
		}
	}
	if len(l.clients) >= maxClients && oldest != "" {
		delete(l.clients, oldest)
	}
}

// blocked is how long a new check must wait: the rest of a lockout, or,
// past the free failures, while another check is in flight (its failure
// would lock).
func (r *record) blocked(now time.Time, p Policy) time.Duration {
	if now.Before(r.until) {
		return r.until.Sub(now)
	}
	if r.inflight > 0 && r.failures+r.inflight >= p.Free {
		return p.Base
	}
	return 0
}

// fail counts a failure and returns the lockout it starts (0: none).
func (r *record) fail(now time.Time, p Policy) time.Duration {
	r.failures++
	r.last = now
	if r.failures < p.Free {
		return 0
	}
	d := p.Max
	if n := r.failures - p.Free; n < 30 {
		d = min(p.Base<<n, p.Max)
	}
	r.until = now.Add(d)
	return d
}

// forget clears failures older than p.Forget once no lockout lasts.
func (r *record) forget(now time.Time, p Policy) {
	if r.failures > 0 && !now.Before(r.until) && now.Sub(r.last) >= p.Forget {
		r.failures, r.until = 0, time.Time{}
	}
}
