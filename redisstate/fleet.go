package redisstate

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/breakergen/breakergen/runtime"
)

// Defaults of the options.
const (
	DefaultPrefix  = "breakergen:"
	DefaultTimeout = 50 * time.Millisecond
)

// minTimeout is the shortest [WithTimeout]: below it, no Redis answers in
// time, and a slip of the unit (WithTimeout(50)) would pass.
const minTimeout = time.Millisecond

// How often a process says it is alive, and how long a silent one counts
// as a member; how long the subscriber waits before it tries again; how
// long a subscription may stay silent (each heartbeat publishes on the
// process's own beat channel) before it counts as deaf and is made anew;
// how soon after this process sent its own last heartbeat heard a peer's
// trip message is taken at its word, and how long one that is not waits
// for its note's time left at most (see [Fleet.noteLeft]).
const (
	heartbeat  = 500 * time.Millisecond
	memberTTL  = 2 * time.Second
	redialWait = 100 * time.Millisecond
	deafAfter  = 3 * heartbeat
	freshFor   = heartbeat + heartbeat/2
	noteRead   = 100 * time.Millisecond
)

// Option configures [Attach].
type Option func(*options)

type options struct {
	prefix  string
	timeout time.Duration
	limits  []string
	share   float64
	origin  string
	logger  *slog.Logger

	freshFor time.Duration // freshFor and noteRead, but for tests (export_test.go)
	noteRead time.Duration
}

// WithPrefix sets the prefix of every key and of the channel. Default
// "breakergen:". The keys live in the client's database; the channel,
// <prefix>events, is the server's whatever the database (Redis pub/sub
// ignores it), so a client of a database other than 0 has the channel
// <prefix>events:db<n>: two fleets on one server in two databases do not
// hear each other, whatever their prefixes. Give fleets on one database
// prefixes of their own.
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// WithTimeout bounds every Redis operation, enforced by the fleet whatever
// the client's own timeouts: a call never waits on Redis longer. Default
// 50ms. [Attach] refuses one under 1ms: a Duration counts nanoseconds, so
// WithTimeout(50) is 50ns, a slip of the unit that no Redis would answer
// within (the fleet would report Redis down for ever). A long one is taken
// as it is: a stalled Redis then holds a call, Attach and Close up to it.
func WithTimeout(d time.Duration) Option { return func(o *options) { o.timeout = d } }

// WithSharedLimits makes the token buckets of these names one bucket in
// Redis for the whole fleet. Default none. [Attach] refuses an empty
// name; a name that no limiter of the registry has (yet), a typo most
// often, is listed in [runtime.Registry.Unmatched] and
// [runtime.Health].Unmatched with the registry's other settings that name
// nothing, until a limiter of that name is made.
func WithSharedLimits(names ...string) Option {
	return func(o *options) { o.limits = append(o.limits, names...) }
}

// WithLocalShare sets the share (0 < f <= 1) of a shared name's rate that
// one process allows itself while Redis is away. Default 1, the whole
// rate.
func WithLocalShare(f float64) Option { return func(o *options) { o.share = f } }

// WithOrigin names this process in notes and in peers' events. Default
// "<host name>:<pid>" for the first Attach of the process, and
// "<host name>:<pid>-<n>" for its n-th (a test, or a service with two
// registries), so that no two Attaches share it.
//
// Each member of the fleet must have its own origin: a process drops
// every message of its own origin as its own news, so two members of one
// origin would never follow each other. (A process restarted under its
// origin does follow the notes its former self left: each note names the
// Attach that wrote it.) [Attach] refuses an origin that
// another live member uses (one whose heartbeat is under 2s old). A
// process restarted soon after a crash under the same origin (a container
// restarted in place keeps its host name, and its pid is 1 again) finds
// the claim of its former self, which no heartbeat renews: Attach then
// waits once for that claim to run out (at most 2.2s) before it decides.
// When Redis does not answer Attach, the heartbeats find the clash later:
// both members log it and report it in Health
// ([runtime.FleetHealth].DuplicateOrigin).
func WithOrigin(origin string) Option { return func(o *options) { o.origin = origin } }

