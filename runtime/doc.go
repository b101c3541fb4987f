// Package runtime is the user API of breakergen's wrappers: named circuit
// breakers, token-bucket limiters, a registry that owns them, an in-memory
// degradation-event log, health levels, retry budgets, fallbacks and
// provenance records. What only generated code calls lives in
// runtime/breakerimpl.
//
// It depends on the standard library only; the HTTP endpoints and the
// dashboard live in the subpackage runtime/httphealth.
//
// # Breakers
//
// A [Breaker] is CLOSED, OPEN or HALF_OPEN ([State]). CLOSED admits every
// call and counts consecutive failures; reaching the threshold moves it to
// OPEN, which rejects every call with an error matching [ErrOpen] (an
// [*OpenError] naming the breaker and the next probe) without calling the
// upstream. Once the reset window has passed it is HALF_OPEN and admits a
// few probes: enough successes close it, one failure re-opens it. A probe
// whose outcome never comes back is reclaimed as a failure after the window,
// so a breaker can never stay HALF_OPEN for ever. A call's outcome counts
// only in the state period that admitted it.
//
// Outcomes: nil is a success; an error the route excludes is a success; a
// [context.Canceled] while the caller's context is done counts as neither;
// every other error, a DeadlineExceeded included, is a failure. A
// classifier ([WithClassifier]) may decide otherwise per breaker. A panic is a failure and is
// re-raised. An error whose chain has RetryAfter() time.Duration returning
// more than zero opens the breaker at once for that long (a 429 or a ban).
//
// # Trip conditions over a window
//
// Consecutive failures trip too often at high traffic and can miss an
// outage whose failures interleave with successes. With a window
// ([Config].WindowCalls, the last N calls; or WindowPeriod, the last D) a
// breaker trips when the window holds at least MinimumCalls calls and the
// failure rate reaches FailureRate, or the share of slow calls (longer
// than SlowCall) reaches SlowRate; FailureThreshold then applies only when
// given. [Config].InFlight counts a call still running after that long as a
// failure, checked at admissions and looks at the state, without timers.
// The reasons say what tripped: "failure rate 62% (31 of 50 calls in
// 1m0s) >= 50%". A count window costs a CLOSED success nothing while it
// holds no failure; a time window counts one without a lock or a clock
// read; SlowCall and InFlight read the clock twice per call (a duration
// needs both ends) and take no lock that all calls share. [Stats] shows
// the window's figures.
//
// # Calling through a breaker
//
// Hand-written code calls [Breaker.Do], or takes the same two steps
// itself: [Breaker.Acquire] returns a [Token] that [Breaker.Release] takes
// with the call's error. Generated wrappers run the same protocol through
// package runtime/breakerimpl, which is for generated code only: the same
// admission, the same outcome recording and the same panic rule. Neither
// allocates, takes a lock or reads the clock on the CLOSED success path
// (without [WithCallCounts]) or on the rejection path.
//
// # Registry
//
// A [Registry] owns breakers and limiters by name; wrappers that name the
// same breaker share it, and the first settings registered for a name win.
// [Default] is the process-wide registry. [Registry.Health] reports a
// [Level] per breaker and [Registry.Events] the degradation log, newest
// first: every transition logs one INFO line (breaker[tdx] CLOSED → OPEN),
// records one [Event] and calls the [OnStateChange] hooks, outside every
// lock and in order. The log line and the hooks go through a bounded queue
// ([EventQueueCapacity]): a sink slower than a storm of transitions
// loses the oldest lines and hook calls, counted in [Health], never an
// Event of the log nor a state change, and no caller delivers more than a
// few queued events. [Breaker.Reset] and [Registry.ResetAll] clear
// everything and record no event.
//
// Settings can be changed at run time by name: [WithConfig] and
// [WithRateLimit] in code, BREAKER_<NAME>_THRESHOLD, _RESET, _HALFOPEN,
// _SUCCESSES, _RATELIMIT, _WINDOW, _FAILRATE, _MINIMUM, _SLOW, _SLOWRATE,
// _INFLIGHT, _CONCURRENCY, _THROTTLE and _JITTER in the environment, with
// _MODE (below) and, for rehearsals, _FAULT and _LATENCY (NAME is the
// name in upper case, with '.', '-' and ':' as '_'). [WithConfig] wins
// over the environment, which wins over the annotation; a window given by
// a layer, of calls or of time, replaces the lower layer's. A setting whose
// name matches no breaker, family or limiter (BREAKER_QOUTES_THRESHOLD for
// a breaker called quotes) applies to nothing: [Registry.Unmatched] lists
// it, and so do [Health] and the dashboard of runtime/httphealth; so is a
// name a fleet shares that no limiter has ([LimitSharer]).
//
// # Retries, budgets and chains
//
// A route with attempts makes each try through its breaker on its own:
// waits honour the ctx, and retrying stops at a rejection, a
// non-retryable error ([Retryable]) or a spent budget. [WithBudget] shares
// a budget of upstream tries across every guarded call made for one
// request.
//
// A generated chain tries the primary, then each [Fallback] (guarded by its
// own breaker, fallback:<name>), then a cache of the last valid results;
// its error is a [*ChainError]. [WithProvenance] lets the caller learn
// which source answered, of a chain or of a plain wrapper. A chain route with hedge races its sources: when
// the source asked is late the next is asked too, the first valid answer
// wins, and the losers' cancellation is not their failure
// ([Provenance].Hedged). [Registry.ChainAnswers] counts the chains'
// answers by source and kind.
//
// # Load control
//
// Two settings of a breaker shed load before it reaches the upstream.
// Config.Concurrency is a bulkhead: at most that many calls in flight, the
// others waiting for a slot up to the route's maxwait or their ctx's
// deadline, then refused with [ErrBulkheadFull]. Config.Throttle is the
// Google SRE book's adaptive client-side throttling: as the upstream
// accepts fewer of the last two minutes' requests, more new calls are
// refused locally with [ErrThrottled] ([WithRand] pins its draws). On the
// way in a call meets the breaker, the limiter, the throttle, then the
// bulkhead; each refusal frees what the steps before it took, counts as
// neither success nor failure, is not retried and costs no budget. Their
// calls leave the fast path: a bulkhead slot costs two shared atomic
// writes per call, the throttle one or two and a clock read every ten
// seconds.
//
// # Operator controls
//
// An operator's hand on a running service (docs/operate.md):
// [Breaker.Isolate] refuses every call with the operator's reason until
// [Breaker.Resume]; [Breaker.Bypass] admits every call and never trips,
// the limiter, timeouts and bulkhead still applying; BREAKER_<NAME>_MODE
// sets either when a breaker is created. [Registry.Update] and
// [Registry.UpdateRateLimit] change settings live, keeping the state: the
// counts stay where the trip rule keeps its shape and start fresh where a
// window's shape changes, a bulkhead or throttle follows at once, and
// Config.Off turns a setting off.
// Config.ResetMax doubles the OPEN period after each failed probe, and
// Config.ResetJitter spreads it. Each records an [Event]. Package
// httphealth serves the modes over HTTP with WithControl, and package
// redisstate shares them with the fleet.
//
// # Rehearsal
//
// Before production (docs/rehearse.md): Config.Fault and Config.Latency
// (BREAKER_<NAME>_FAULT, BREAKER_<NAME>_LATENCY) inject failures and
// delays by breaker name, failing with [ErrInjected]; [WithRecorder]
// writes every call's breaker, start, duration and outcome class for
// `breakergen sim`, which replays them against candidate settings, and
// [Registry.Close] ends the recording.
//
// # Testing
//
// The runtime starts no goroutines or timers of its own at package level,
// so it works inside a testing/synctest bubble: a test can let a 30-second
// window pass at once (a [WithRecorder] registry's goroutine ends with
// [Registry.Close], which the test calls before the bubble ends).
// [WithClock] takes a hand-stepped clock instead.
package runtime
