// Breakergen writes typed circuit-breaker wrappers for annotated Go
// interfaces.
//
// Add it to your module as a tool (the module needs Go 1.25 or later; go
// get -tool records the generator in go.mod's tool directive):
//
//	go get -tool github.com/breakergen/breakergen/cmd/breakergen
//
// Annotate an interface with //breaker: lines and run breakergen (usually
// through go generate) in its package:
//
//	//go:generate go tool breakergen
//
//	// StockSource is where quotes and k-lines come from.
//	//
//	//breaker:name=eastmoney threshold=5 reset=30s ratelimit=1.5/3
//	//breaker:name=tencent methods=Quote,Stock* timeout=2s exclude=ErrNotFound
//	type StockSource interface {
//		Quote(ctx context.Context, code string) (Quote, error)    // -> tencent
//		StockInfo(ctx context.Context, code string) (Info, error) // -> tencent
//		Search(ctx context.Context, q string) ([]Hit, error)      // -> eastmoney
//		//breaker:name=push2ex threshold=2
//		Changes(ctx context.Context) ([]Change, error)            // -> push2ex
//		//breaker:skip
//		Ping(ctx context.Context) error                           // unguarded
//		//breaker:skip
//		Name() string                                             // unguarded: cannot fail
//	}
//
// For each annotated interface X declared in f.go, breakergen writes to
// f_breaker.go (f_test.go gives f_breaker_test.go, and a name's platform
// stays at its end: f_windows.go gives f_breaker_windows.go) a type XBreaker that
// implements X by calling the wrapped X through the breakers (and rate
// limiters) of a github.com/breakergen/breakergen/runtime registry (the
// generated code calls them through runtime/breakerimpl, a package for
// generated code only), and its constructor:
//
//	func NewXBreaker(next X, reg *runtime.Registry) *XBreaker
//
// A nil reg means runtime.Default(). Wrappers that name the same breaker on
// one registry share it. An unexported interface x gets xBreaker and
// newXBreaker; a generic interface gets a generic wrapper with the same type
// parameters and constraints.
//
// Usage:
//
//	breakergen [-type A,B] [-tags TAGS] [-check] [-strict] [packages]
//
// The packages are go command patterns (default "."), matched as the go
// command matches them: "..." is a wildcard anywhere (./svc_... names
// ./svc_a and ./svc_b; x/... names x too, but no directory that go.mod's
// ignore directives name), in directory and import path forms alike. They
// are packages, not files: a Go file given in place of
// one (mockgen's $GOFILE), or one that does not exist, is a usage error
// that says what to write, "." for the package of the directory and -type
// to select its interfaces. Every
// package is loaded with one go/packages call. Test files are loaded when one of them
// contains "breaker:" (every annotation does) or an earlier
// f_breaker_test.go is there; otherwise, however many other generators'
// mocks they hold, they cost the run next to nothing: in a package with
// annotated interfaces, those that hold a wrapper's name (SBreaker,
// NewSChain) are parsed, not type-checked, for the names they declare,
// which the wrappers' names must not take (the package's tests share its
// scope). The flags are:
//
//	-type A,B
//		generate only the files of the named interfaces (an error if one
//		of them is not an annotated interface): each of those files gets
//		the wrappers of every annotated interface declared beside the
//		named one, since they share it. Every annotated interface is still
//		checked and its settings shared by name, as in a full run, but
//		only the warnings of the files it writes are printed (and count
//		for -strict): the others are their own runs'. No output is
//		removed.
//	-tags TAGS
//		build tags to load the packages with, as for go build.
//	-check
//		write nothing; if any output would be written or removed, name
//		each such file on stderr and exit with status 1, and name every
//		file breakergen did not write that is in an output's way, as a run
//		without -check would. Use it in CI to check that generated files
//		are up to date. An output whose source the run's tags, GOOS and
//		GOARCH leave out is not checked, and -check names it: check it
//		with the -tags (or GOOS, GOARCH) it builds with, as go generate
//		passes no -tags to breakergen.
//	-strict
//		treat every warning (see Warnings below) as an error: print the
//		warnings, write nothing and exit with status 1. With -check, CI
//		fails on annotations that do nothing or leave methods unguarded.
//
// # Annotations
//
// An annotation is a line comment that starts exactly with //breaker: (no
// space, like //go:generate) in the doc comment of an interface (on the
// TypeSpec inside type ( ... ), or on the type declaration) or of a method
// inside an interface literal. The rest of the line is space-separated
// key=value options and flags. A comment written "// breaker:" with a space
// is an ordinary comment; breakergen warns about it. The doc comment must
// touch the declaration: a //breaker: line with a blank line below it, or
// in any other comment (a struct field's, a statement's, the package
// clause's), annotates nothing, and breakergen warns about it.
//
// Keys are separated by spaces: name=a,threshold=3 is an error that says
// so (a comma separates only the items of methods and exclude). A line
// ends at a word starting with //: what follows is a trailing comment,
// ignored with a warning (the keys before it apply), unless every word of
// it reads as a key (key=value with a known key, or a known flag, as in
// "//breaker:name=a // threshold=3"), which is an error, since keys
// written there would be silently ignored. Put comments on a line of
// their own above the //breaker: line.
//
//	key          value               meaning                                         default
//	name         [a-z0-9_.:-]+       registry name of the breaker and limiter;       the interface's name, lower-cased
//	                                 wrappers that name the same breaker share it
//	threshold    int >= 1            consecutive failures that trip CLOSED -> OPEN   5
//	reset        D or D..MAX         how long OPEN lasts before a probe is allowed;  30s
//	                                 with MAX, each failed probe doubles it up to
//	                                 MAX, and a close returns to D; each at most
//	                                 24h
//	jitter       0%..100%            each OPEN period is drawn uniformly in          0%
//	                                 [d*(1-P), d] from the registry's rand, so a
//	                                 fleet's probes spread out
//	halfopen     int >= 1            concurrent probes admitted in HALF_OPEN         1
//	successes    int >= 1            consecutive probe successes that close it       1
//	ratelimit    R/B                 token bucket: R tokens per second (at most      none
//	                                 1e9), burst B
//	window       N >= 10 or D >= 1s  trip on rates over the last N calls (at most    none
//	                                 1048576) or the last D (ten buckets of D/10);
//	                                 with it, threshold applies only when given
//	failrate     1%..100%            trip when the window holds minimum calls and    50%
//	                                 failures/calls reaches this; needs window
//	minimum      int >= 1            calls the window must hold before a rate        20, at most N
//	                                 applies; needs window
//	slow         Go duration         a call that ends after this long is slow,       none
//	                                 whatever its outcome; needs window
//	slowrate     1%..100%            trip when slow/calls in the window reaches      50%
//	                                 this; needs window
//	inflight     Go duration         a call still running after this long counts as  none
//	                                 one failure then; its later outcome is ignored
//	concurrency  int >= 1            most calls of the name in flight; one more      none
//	                                 waits for a slot up to maxwait or the ctx
//	                                 deadline, then fails with ErrBulkheadFull
//	throttle     float in 1..1e6     adaptive throttling: with R calls and A         none
//	                                 accepted in the last 2 minutes, refuse a call
//	                                 with ErrThrottled with probability max(0,
//	                                 (R-K*A)/(R+1))
//	keys         int >= 1            most per-key breakers of a keyed name live at   1000
//	                                 once; past that the least recently used CLOSED
//	                                 one with no call in flight is dropped; needs
//	                                 key
//	maxopen      1%..100%            at most P% of a keyed name's live keys out of   none
//	                                 CLOSED at once (at least one); a key that
//	                                 would trip past that stays CLOSED; needs key
//	maxwait      Go duration         longest a call waits for a token or a slot      the ctx deadline
//	                                 before ErrRateLimited or ErrBulkheadFull;
//	                                 needs a ratelimit or a concurrency for its
//	                                 name
//	timeout      Go duration         per-try deadline added to the method's ctx (a   none
//	                                 nil ctx is taken as context.Background())
//	exclude      ErrA,pkg.ErrB       errors (matched with errors.Is) that count as   none
//	                                 success
//	attempts     int >= 1            tries per call, the first included; each goes   1
//	                                 through the breaker, so attempts at or above
//	                                 threshold let one call trip it by itself
//	backoff      D or D..MAX         wait between tries: fixed, or exponential from  100ms
//	                                 D capped at MAX with full jitter
//	budget       int >= 1            most upstream tries one call may spend, across  none
//	                                 retries and fallbacks (also
//	                                 runtime.WithBudget)
//	valid        F or pkg.F          func(results...) bool; false means "no data":   none
//	                                 neither success nor failure, never kept; - on
//	                                 a method's line clears it
//	failure      F or pkg.F          func(results...) error judging an answer that   none
//	                                 came without an error (an HTTP 503); non-nil
//	                                 counts as that failure, a RetryAfter in it
//	                                 included, and the answer still reaches the
//	                                 caller; - on a method's line clears it
//	stale        Go duration         keep the last valid result per arguments this   none
//	                                 long, for when the call fails; 0 on a method's
//	                                 line clears it
//	stalesize    int >= 1            most results kept per method; needs stale       1024
//	key          PARAM or host       one breaker <name>/<value> per value of that    none
//	                                 parameter (a string or integer kind, or a
//	                                 fmt.Stringer); host on a method with an
//	                                 *http.Request keys by its URL.Host; - on a
//	                                 method's line clears it
//	hedge        Go duration         in a chain: when the source asked has not       none
//	                                 answered within D, also ask the next one; the
//	                                 first valid answer wins
//	hedges       int >= 1            most extra sources in flight for one call;      1
//	                                 needs hedge
//	methods      Name,Glob*          on an interface line: the methods this line     -
//	                                 routes; the line without methods is the
//	                                 default route
//	skip         flag                on a method's line: delegate without any guard  -
//	chain        flag                on an interface line: also write the fallback   -
//	                                 chain XChain and NewXChain
//
// threshold, reset, jitter, halfopen, successes, ratelimit, window,
// failrate, minimum, slow, slowrate, inflight, concurrency, throttle, keys
// and maxopen belong to the name: every route that names it shares one breaker and one limiter, and
// their settings may be given once and the name used bare elsewhere
// (name=eastmoney), in any interface of the same package (what a package's
// wrappers get never depends on the other packages of the run: go generate
// runs one at a time, so another package that uses the name gives the
// settings it needs itself). Two different values for one setting of a
// name, in one package or two of a run, are an error citing both
// positions. timeout,
// maxwait and exclude belong to the line and apply to the methods it
// routes. maxwait needs a ratelimit or a concurrency for its name.
//
// key=PARAM gives each value of a method's parameter its own breaker,
// "<name>/<value>", in a family bounded by keys and maxopen (SPEC §15,
// docs/keys.md): a string or integer kind (named ones too; an integer
// keys by its decimal form, even when its type has a String method) or a
// fmt.Stringer, or a type parameter whose constraint allows one kind of
// those only (K ~string; I ~int32 | ~int64). key=host keys a method taking an *http.Request by its
// URL.Host, unless the method has a parameter named host, which wins: the
// key names what is written. On an interface line, every guarded method
// it routes needs the parameter; a method line clears an inherited key
// with key=-. A name is either keyed or not: a keyed and an unkeyed route
// of one name are an error, and so are keys and maxopen without a key for
// their name. The methods of one interface that name a keyed breaker share
// one family, so they share its line's timeout, maxwait, exclude,
// attempts, backoff, budget and hedge. With the chain flag, the chain's
// primary is keyed the same way and its fallbacks are not.
//
// window turns on rate-based tripping over the last N calls (window=100)
// or the last D (window=1m): the breaker trips when the window holds at
// least minimum calls and failures/calls reaches failrate, or slow/calls
// reaches slowrate (a call is slow when it ends after slow). With a
// window, threshold applies only when it is given. failrate, minimum, slow
// and slowrate need a window for their name; inflight, which counts a call
// still running after D as one failure, works with or without one.
// concurrency bounds the calls of a name in flight (runtime.ErrBulkheadFull
// past maxwait or the ctx deadline), and throttle=K refuses calls locally
// with runtime.ErrThrottled as the upstream's accepted share falls. Every
// name key can be overridden at run time (runtime.WithConfig,
// BREAKER_<NAME>_WINDOW and its siblings).
//
// attempts, backoff and budget are line keys too. A route with attempts > 1
// or a budget retries: every try goes through the breaker and the limiter
// and is recorded on its own, the timeout applies per try, and retrying
// stops when the breaker rejects, the ctx ends, the budget (the route's,
// and the smallest of those runtime.WithBudget put in the ctx) is spent, or
// the error is not retryable (excluded errors, the caller's ctx errors,
// runtime.ErrRateLimited, and errors whose chain has Retryable() false or a
// RetryAfter() method). A call that made a try returns the last upstream
// error; one that made none returns the rejection or runtime.ErrBudget.
// Routes without these keys make one try per call, with no loop.
//
// exclude names package-level error values as the interface's file sees
// them (ErrNotFound, io.EOF, or EOF where the file dot-imports io); each
// must exist and implement error.
//
// valid names a package-level func (F, or pkg.F of an imported package)
// taking the method's non-error results and returning bool (or a named
// bool type, which the wrapper converts); it is resolved
// and type-checked at generation time, must fit every method its line
// routes, and may not be generic. An answer for which it returns false is
// "no data": neither success nor failure for the breaker, passed over by a
// chain, never kept. stale keeps the last valid result per method and
// argument values (the ctx aside, a context of another type such as a
// *gin.Context included; they must be comparable) for that long;
// stalesize needs stale. A method line clears inherited keys with valid=-
// and stale=0.
//
// hedge and hedges are line keys of a chain (they need the chain flag on
// the interface): see Hedged chains below.
//
// # Routing
//
// Each method of the interface's method set (embedded interfaces included)
// is routed, at generation time, by:
//
//  1. its own line: with name, a route of its own; without name, the route
//     it would otherwise take, with the line keys it gives replaced;
//  2. else the first interface line whose methods patterns match it
//     (path.Match globs; a list that matches no method is an error, as is
//     a plain name that names none; a glob that matches nothing beside
//     patterns that do draws a warning);
//  3. else the interface line without methods (at most one);
//  4. else it is delegated unguarded.
//
// Methods whose last result is not error cannot report a failure or a
// rejection: they are delegated unguarded, and the generated comment says
// so, unless that result carries its error (below). Methods whose first
// parameter is a context.Context pass it to the breaker, the limiter and
// the per-call timeout. A method with a parameter that has a method
// Context() context.Context and a WithContext taking one back (an
// *http.Request) takes that ctx instead, and a timeout's ctx goes on with
// the parameter's WithContext; so it does in the *http.Request of a
// method with a context.Context first parameter (a Do(ctx, req)), when
// the request was made on that ctx. Otherwise a first parameter of another
// type that implements context.Context (an interface embedding it, a
// *gin.Context, a type parameter) is the ctx, for all but the timeout:
// the wrapper cannot put a deadline into a value of that type, so a
// timeout that reaches the method draws a warning (an error on the
// method's own line), and a nil pointer or interface is answered with an
// error matching breakerimpl.ErrNilArg (a type parameter is not checked).
// A struct value holding a context.Context is not taken (a zero one would
// panic in the breaker's hands): a warning says so. A parameter with
// Context() alone gives the ctx, without a timeout; the others use
// context.Background(), and a timeout that reaches them draws a warning
// (an error when it is on the method's own line). Method lines are read
// only
// on methods written in the interface literal itself; embedded methods are
// routed by the interface's lines (a line on an embedded method draws a
// warning: declare the method beside the embedding, with its line).
//
// # Results that carry their error
//
// A method whose last result is not error but has a method Err() error
// (go-redis v9 commands, *sql.Row) is guarded too: the wrapper calls it,
// and the result's Err() is the outcome. A refusal (open breaker, limiter,
// budget, bulkhead, throttle) comes back in the same result type: a new
// value whose SetErr was given the refusal (go-redis: new(redis.StringCmd)),
// or, for *sql.Row, a row whose Err() and Scan are the refusal (package
// runtime/breakerimpl/sqlimpl); such a refusal allocates that one value.
// A result with an Err() but neither way is an error at generation time:
// skip the method or annotate a narrower interface. context.Context's Err
// is its own state, not an outcome: a method returning one is delegated.
// go-redis's redis.Nil (a missing key) is an answer, not a failure, in a
// command's Err(); so are redis.Nil and redis.TxFailedErr (a watched key
// changed) in the error result of a go-redis method (one whose signature
// spells a go-redis type: Pipelined, TxPipelined, Process, Watch), whose
// route excludes them as if its line's exclude named them; exclude works
// as for any error. A method returning go-redis's []redis.Cmder beside
// its error (Pipelined, TxPipelined, Exec) counts the first command's
// error that is not redis.Nil (breakerimpl.FirstFailed), so that a miss
// ahead of a failed command hides no failure; its caller gets go-redis's
// error unchanged. A *sql.Row is read after the call returns, so a
// timeout does not apply to it (a warning). With attempts, each try is
// judged on its own; a refusal after a try leaves the last answer. valid
// takes the carrier too; stale keeps it as returned (an error for a
// *sql.Row or *http.Response, which are read once); a chain moves on from
// a failed outcome and returns its ChainError in a new carrier, or as the
// error of a method that has one. hedge races such methods too: a losing
// source's answer that holds a connection (a *sql.Row, *sql.Rows, an
// *http.Response) is released when the race ends, and a winner is not
// (docs/hedge.md).
//
// failure names a package-level func taking the method's non-error results
// (the carrier included) and returning error: an answer that came without
// an error for which it returns non-nil counts as that failure for the
// breaker (a RetryAfter() in it opens the breaker for that long), and the
// answer still reaches the caller unchanged. It is a key of its own rather
// than valid's: valid's false is "no data", neither success nor failure,
// while a 503 is a failure of the upstream. For net/http,
// runtime/httpguard.Failure judges 5xx and 429 failures, with Retry-After
// on a 429 or 503 (seconds or an HTTP date, capped at 24h) as the wait. A
// response judged a failure is returned to the caller, who owns its body
// as with any http.RoundTripper: the wrapper never reads or closes it;
// one a retry replaces, which no caller sees, is drained and closed
// (httpguard.Discard). A nil *http.Response with a nil error is a
// failure, returned as an error matching breakerimpl.ErrNilResult.
// With a timeout, a *http.Response's body keeps the timeout's ctx alive
// until the caller closes it (httpguard.CancelOnClose); a 101 Switching
// Protocols is returned as it is, its body the writable connection. The generated
// comment of each method says how it is guarded. See docs/clients.md.
//
// # Generated code
//
// Output starts with "// Code generated by breakergen. DO NOT EDIT.",
// carries the source file's build constraint as a //go:build line (a
// source constrained by legacy // +build lines alone gets the equivalent
// //go:build line), is gofmt-clean and byte-identical across runs. An output whose source has no annotation
// left is removed; under go generate, which fails on a file that
// disappears while it runs, it is emptied instead (its header, a note,
// its //go:build line and its package clause), and -check accepts it; a
// run outside go generate removes it. A guarded method returns
// breakerimpl.ErrNilImpl when the wrapped value is nil, the nil interface
// or a nil pointer, map, func, chan or slice in it (a var db *sql.DB never
// assigned; tested once, by the constructor), without calling it (a
// method delegated unguarded, skipped or with no error result, calls a
// typed nil as it is, and answers the nil interface with ErrNilImpl when
// it has an error result, else panics as a call of it would), the
// breaker's rejection
// (errors.Is(err, runtime.ErrOpen)) or the limiter's refusal
// (runtime.ErrRateLimited) without calling the wrapped method, and
// otherwise calls it and reports its outcome; a panic counts as a failure
// and is re-raised. A method whose route retries loops over its tries and
// makes each in an unexported helper, tryM, that defers the try's Exit.
//
// With valid, each try is judged by it (call.ExitValid); with stale, a
// wrapper serves the kept result when the call fails, is rejected or
// answers invalid data (an invalid answer with nothing kept is returned as
// it is; an excluded error is an answer and is returned).
//
// # Fallback chains
//
// For an annotated interface X one of whose lines carries the flag chain
// (//breaker:name=eastmoney chain), breakergen also writes XChain; without
// the flag it writes none (most interfaces never need one, and the chain is
// most of the generated code). The flag belongs to the whole interface,
// whichever of its lines gives it; it is an error on a method's line. No
// other key needs it: valid, stale and budget work in XBreaker too.
//
//	func NewXChain(primary X, reg *runtime.Registry, fallbacks ...runtime.Fallback[X]) *XChain
//
// Each call asks the primary through X's routes (breaker, limiter, tries,
// timeout), then each fallback whose breaker admits it, while the budget
// lasts, then the stale cache; when none answers it returns a
// *runtime.ChainError naming every source and why. A fallback's breaker is
// "fallback:" and its name, with the settings of X's default line (the
// runtime's defaults when X has none), overridable by name; it gets the
// route's timeout, exclude and valid, one try, and no limiter, concurrency
// limit or throttle. Where the
// answer came from is recorded in a runtime.WithProvenance record. The
// chain's primary shares breakers and limiters by name with XBreaker on
// the same registry; the stale caches belong to the instance.
//
// # Hedged chains
//
// A chain route with hedge=D (//breaker:name=eastmoney hedge=200ms chain)
// races its sources: each is asked in a goroutine of its own, and when the
// source asked has not answered within D, the next source whose breaker
// admits a call is asked too; the k-th extra source is asked k·D after the
// first try began, while no valid answer has come and fewer than hedges
// (default 1) extra sources are in flight. The first valid answer, or
// excluded error, wins; the sources still in flight have their ctx
// cancelled, and their breakers count that as neither success nor
// failure. When every source in flight failed, the next is asked at once,
// then the stale cache, as without hedge. Every try spends budget, and the
// provenance record says Hedged, which source won and that the others
// were "slow". The generated method passes a func making one try
// through its helper, and a struct of the chain and its arguments, to
// breakerimpl.RaceArgs (a closure capturing them would be allocated on
// every call). hedge needs the chain flag;
// hedges needs hedge; a method without a ctx is not hedged (a warning, or
// an error when the hedge is on its own line). A route without hedge
// starts no goroutine.
//
// A file is written only when its bytes change; an output that differs
// only in "\r\n" line endings (git's core.autocrlf checks files out so on
// Windows) is up to date, for -check too. Our outputs whose source
// no longer has annotated interfaces (or no longer exists) are removed;
// only files starting with the header above are ever removed or
// overwritten. Another file where an output goes (a hand-written
// a_breaker.go beside an annotated a.go) is an error at the interface that
// wants the output, for each such file at once; nothing is written then:
// rename the file, or move the interface to another file. Earlier outputs are hidden from the type checker while
// loading, so a stale wrapper never stops regeneration, and type errors
// outside the annotated interfaces (tests calling a constructor that does
// not exist yet) do not stop it either. Those inside them do, printed as
// the go command prints them: one of two lines (S redeclared in this
// block, then a tab and where the other declaration is) is printed whole
// when either line falls inside an annotated interface.
//
// # Errors
//
// Every problem is reported as file:line:col: message, all at once and
// sorted; then breakergen writes nothing and exits with status 1. Errors
// include unknown keys (with a did-you-mean hint), bad values, duplicate
// keys, skip with other keys or on an interface, conflicting settings of a
// name, methods patterns matching nothing, constraint interfaces,
// interfaces declared inside functions, methods that cannot be
// implemented outside their package, methods using a type the wrapper's
// package cannot name (unexported, or of an internal package it may not
// import: an embedded interface of another module can have them; an
// exported alias of the type is written as the alias), a name to
// generate (XBreaker, NewXBreaker, XChain, NewXChain) that the package or
// one of its _test.go files (but those of package x_test) declares
// already, a -type naming
// nothing and a pattern matching no package. Command-line mistakes exit with status 2.
//
// # Warnings
//
// A warning is printed as file:line:col: warning: message, sorted, before
// any error, and says how to fix it; the run still writes its files and
// exits with status 0, unless -strict makes every warning an error.
// breakergen warns about:
//
//   - an annotated interface with methods delegated unguarded, other than
//     those marked skip: once per interface, at its name, with their
//     count, the first three names for each reason (no error result, no
//     line routes it) and how many more. Fix: return an error from them,
//     route them, mark them //breaker:skip (a method of an embedded
//     interface takes a line once redeclared in the annotated one), or
//     annotate a narrower interface without them.
//   - an annotated interface that guards none of its methods (its wrapper
//     only delegates): one warning instead of the one above, with the
//     keys of its lines that therefore have no effect.
//   - an interface line that guards none of the methods it routes (they
//     have no error result or are skipped, or earlier lines take them
//     all), with its keys that therefore have no effect. The keys listed
//     leave out methods and chain, and, when the line's breaker name
//     guards a method elsewhere in the package, the name and its
//     settings, which apply there.
//   - a timeout that reaches a guarded method without a context.Context
//     first parameter, or whose first parameter is a context.Context of
//     another type (at the method; an error on the method's own line),
//     and a hedge that reaches one in a chain. A timeout on a line that
//     guards nothing is among that line's keys that have no effect.
//   - guarded methods that return an iterator beside their error
//     ((iter.Seq2[K, V], error), iter.Seq, a func(yield ...)): once per
//     interface, with their names; only the call is guarded, and the
//     errors the iterator yields after it returns are not counted. Fix:
//     return the items in a slice, or fetch each page through a guarded
//     method.
//   - a guarded Close() error (io.Closer's shape) without a line of its
//     own: an OPEN breaker would refuse it and leave the client open.
//     Fix: //breaker:skip above it; an embedded Close (a
//     redis.UniversalClient's) is declared again in the annotated
//     interface, as //breaker:skip then Close() error, to take the line.
//   - a //breaker: line that annotates nothing: separated from its type or
//     method by a blank line (the warning names them), written after a
//     method on its line, or in a comment that documents nothing an
//     annotation can be on.
//   - a trailing // comment after the keys, and "// breaker:" written with
//     a space.
//   - a breaker's name keys (threshold, reset, ratelimit, ...) on a
//     method's own line without name=, when other methods of the package
//     go through that breaker too; a backoff= that no method it reaches
//     retries with.
//
// After it writes files, breakergen also says (on stderr, not as a
// file:line warning, and whatever -strict) when a module it wrote into
// does not require github.com/breakergen/breakergen, whose runtime the
// files import; and -check names the outputs the run's tags, GOOS and
// GOARCH leave out, which it did not check.
//
// The interface-level warnings (the first three) are left out of a run
// with errors: nothing is written then, and the routes are not yet the
// ones a fixed annotation gives.
//
// # Memory
//
// A run loads and renders once and exits, so breakergen sets the garbage
// collector's target to 400% (GOGC=400) for itself: about a fifth faster,
// for about twice the peak memory on large packages (150 MB for 200
// interfaces of 10 methods). GOGC in the environment overrides it.
package main