// WithLogger sets where the fleet logs Redis going away and coming back,
// and notes it ignored. Default slog.Default().
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// Fleet is a registry attached to the other processes of its service
// through Redis. Get one from [Attach]; it is safe for concurrent use.
type Fleet struct {
	reg      *runtime.Registry
	rdb      redis.UniversalClient
	opt      options
	instance string // this Attach's own name, telling it from another of its origin
	channel  string
	limits   map[string]*limit // shared limits by name; read-only after Attach

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	stop   func() // detaches from the registry
	wg     sync.WaitGroup
	outbox *outbox // to the publisher

	subMu  sync.Mutex    // guards pubsub
	pubsub *redis.PubSub // the subscription; the subscriber makes it anew when it goes deaf
	kicked atomic.Bool   // the heartbeat closed pubsub for the subscriber to make it anew
	born   time.Time     // Attach's time, from which heard counts
	heard  atomic.Int64  // when the subscription last delivered anything, since born
	sent   atomic.Int64  // when the last heartbeat the subscription delivered was sent, since born
	sentAt atomic.Int64  // the same on the wall clock (Unix ns), which counts a host's suspend
	order  bool          // one server publishes everything the subscription hears (ordered)

	inMu  sync.Mutex    // guards inbox
	inbox []delivered   // what the subscriber heard, for the applier (inbox.go)
	wake  chan struct{} // the inbox has news

	ownMu sync.Mutex          // guards own
	own   map[string]outgoing // this process's trips, by name, for republish

	modeMu sync.Mutex           // guards modes
	modes  map[string]knownMode // the operators' modes this process knows, by name (see modes.go)
	ready  chan struct{}        // closed at the first subscription

	// follow makes following a peer's mode one step: the check against
	// modes and the breaker's move. The applier's resyncs and messages,
	// Attach's resync and the heartbeat's run on different goroutines:
	// without it one could skip a mode another had recorded but not yet
	// applied (Attach returning before the breaker is in it), or apply an
	// older mode after a newer. Taken before a breaker's lock, never
	// under it.
	follow sync.Mutex

	up      atomic.Bool  // the last Redis operation answered in time
	members atomic.Int64 // processes attached, as of the last heartbeat
	beaten  atomic.Int64 // when a heartbeat last answered, since born
	twins   atomic.Int64 // other live members of this origin, as of the last heartbeat

	refusedMu sync.Mutex      // guards refusals
	refusals  map[string]bool // the ACL refusals logged (see refused), 64 at most
	slotsAt   atomic.Int64    // when a Redis Cluster client was last told to reload its slot map, since born (see reloadSlots)
	closed    sync.Once
}

// Attach connects reg to the other processes sharing rdb: their trips
// open reg's breakers of the same names, one probe per window goes out
// across the fleet, and [WithSharedLimits] names share one token bucket.
// It reads the open notes before it returns. Redis being down is not an
// error: the registry works on its own until Redis answers. It fails only
// for bad arguments (a nil registry, a nil client, a typed nil such as a
// nil *redis.Client included, or a bad option), starting nothing then,
// when reg is attached already, or when another live member of the fleet
// uses its origin (see [WithOrigin]; a claim no heartbeat renews, a
// crashed process's, is waited out first, up to 2.2s).
func Attach(reg *runtime.Registry, rdb redis.UniversalClient, opts ...Option) (*Fleet, error) {
	switch {
	case reg == nil:
		return nil, errors.New("redisstate: Attach needs a registry, got nil")
	case rdb == nil:
		return nil, errors.New("redisstate: Attach needs a client, got nil")
	case isNil(rdb):
		return nil, fmt.Errorf("redisstate: Attach needs a client, got a nil %T", rdb)
	}
	o := options{prefix: DefaultPrefix, timeout: DefaultTimeout, share: 1, freshFor: freshFor, noteRead: noteRead}
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	if o.timeout < minTimeout {
		return nil, fmt.Errorf("redisstate: WithTimeout(%s): want at least %s (a time.Duration counts nanoseconds: 50*time.Millisecond, not 50)", o.timeout, minTimeout)
	}
	if err := checkPrefix(o.prefix); err != nil {
		return nil, err
	}
	if slices.Contains(o.limits, "") {
		return nil, errors.New("redisstate: WithSharedLimits: an empty name, which no limiter has")
	}
	if math.IsNaN(o.share) || o.share <= 0 || o.share > 1 {
		return nil, fmt.Errorf("redisstate: local share %g, want 0 < f <= 1", o.share)
	}
	if o.origin == "" {
		o.origin = defaultOrigin()
	}
	if o.logger == nil {
		o.logger = slog.Default()
	}
	f := &Fleet{reg: reg, rdb: rdb, order: ordered(rdb), opt: o, instance: rand.Text(), channel: eventsChannel(o.prefix, rdb),
		limits: map[string]*limit{}, outbox: newOutbox(), own: map[string]outgoing{},
		modes: map[string]knownMode{}, wake: make(chan struct{}, 1), refusals: map[string]bool{}}
	for _, n := range o.limits {
		f.limits[n] = &limit{}
	}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	f.up.Store(true)
	f.born = time.Now()
	stop, err := reg.Share((*sharer)(f))
	if err != nil {
		f.cancel()
		return nil, fmt.Errorf("redisstate: %w", err)
	}
	f.stop = stop
	if f.beat(true) && f.twins.Load() > 0 {
		if !f.beatAfterLapse() {
			// Redis went away meanwhile: the first beat's count may be a
			// crashed process's claim. The heartbeats count again once
			// Redis answers.
			f.twins.Store(0)
		} else if f.twins.Load() > 0 {
			f.stop()
			f.cancel()
			return nil, fmt.Errorf("redisstate: origin %q is in use by another live member of the fleet; "+
				"give each process its own WithOrigin (each would drop the other's news as its own)", o.origin)
		}
	}
	// The subscriber subscribes (a dial may block): wait for it at most
	// the timeout, so that no message published after Attach is missed,
	// then read the notes published before.
	f.pubsub = rdb.Subscribe(f.ctx)
	f.hear()
	f.ready = make(chan struct{})
	f.wg.Add(4)
	go f.subscriber()
	go f.applier()
	go f.publisher()
	go f.heartbeats()
	t := time.NewTimer(o.timeout)
	select {
	case <-f.ready:
	case <-t.C:
	}
	t.Stop()
	f.resync()
	return f, nil
}

