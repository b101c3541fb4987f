// Package redisstate shares a [runtime.Registry]'s breakers and rate limits
// with the other processes of the same service through Redis (Redis 6+ or
// Valkey; any [redis.UniversalClient]).
//
//	rdb := redis.NewClient(&redis.Options{Addr: "redis:6379"})
//	fleet, err := redisstate.Attach(runtime.Default(), rdb,
//		redisstate.WithSharedLimits("eastmoney"))
//	if err != nil { ... }
//	defer fleet.Close()
//
// # What is shared
//
// Each process keeps its own breakers, which decide every call; the fleet
// shares only news:
//
//   - A trip. When a breaker opens on its own, the process writes a note,
//     the key <prefix>open:<name> whose expiry is the window left, and
//     publishes it on the channel <prefix>events (<prefix>events:db<n>
//     for a client of database n other than 0: Redis pub/sub ignores the
//     database, see [WithPrefix]). Every other process
//     opens its breaker of that name for what is left of the window, with
//     the reason "peer <origin>: <reason>". Durations cross the wire, never
//     clock readings. A note can open a breaker, never close one, and
//     keeps it open past the note by 750ms at most (a message held up to
//     that long is taken at its word; one that may have been held longer,
//     and every one on a Redis Cluster, is checked against the note's
//     time left, waiting 100ms at most). A process that attaches late, reconnects, or
//     creates a breaker later reads the notes at once.
//   - A key. A family's key breaker (runtime.Family, "<family>/<key>")
//     is shared like any breaker. A trip note for a key that is not live
//     here creates it in this process's family of that name, within the
//     family's keys bound (it starts OPEN); when the family is full with
//     every live key out of CLOSED, or there is no such family, the note is
//     logged and ignored.
//   - A probe. When a window ends, only the process that takes the lease
//     <prefix>probe:{<name>} (SET NX PX, for twice the probe window: the
//     reset window, or a route's longer timeout) moves to HALF_OPEN and
//     probes, as its breaker's settings say; the others stay OPEN,
//     rejecting, until its result comes: a success closes every process's
//     breaker (the only message that closes one, with an operator's
//     Resume), a failure opens them all for the new window. A holder with
//     no call to probe with in the first window goes back to OPEN and gives
//     the lease back, for another process to take; every probe it admits
//     ends inside the lease, so no two processes probe at once. A holder
//     that dies loses the lease when it expires, and another process
//     probes.
//   - A limit. [WithSharedLimits] makes the token bucket of each name one
//     GCRA bucket in Redis (a Lua script on the server's TIME), so that
//     ratelimit=1.5/3 holds for the fleet. Waits honour maxwait and the
//     ctx's deadline; a call that gives up takes no token.
//   - An operator's mode (SPEC §14). [runtime.Breaker.Isolate], Bypass
//     and Resume in one process write the key <prefix>mode:{<name>}
//     (no expiry: {"v":1,"mode":"isolated"|"bypassed"|"auto",...,"seq":N},
//     "auto" for a Resume, seq ordering the changes so that a late or
//     repeated message never undoes a newer one) and publish it: every process follows with the
//     reason "peer <origin>: isolated by operator: <reason>", a process
//     that attaches later reads it, and a Resume from any process ends
//     it. A Resume also lets back in every process a source that tripped
//     (its trip's note goes, so that a process attaching later does not
//     come up OPEN). A Redis outage never lifts a mode: each process keeps
//     what it knew, writes a change made meanwhile when Redis is back, and
//     writes a mode again into a Redis that restarted without it. A mode
//     from BREAKER_<NAME>_MODE stays in its process, a peer's Resume
//     included.
//
// The CLOSED success path never touches Redis, nor does a rejection.
//
// # When Redis is away
//
// Every Redis operation is bounded by [WithTimeout] (50 ms by default),
// enforced here whatever the client's own timeouts are, so a plain
// redis.NewClient(&redis.Options{Addr: ...}) is enough. No call waits on
// Redis longer: the first call of a breaker created after Attach reads its
// note and its mode in one round trip. A call never fails because Redis
// is unreachable, stopped or restarted: the process goes on with its own
// breakers, probes for itself, and takes tokens from a local bucket at
// [WithLocalShare] of the limiter's current rate (a
// [runtime.Registry.UpdateRateLimit] applies to it as to the limiter: the
// tokens it holds stay, cut to a smaller burst). A heartbeat notices when
// Redis answers again: the process subscribes again, re-reads the notes,
// and publishes again its own trips whose window still runs (made while
// Redis was away, or lost with a restarted Redis). A subscription that
// delivers nothing, not even the process's own heartbeat, for 1.5 s while
// commands answer (a hung master, a Sentinel failover) is made anew.
// [runtime.Health] reports "fleet": {"redis": "ok" | "down", "members":
// N}, "down" also while the subscription is deaf past that bound, and
// "duplicate_origin" while another live member uses this one's origin
// ([WithOrigin]).
//
// # Cluster and Sentinel
//
// A [redis.ClusterClient] works as it is: the two keys the lease script
// reads share a hash tag, so a slot (Attach refuses a prefix whose braces
// would break that). So does a [redis.NewFailoverClient]: when the master
// dies each process goes local and comes back after the promotion.
// Replication being asynchronous, a failover can lose a note, a lease or
// a bucket's last tokens: at worst, each process decides alone for one
// window (docs/fleet.md says exactly what that allows).
//
// Notes and messages are versioned JSON. One that does not parse, names a
// breaker the registry does not have, or asks for more than 24 h (no real
// note does: cooldowns are capped there) is logged and ignored. Use
// go-redis's options for AUTH, ACLs and TLS. A user of the fleet needs
// the keys ~<prefix>* and the channels &<prefix>*, and the commands GET,
// SET, SETNX, DEL, PTTL, PEXPIRE, ZADD, ZREM, ZREMRANGEBYSCORE, ZCARD,
// ZSCORE, TIME, PUBLISH, SUBSCRIBE, EVALSHA and EVAL (and CLUSTER SLOTS
// on a Redis Cluster); a refusal (NOPERM) is logged at Error, naming
// them.
package redisstate