// eventsChannel is the fleet's channel: <prefix>events, and
// <prefix>events:db<n> for a client of database n other than 0. Redis
// pub/sub ignores the database: two fleets on one server with the same
// prefix in two databases (staging in 1, production in 2) heard each
// other's trips, probes and modes, and a staging probe's success closed
// a production breaker. Database 0 keeps the channel that every version
// used.
func eventsChannel(prefix string, rdb redis.UniversalClient) string {
	db := 0
	switch c := rdb.(type) {
	case *redis.Client: // a Sentinel's failover client too
		db = c.Options().DB
	case *redis.Ring:
		db = c.Options().DB
	}
	if db != 0 {
		return prefix + "events:db" + strconv.Itoa(db)
	}
	return prefix + "events"
}

// attaches counts the Attaches of the process that took the default
// origin.
var attaches atomic.Int64

// defaultOrigin is "<host name>:<pid>" for the process's first Attach of
// the default origin, "<host name>:<pid>-<n>" for its n-th.
func defaultOrigin() string {
	host, _ := os.Hostname()
	origin := fmt.Sprintf("%s:%d", host, os.Getpid())
	if n := attaches.Add(1); n > 1 {
		origin += fmt.Sprintf("-%d", n)
	}
	return origin
}

// isNil reports whether v holds a nil pointer, map, func or the like: a
// typed nil, which passes v == nil and panics at its first use (for a
// client, on a goroutine of the fleet, where no recover of the caller's
// can stop it ending the process).
func isNil(v any) bool {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface, reflect.UnsafePointer:
		return rv.IsNil()
	}
	return false
}

// Close detaches the registry from the fleet: its breakers keep their
// state and go on alone. It waits for the fleet's goroutines, at most
// about the timeout for each Redis operation under way.
func (f *Fleet) Close() error {
	f.closed.Do(func() {
		f.stop()
		f.cancel()
		f.subMu.Lock()
		_ = f.pubsub.Close()
		f.subMu.Unlock()
		f.wg.Wait()
		_ = f.doIn(context.Background(), func(ctx context.Context) error {
			_, err := f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				p.ZRem(ctx, f.opt.prefix+"members", f.opt.origin)
				p.ZRem(ctx, f.originKey(), f.instance)
				return nil
			})
			return err
		})
	})
	return nil
}

// Origin returns the name of this process in the fleet.
func (f *Fleet) Origin() string { return f.opt.origin }

// sharer is a Fleet seen as the registry's [runtime.Sharer]: the methods
// the runtime calls are not the user's.
type sharer Fleet

func (s *sharer) Health() runtime.FleetHealth { return (*Fleet)(s).Health() }

var _ runtime.LimitSharer = (*sharer)(nil)
var _ runtime.LeaseSharer = (*sharer)(nil)

// SharedLimits returns the names of [WithSharedLimits], for the registry
// to list those that no limiter has among its unmatched settings.
func (s *sharer) SharedLimits() []string {
	names := make([]string, 0, len(s.limits))
	for n := range s.limits {
		names = append(names, n)
	}
	return names
}

// Health reports whether Redis answers and how many processes are
// attached (see [runtime.Health].Fleet). Redis is "down" too while the
// subscription has been deaf for longer than deafAfter, though commands
// answer: the process hears none of its peers' news then. Members is
// the count of the last heartbeat that answered, for memberTTL (the time
// a member counts without a heartbeat), 0 after it: with Redis away for
// longer, this process knows of no member, as no heartbeat reaches it.
func (f *Fleet) Health() runtime.FleetHealth {
	h := runtime.FleetHealth{Redis: "down"}
	if time.Since(f.born)-time.Duration(f.beaten.Load()) <= memberTTL {
		h.Members = int(f.members.Load())
	}
	if f.up.Load() && !f.deaf() {
		h.Redis = "ok"
	}
	if f.twins.Load() > 0 {
		h.DuplicateOrigin = f.opt.origin
	}
	return h
}

// errTimeout is an operation the fleet stopped waiting for.
var errTimeout = errors.New("redisstate: Redis did not answer in time")

// do runs one Redis operation, waiting at most the timeout: the
// operation runs on a goroutine of its own, which is not waited for past
// the timeout (go-redis leaves socket reads to the client's ReadTimeout
// unless told to honour contexts). A failure marks Redis down until the
// next heartbeat answers; redis.Nil is an answer.
func (f *Fleet) do(op func(ctx context.Context) error) error { return f.doIn(f.ctx, op) }

// doIn is do within parent (Close's last operation runs after the
// fleet's own context has ended).
func (f *Fleet) doIn(parent context.Context, op func(ctx context.Context) error) error {
	err := f.bounded(parent, op)
	if err != nil {
		f.down(err)
	}
	return err
}

// bounded runs op within the fleet's timeout and parent, returning its
// error (redis.Nil is none) or errTimeout, and leaves the fleet's state
// alone: for a read whose failure says nothing of Redis as a whole.
func (f *Fleet) bounded(parent context.Context, op func(ctx context.Context) error) error {
	return f.boundedFor(parent, f.opt.timeout, op)
}

// boundedFor is bounded within d.
func (f *Fleet) boundedFor(parent context.Context, d time.Duration, op func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(parent, d)
	done := make(chan error, 1)
	go func() {
		defer cancel()
		done <- op(ctx)
	}()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		select {
		case err = <-done:
		default:
			err = errTimeout
		}
	}
	if err != nil && !errors.Is(err, redis.Nil) {
		if f.ctx.Err() == nil {
			f.reloadSlots()
			f.refused(err)
		}
		return err
	}
	return nil
}

// aclCommands are the commands the fleet sends, its scripts' included
// (an ACL applies inside a script too); TestFleetUnderTheDocumentedACL
// runs a fleet with these alone. A Redis Cluster client also reads the
// slot map (cluster|slots).
const aclCommands = "+get +set +setnx +del +pttl +pexpire +zadd +zrem +zremrangebyscore +zcard +zscore +time " +
	"+publish +subscribe +evalsha +eval"

// refused logs an operation that an ACL refused (NOPERM), naming what
// the fleet needs: without it, a user that may not subscribe or run
// scripts read as Redis away for ever (or, with no channel, as a
// subscription that delivers nothing), and a refused SUBSCRIBE was not
// logged at all. Each refusal is logged once: the heartbeat meets it
// every 500 ms.
func (f *Fleet) refused(err error) {
	if !redis.IsPermissionError(err) {
		return
	}
	f.refusedMu.Lock()
	logged := f.refusals[err.Error()] || len(f.refusals) >= 64
	if !logged {
		f.refusals[err.Error()] = true
	}
	f.refusedMu.Unlock()
	if logged {
		return
	}
	f.opt.logger.Error("redisstate: Redis refused a command to this client's user (ACL); the fleet goes on locally. "+
		"It needs the keys and channels of its prefix and these commands",
		"origin", f.opt.origin, "err", err, "acl", fmt.Sprintf("~%s* &%[1]s* %s", f.opt.prefix, aclCommands))
}

// reloadEvery is how often at most a Redis Cluster client is told to
// reload its slot map (see reloadSlots): as often as the heartbeat.
const reloadEvery = heartbeat

// reloadSlots tells a Redis Cluster client to read the slot map again,
// in the background, after an operation failed: go-redis reads it only
// when a node answers MOVED or ASK, and every 60s
// (ClusterStateReloadInterval), so after a master died and its replica
// was promoted, the commands and the subscription of its slots went to
// the dead node (connection refused) for up to a minute, and the fleet
// stayed away all that time. Once per reloadEvery at most: while the
// cluster has not failed over yet, each reload finds the same map.
func (f *Fleet) reloadSlots() {
	c, ok := f.rdb.(*redis.ClusterClient)
	if !ok {
		return
	}
	now := int64(time.Since(f.born)) + 1 // never 0, the value before the first reload
	last := f.slotsAt.Load()
	if last != 0 && now-last < int64(reloadEvery) || !f.slotsAt.CompareAndSwap(last, now) {
		return
	}
	c.ReloadState(f.ctx)
}

// down marks Redis away, logging the change once.
func (f *Fleet) down(err error) {
	if f.ctx.Err() != nil {
		return
	}
	if f.up.CompareAndSwap(true, false) {
		f.opt.logger.Warn("redisstate: Redis is away; breakers and limits go on locally",
			"origin", f.opt.origin, "err", err)
	}
}

// heartbeats keeps this process in the members set, and brings the fleet
// back when Redis answers again.
func (f *Fleet) heartbeats() {
	defer f.wg.Done()
	t := time.NewTicker(heartbeat)
	defer t.Stop()
	for {
		select {
		case <-f.ctx.Done():
			return
		case <-t.C:
		}
		was := f.up.Load()
		if was {
			// What the subscription must hear within deafAfter, saying
			// when it was sent (see noteLeft). First, so that a slow
			// server's scripts below do not space the heartbeats out past
			// freshFor; a lost one is for the deaf check to judge, and
			// leaves Redis's state to the scripts.
			now := time.Now()
			sent := strconv.FormatInt(int64(now.Sub(f.born)), 10) + " " + strconv.FormatInt(now.UnixNano(), 10)
			_ = f.bounded(f.ctx, func(ctx context.Context) error { return f.rdb.Publish(ctx, f.beatChannel(), sent).Err() })
		}
		if !f.beat(false) {
			continue
		}
		if !was {
			// The subscription may be on a connection that no longer
			// delivers (a hung master that the sentinels replaced): make
			// it anew, which reads the notes again once subscribed.
			f.opt.logger.Info("redisstate: Redis is back; re-syncing", "origin", f.opt.origin)
			f.kick()
			f.resync()
			f.republish()
		}
	}
}

// beatChannel is where this Attach's heartbeat publishes, for its own
// subscription alone to hear: proof that the subscription delivers what
// is published on the server the commands reach.
func (f *Fleet) beatChannel() string { return f.opt.prefix + "beat:" + f.instance }

// hear records that the subscription delivered something.
func (f *Fleet) hear() { f.heard.Store(int64(time.Since(f.born))) }

// heardSent records that the subscription delivered a heartbeat sent at
// sent (since born), or confirmed a subscription asked for then: what it
// delivers next was published after that.
func (f *Fleet) heardSent(sent time.Duration, wall int64) {
	if int64(sent) > f.sent.Load() { // one writer, the subscriber
		f.sent.Store(int64(sent))
		f.sentAt.Store(wall)
	}
}

// heardBeat records the heartbeat whose payload is p ("<since born, ns>
// <Unix ns>", see heartbeats).
func (f *Fleet) heardBeat(p string) {
	mono, wall, _ := strings.Cut(p, " ")
	sent, err1 := strconv.ParseInt(mono, 10, 64)
	at, err2 := strconv.ParseInt(wall, 10, 64)
	if err1 == nil && err2 == nil {
		f.heardSent(time.Duration(sent), at)
	}
}

// current reports whether what the subscription delivers now was
// published within freshFor (see noteLeft), on both clocks: the
// monotonic one does not count the time a host spends suspended (or a
// VM frozen), while messages wait; the wall clock does.
func (f *Fleet) current() bool {
	now := time.Now()
	return f.order && now.Sub(f.born)-time.Duration(f.sent.Load()) <= f.opt.freshFor &&
		time.Duration(now.UnixNano()-f.sentAt.Load()) <= f.opt.freshFor
}

// ordered reports whether rdb's subscription hears every message in the
// order one server published them: a *redis.Client (one server, or the
// master a Sentinel names). A Redis Cluster's node passes on what other
// nodes publish over a link from each, so a message held on one link
// comes after newer ones on another; a Ring or another implementation is
// not known to order.
func ordered(rdb redis.UniversalClient) bool {
	_, ok := rdb.(*redis.Client)
	return ok
}

// silent is how long the subscription has delivered nothing.
func (f *Fleet) silent() time.Duration { return time.Since(f.born) - time.Duration(f.heard.Load()) }

// deaf reports whether the subscription has delivered nothing, not even
// the process's own heartbeat, for longer than deafAfter.
func (f *Fleet) deaf() bool { return f.silent() > deafAfter }

// kick closes the subscription for the subscriber to make it anew.
func (f *Fleet) kick() {
	f.subMu.Lock()
	defer f.subMu.Unlock()
	f.kicked.Store(true)
	_ = f.pubsub.Close()
}

// resubscribe closes old and makes a new subscription (connecting at its
// first use), unless Close is under way; it returns the subscription the
// subscriber is to use.
func (f *Fleet) resubscribe(old *redis.PubSub) *redis.PubSub {
	f.subMu.Lock()
	defer f.subMu.Unlock()
	_ = old.Close()
	if f.ctx.Err() != nil {
		return old
	}
	f.kicked.Store(false)
	f.pubsub = f.rdb.Subscribe(f.ctx)
	return f.pubsub
}

// membersScript adds this process to the members set until now+ttl (on
// the server's clock), drops those whose time is up, and counts the rest.
var membersScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return redis.call('ZCARD', KEYS[1])
`)

// originScript keeps this Attach (ARGV[1]) in the set of those using its
// origin (KEYS[1], scored by when each one's time is up on the server's
// clock) until now+ttl, drops those whose time is up, and counts the
// others. Attaching (ARGV[3] "1"), it adds nothing when there are others.
// A key of its own, apart from the members set, so that each script
// touches one key (Redis Cluster) and the members stay origins, as peers
// of an earlier version count them.
var originScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local others = redis.call('ZCARD', KEYS[1])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then others = others - 1 end
if others > 0 and ARGV[3] == '1' then return others end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return others
`)

// beatAfterLapse is the attaching beat again once every claim of the
// origin that no heartbeat renews has run out (memberTTL, and a tenth for
// the two clocks): a process that crashed and restarted at once finds
// its former self's claim at the first beat and not at this one, while a
// live member has renewed its claim meanwhile.
func (f *Fleet) beatAfterLapse() bool {
	t := time.NewTimer(memberTTL + memberTTL/10)
	defer t.Stop()
	<-t.C
	return f.beat(true)
}

// beat runs one heartbeat and reports whether Redis answered. It first
// claims the origin: attaching, the claim fails when another live member
// has the origin, and the process is not added to the members then.
// Whether others have the origin is in twins; a change is logged.
func (f *Fleet) beat(attaching bool) bool {
	var n, others int64
	err := f.do(func(ctx context.Context) error {
		var err error
		others, err = originScript.Run(ctx, f.rdb, []string{f.originKey()},
			f.instance, memberTTL.Milliseconds(), attaching).Int64()
		if err != nil || attaching && others > 0 {
			return err
		}
		n, err = membersScript.Run(ctx, f.rdb, []string{f.opt.prefix + "members"},
			f.opt.origin, memberTTL.Milliseconds()).Int64()
		return err
	})
	if err != nil {
		return false
	}
	was := f.twins.Swap(others)
	switch {
	case attaching && others > 0:
		return true // refused: Attach undoes it
	case was == 0 && others > 0:
		f.opt.logger.Warn("redisstate: another live member uses this origin; neither follows the other's trips, "+
			"give each process its own WithOrigin", "origin", f.opt.origin, "others", others)
	case was > 0 && others == 0:
		f.opt.logger.Info("redisstate: no other live member uses this origin now", "origin", f.opt.origin)
	}
	f.members.Store(n)
	f.beaten.Store(int64(time.Since(f.born)))
	f.up.Store(true)
	return true
}

// subscriber hears peers' messages and hands them to the applier
// (inbox.go), in order. Every (re)subscription has the applier re-read
// the open notes: what was published while it was away is in them.
//
// go-redis reconnects a subscription whose connection fails, not one
// that goes silent: a master that hangs (SIGSTOP, a host gone without a
// reset) keeps the connection open, and a Sentinel failover moves the
// commands to the new master but not the subscription. So the
// subscriber makes the subscription anew when it has delivered nothing,
// not even the process's own heartbeat, for deafAfter, and when the
// heartbeat finds Redis back (kick).
func (f *Fleet) subscriber() {
	defer f.wg.Done()
	f.subMu.Lock()
	ps := f.pubsub
	f.subMu.Unlock()
	first := true
	for f.ctx.Err() == nil {
		// The channels are kept even when this fails; Receive
		// (re)connects and (re)subscribes.
		since := time.Now() // what the subscription delivers was published after
		if err := ps.Subscribe(f.ctx, f.channel, f.beatChannel()); err != nil {
			f.refused(err)
		}
		for f.ctx.Err() == nil {
			msg, err := ps.ReceiveTimeout(f.ctx, heartbeat)
			if err != nil {
				if f.kicked.Load() {
					break
				}
				// While commands fail too, the heartbeat kicks once they
				// answer again.
				if f.up.Load() && time.Since(since) > deafAfter && f.deaf() {
					f.opt.logger.Warn("redisstate: the subscription delivers nothing; subscribing again",
						"origin", f.opt.origin, "silent", f.silent().Round(time.Millisecond))
					f.reloadSlots() // the node it is on may be gone, its slots another's
					break
				}
				if !isTimeout(err) {
					f.refused(err)  // SUBSCRIBE's refusal comes as the answer
					f.reloadSlots() // the node it was on may be gone, its slots another's
					f.pause(f.redial())
				}
				continue
			}
			f.hear()
			switch m := msg.(type) {
			case *redis.Subscription:
				f.heardSent(since.Sub(f.born), since.UnixNano())
				if m.Channel != f.channel {
					continue
				}
				if first {
					close(f.ready)
					first = false
				}
				f.enqueue(delivered{resync: true}) // Attach reads them too: it may have stopped waiting
			case *redis.Message:
				switch m.Channel {
				case f.channel:
					f.enqueue(delivered{payload: m.Payload, at: time.Now(), current: f.current()})
				case f.beatChannel():
					f.heardBeat(m.Payload)
				}
			}
		}
		ps = f.resubscribe(ps)
	}
}

// redial is how long the subscriber waits before it reconnects: a
// moment, or while the heartbeat finds Redis away, a heartbeat.
func (f *Fleet) redial() time.Duration {
	if f.up.Load() {
		return redialWait
	}
	return heartbeat
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// pause waits d or until Close.
func (f *Fleet) pause(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-f.ctx.Done():
	case <-t.C:
	}
}

// apply acts on one peer's message m, as d delivered it, with what the
// read of its note found when it needed one (applyAll); one that names
// no breaker of the registry is logged and ignored.
func (f *Fleet) apply(m message, d delivered, read noteLeftRead) {
	if m.Origin == f.opt.origin {
		return // our own
	}
	b, ok := f.reg.Lookup(m.Name)
	if !ok && m.Kind == kindOpen {
		if fam, _ := f.reg.FamilyOf(m.Name); fam != nil {
			// A family's key: what is left of its note first, so that a
			// message whose note is gone makes no key (and drops no live
			// one to make room for it).
			if window, live := f.noteLeft(m, d, read); live {
				start := time.Now()
				// Making the key reads its note and mode (sharer.Created),
				// a round trip that counts in the message's age.
				if b, ok := f.keyBreaker(m.Name); ok {
					if w := window - time.Since(start); w > 0 {
						b.PeerOpen(m.Origin, m.Reason, w)
					}
				}
			}
			return
		}
	}
	if !ok {
		f.ignore(errors.New("note names an unknown breaker"), "breaker", m.Name)
		return
	}
	switch m.Kind {
	case kindOpen:
		if window, ok := f.noteLeft(m, d, read); ok {
			b.PeerOpen(m.Origin, m.Reason, window)
		}
	case kindClose:
		b.PeerClose(m.Origin, m.Reason)
	case kindMode:
		f.applyMode(b, m)
	}
}

// noteLeft is the window a trip message opens a breaker for. Redis and
// TCP hold messages while the subscription stalls and deliver them when
// it heals, so a message's window, what was left when it was sent, may
// have run out meanwhile; a note keeps a breaker open past itself by
// freshFor at most (unless the read of its note fails).
//
// On one server (see ordered) the subscription delivers in the order the
// server publishes, so a message delivered after this process's own
// heartbeat was published after that heartbeat was sent: it is at most
// now - sent old, on this process's clock alone. Within freshFor of it
// (the ordinary case, each heartbeat sent half a second after the last),
// the message is taken at its word, less what it then waited for the
// applier, with no round trip to Redis: a trip reaches the peers in one
// hop, whatever a read would cost. Otherwise (the subscription was behind, has heard no
// heartbeat since it was made, or is on a Redis Cluster) the note's time
// left was read on the server (PTTL; no clocks compared; readNotes, with
// the other messages of its batch) and the message opens for the lesser;
// no note, and it opens nothing. A read that fails or takes longer than
// noteRead (or the fleet's timeout, if shorter) leaves the message's own
// window and does not count Redis as away: one slow read is not an
// outage, a peer's trip is not to be dropped for it, nor held up long.
func (f *Fleet) noteLeft(m message, d delivered, read noteLeftRead) (time.Duration, bool) {
	// What the message waited for the applier counts as its age too.
	window := time.Duration(m.MS)*time.Millisecond - d.waited()
	if window <= 0 {
		return 0, false
	}
	if d.current {
		return window, true
	}
	left := read.left - time.Since(read.at) // the batch's messages before it took that long
	switch {
	case read.err != nil && f.ctx.Err() != nil:
		return 0, false // closing: the fleet applies no more news
	case read.err != nil:
		return window, true
	case read.left < 0 || left <= 0: // -2: no note; -1: not a note of ours, with no expiry
		return 0, false
	}
	return min(left, window), true
}

// keyBreaker makes the breaker of a family's key that a peer's trip names,
// "<family>/<key>", when this process has that family and the key is not
// live here (apply has found the note live first): the family creates it within its keys bound, as for a call
// (dropping its least recently used CLOSED key if need be; the new
// breaker reads the note, so it starts OPEN). When every live key is out
// of CLOSED and the family is at its bound, so that nothing could make
// room, the note is ignored, as it is when no family has the name.
func (f *Fleet) keyBreaker(name string) (*runtime.Breaker, bool) {
	fam, key := f.reg.FamilyOf(name)
	if fam == nil {
		return nil, false
	}
	if b, ok := fam.Lookup(key); ok {
		return b, true
	}
	if h := fam.Health(); h.Keys >= h.Limit && h.Open >= h.Keys {
		f.ignore(errors.New("family is full of keys out of CLOSED"), "breaker", name, "family", fam.Name(), "keys", h.Keys)
		return nil, false
	}
	return fam.Breaker(key), true
}

func (f *Fleet) ignore(err error, attrs ...any) {
	f.opt.logger.Warn("redisstate: ignored a note: "+err.Error(), append([]any{"origin", f.opt.origin}, attrs...)...)
}

// cut shortens untrusted text for a log line.
func cut(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// resync reads the open notes and the modes of every breaker of the
// registry, as a late joiner or a reconnected process must.
func (f *Fleet) resync() {
	if bs := f.reg.Breakers(); len(bs) > 0 {
		f.readState(bs...)
	}
}

// readState reads the notes and the modes of bs and follows them: notes
// first (see [Fleet.followNotes]), then modes ([Fleet.followModes]). It
// reads stateBatch breakers in a round trip, each round trip waiting at
// most the timeout: one pipeline of three commands for each of 10,000
// breakers ran past the 50 ms default, so that a process with that many
// keys read no note at Attach and counted Redis away, and again at each
// heartbeat's resync. A round trip that fails before any has answered is
// Redis away, as for any operation, and nothing more is read: a process
// whose Redis is gone waits one timeout. One that fails after others
// answered is tried again once, and only failing again counts Redis away
// (the heartbeat then re-syncs when it answers): one slow read among
// many is not an outage.
func (f *Fleet) readState(bs ...*runtime.Breaker) {
	for i := 0; i < len(bs); i += stateBatch {
		chunk := bs[i:min(i+stateBatch, len(bs))]
		notes, modes, err := f.readBatch(chunk)
		if err != nil && i > 0 && f.ctx.Err() == nil {
			notes, modes, err = f.readBatch(chunk)
		}
		if err != nil {
			f.down(err)
			return
		}
		f.followNotes(chunk, notes)
		f.followModes(chunk, modes)
	}
}

// stateBatch is how many breakers readState reads in one round trip,
// three commands each: 768 commands take 2-10 ms on a loaded machine's
// loopback (20 ms under the race detector), well within the default
// timeout, and 10,000 breakers take 40 round trips.
const stateBatch = 256

// readBatch reads the notes and the modes of bs in one round trip, waiting
// at most the timeout, and leaves the fleet's state alone.
func (f *Fleet) readBatch(bs []*runtime.Breaker) (noteCmds, []*redis.StringCmd, error) {
	var notes noteCmds
	var modes []*redis.StringCmd
	err := f.bounded(f.ctx, func(ctx context.Context) error {
		cmds, err := f.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			notes = f.queueNotes(ctx, p, bs)
			modes = f.queueModes(ctx, p, bs)
			return nil
		})
		if errors.Is(err, redis.Nil) {
			err = answered(cmds) // a missing key is an answer; another command may have failed
		}
		return err
	})
	if err != nil {
		// The round trip may still be under way, writing notes and
		// modes: they are not to be read.
		return noteCmds{}, nil, err
	}
	return notes, modes, nil
}

// answered returns the first error of cmds other than redis.Nil, or nil.
func answered(cmds []redis.Cmder) error {
	for _, c := range cmds {
		if err := c.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
	}
	return nil
}

// noteCmds are the reads of the open notes of some breakers: each one's
// value and time left.
type noteCmds struct {
	gets []*redis.StringCmd
	ttls []*redis.DurationCmd
}

// queueNotes adds the reads of bs's open notes to p.
func (f *Fleet) queueNotes(ctx context.Context, p redis.Pipeliner, bs []*runtime.Breaker) noteCmds {
	n := noteCmds{gets: make([]*redis.StringCmd, len(bs)), ttls: make([]*redis.DurationCmd, len(bs))}
	for i, b := range bs {
		key := f.noteKey(b.Name())
		n.gets[i] = p.Get(ctx, key)
		n.ttls[i] = p.PTTL(ctx, key)
	}
	return n
}

// followNotes opens each of bs that has a live note, for what is left of
// it, but for this Attach's own notes. A note of this process's origin
// that another Attach wrote is followed: a process restarted under the
// same origin (a StatefulSet's pod, a container restarted in place) finds
// the live trips of its former self, which it used to skip as its own,
// coming up CLOSED for a source the rest of the fleet kept out. A note of
// an earlier version names no Attach, so is not this one's either.
func (f *Fleet) followNotes(bs []*runtime.Breaker, cmds noteCmds) {
	for i, b := range bs {
		val, err := cmds.gets[i].Result()
		if err != nil {
			continue // no note
		}
		left := cmds.ttls[i].Val()
		n, err := parseNote(val, left)
		if err != nil {
			f.ignore(err, "breaker", b.Name(), "note", cut(val))
			continue
		}
		if n.Instance != f.instance {
			b.PeerOpen(n.Origin, n.Reason, left)
		}
	}
}

func (f *Fleet) noteKey(name string) string   { return f.opt.prefix + "open:" + name }
func (f *Fleet) originKey() string            { return f.opt.prefix + "origin:" + f.opt.origin }
func (f *Fleet) leaseKey(name string) string  { return f.opt.prefix + "probe" + tagged(name) }
func (f *Fleet) closedKey(name string) string { return f.opt.prefix + "closed" + tagged(name) }

// tagged is the part of a lease or closed key after its kind: ":{name}",
// so that Redis Cluster, which hashes the text between a key's first {
// and the next }, puts the two keys the lease script reads on one slot.
// A name that starts with } would leave that text empty (the whole key is
// hashed then, and the script fails with CROSSSLOT): its keys are
// "!:{_}name" instead, a form no other name takes.
func tagged(name string) string {
	if strings.HasPrefix(name, "}") {
		return "!:{_}" + name
	}
	return ":{" + name + "}"
}

// hashTag is the text of key that Redis Cluster hashes to find its slot.
func hashTag(key string) string {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j]
		}
	}
	return key
}

// checkPrefix refuses a prefix whose braces would take the hash tag of a
// breaker's keys: with "x{" the lease and closed keys would hash
// differently and the lease script could not run on a Redis Cluster.
func checkPrefix(prefix string) error {
	if hashTag(prefix+"probe:{x}") != hashTag(prefix+"closed:{x}") {
		return fmt.Errorf("redisstate: prefix %q: its braces would put a breaker's lease keys on two Redis Cluster slots", prefix)
	}
	return nil
}

// Created reads the note and the mode of a breaker created after Attach,
// so that it starts OPEN for what is left of a peer's trip, or in the
// fleet's mode. It runs on the breaker's first call: one round trip, so
// that the call waits on Redis at most the timeout.
func (s *sharer) Created(b *runtime.Breaker) {
	f := (*Fleet)(s)
	if f.up.Load() {
		f.readState(b)
	}
}
