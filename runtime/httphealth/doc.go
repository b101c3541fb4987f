// Package httphealth serves the health of a [runtime.Registry] over HTTP:
// two JSON endpoints for machines and a dashboard page for operators. It
// lives apart from package runtime so that the core does not import
// net/http.
//
// # Mounting
//
// [New] returns a [Handler], an [http.Handler] that serves paths under
// /health/. Mount it on a mux as it is, or under a prefix with
// [http.StripPrefix]:
//
//	mux.Handle("/health/", httphealth.New(reg))
//	mux.Handle("/ops/", http.StripPrefix("/ops", httphealth.New(reg))) // /ops/health/...
//
// The dashboard refers to the JSON endpoints by relative URLs, so it works
// under any prefix. A nil registry means [runtime.Default].
//
// # GET /health/datasources
//
// The registry's [runtime.Health]: the overall level ("ok", "degraded" or
// "down", the worst of any breaker) and every breaker in name order, with
// its state, level and [runtime.Stats] counters. A field that does not
// apply to a breaker is left out rather than sent as zero: every field,
// its type, when it is there and what it means are listed in one place,
// docs/health.md in the repository
// (https://github.com/breakergen/breakergen/blob/main/docs/health.md).
// Times are RFC 3339 with nanoseconds; next_probe and opened_at are there
// while the breaker is OPEN (opened_at also in HALF_OPEN). For example:
//
//	{
//	  "status": "down",
//	  "breakers": [
//	    {
//	      "name": "eastmoney",
//	      "state": "OPEN",
//	      "failure_threshold": 5,
//	      "reset_seconds": 30,
//	      "failures": 2,
//	      "ignored": 0,
//	      "rate_limited": 0,
//	      "rejections": 0,
//	      "state_changes": 1,
//	      "consecutive_failures": 0,
//	      "last_failure": "2026-10-06T09:30:00Z",
//	      "opened_at": "2026-10-06T09:30:00Z",
//	      "next_probe": "2026-10-06T09:30:30Z",
//	      "status": "down"
//	    },
//	    {
//	      "name": "tencent",
//	      "state": "CLOSED",
//	      "failure_threshold": 5,
//	      "reset_seconds": 30,
//	      "failures": 0,
//	      "ignored": 0,
//	      "rate_limited": 0,
//	      "rejections": 0,
//	      "state_changes": 0,
//	      "consecutive_failures": 0,
//	      "status": "ok"
//	    }
//	  ]
//	}
//
// With [runtime.WithCallCounts] on the registry, each breaker also reports
// "counted": true, calls, successes and last_success; rejections, the
// calls the breaker refused, are there with or without it.
//
// dropped_events, present once it is not zero, counts the state changes
// whose log line and hook calls the registry skipped because its event
// queue was full ([runtime.EventQueueCapacity]): a log handler or a
// hook is too slow. The paged answer below carries it too, and the
// dashboard's summary says it.
//
// unmatched_settings, present while there is one, lists the run-time
// settings that name no breaker, family or limiter the registry holds
// ([runtime.Registry.Unmatched]), sorted: each BREAKER_<NAME>_* variable
// as "BREAKER_QOUTES_*", each [runtime.WithConfig] or
// [runtime.WithRateLimit] name quoted, as "\"tdx2\"", and so each name a
// fleet shares that no limiter has (redisstate.WithSharedLimits). Such a
// setting applies to nothing, most often because its name has a typo (or
// names a breaker not made yet). Every paged answer below carries it too, and the
// dashboard shows a notice naming them.
//
// # GET /health/degradation-events?limit=N
//
// The degradation log ([runtime.Registry.Events]), newest first: up to N
// events, where N absent or 0 means 50, and N above the log's capacity (100
// by default) means all of it, up to at most [DefaultMaxLimit] (1000)
// events per answer, or what [WithMaxLimit] says: a larger N is cut to it,
// so that one request cannot cost the server more than that whatever
// [runtime.WithEventCapacity] keeps. The answer is encoded and sent one
// event at a time; a long one goes out without a Content-Length (chunked).
// timestamp is RFC 3339 at second precision, in UTC (it decodes into a
// [runtime.Event] as it is). A reason never carries a URL's credentials
// or a control character ([runtime.Brief]). For example:
//
//	[
//	  {
//	    "timestamp": "2026-10-06T09:30:00Z",
//	    "source": "eastmoney",
//	    "from_state": "CLOSED",
//	    "to_state": "OPEN",
//	    "reason": "marketdata.StatusError: 403 Forbidden"
//	  }
//	]
//
// Two more parameters pick events, as the dashboard's state bands do:
// since=T (an RFC 3339 time, any zone and precision) keeps the events at
// or after T, and source=NAME keeps those of the breaker NAME; give
// source once per breaker, at most [PageSize] times (one page of the
// dashboard). For example
//
//	/health/degradation-events?since=2026-10-06T09:30:00Z&source=eastmoney&source=tdx&limit=1000
//
// page=N (from 1, as for the dashboard) skips the N-1 answers of limit
// events before it. An answer with older events that match after it
// carries the header [MoreEventsHeader] ("X-More-Events: true"). Pages are
// counted from the newest event when each request is served: events
// recorded in between push older ones onto later pages, so a client that
// follows the pages may see an event twice but misses none the log still
// holds. Picking reads the whole log, whose size the registry's owner
// chose ([runtime.WithEventCapacity]); an answer holds at most the limit.
//
// With page=N or q=text, the answer is one page of [PageSize] breakers
// instead, those that are not ok first (down, then degraded, then ok, each
// in name order), of the breakers whose name or display name contains text
// (in any case), with counts of every breaker by level. A page past the
// last is the last; a page that is not a whole number >= 1, or a q longer
// than 256 characters, is a bad query:
//
//	{
//	  "status": "down",
//	  "breakers": [ ...at most 50, as above... ],
//	  "counts": {"ok": 9000, "degraded": 0, "down": 1000},
//	  "total": 10000,
//	  "q": "",
//	  "matched": 10000,
//	  "page": 1,
//	  "pages": 200,
//	  "per_page": 50
//	}
//
// The page reads every breaker's state but the counters of its own
// breakers only, so it stays cheap however many breakers there are.
//
// # GET /health/
//
// The dashboard, an HTML page: the overall level, the breakers counted by
// level, one card per breaker of one page (its state in words and as a
// symbol, its counters, the time until its next probe) and the degradation
// timeline, newest first, with the reason of each event and names for
// people ([WithDisplayName]). Each card also shows, once the script runs,
// the breaker's window, calls in flight and throttle when it has them,
// and two pictures the page draws itself (inline SVG): a state band of the
// last hour, from the events of the page's breakers (since and source
// above), with the reason of each change on hover; and a chart of the
// calls, failures and refusals counted between each of the last 60
// refreshes, which the page keeps as it polls. The Health answer's fleet
// line (Redis up or down, how many processes) shows at the top when the
// answer has one, and so does a line naming the unmatched_settings while
// there are any, as text, never as markup:
//
//	⚠ Settings that name no breaker, family or limiter: "tdx2", BREAKER_QOUTES_*. They apply to nothing: check the names for a typo.
//
// The page is the one a paged
// /health/datasources answer holds: those not ok first, [PageSize] a page,
// with buttons for the others and a search box; ?page=N and ?q=text open
// another page, with or without JavaScript. The server renders it in full,
// so it is useful without JavaScript; a small inline script then refreshes
// it in place from the JSON endpoints every few seconds ([WithRefresh]).
// The server renders each view (a page and a search) at most once per
// refresh interval, for every client: a reload within the interval gets
// the same page, which says when it was rendered, and the script brings it
// up to date at once. It loads nothing from anywhere else, and its
// Content-Security-Policy allows nothing else. Its sources are in package
// [github.com/breakergen/breakergen/templates]. GET /health redirects
// here.
//
// # POST /health/datasources/{name}/{isolate|bypass|resume}
//
// Only with [WithControl] (SPEC §14): the operator's hand on a breaker,
// calling [runtime.Breaker.Isolate], Bypass or Resume with the form field
// reason, which is required and cleaned as every reason is. Without the
// option these paths answer 404 and the dashboard shows no control. A
// request must be a POST (405), must not come from another site
// ([http.CrossOriginProtection]: 403), must pass the embedder's
// authorize func (403); the reason is read from the body only, a form of
// type application/x-www-form-urlencoded or multipart/form-data (another
// type: 415), and a reason in the URL, a query parameter or another form
// field is refused (400), as a GET endpoint refuses a parameter it does
// not read; then the request must name a breaker (404), or a key of a
// family, whose live breaker it acts on (a control makes a key that is
// not live, isolate and bypass within a bound: see [WithControl]); the
// answer is the breaker's Stats:
//
//	curl -H 'Authorization: Bearer …' --data-urlencode 'reason=provider maintenance' \
//	    https://svc.internal/health/datasources/eastmoney/isolate
//
// With the option each dashboard card has a reason field and three
// buttons, which refuse to send without a reason:
//
//	mux.Handle("/health/", httphealth.New(reg, httphealth.WithControl(func(r *http.Request) error {
//		if !isOperator(r) { // the embedder's own check: a session, a client certificate
//			return errors.New("operators only")
//		}
//		return nil
//	})))
//
// # Serving
//
// The handler sets no timeouts and authenticates no one: both are the
// embedder's job, as they are for any [http.Handler].
//
// Serve it with an [http.Server] whose read, header, write and idle
// timeouts are set. Under a bare [http.ListenAndServe], a client that sends
// half a request, or never reads the answer, holds its connection and its
// goroutines for ever, and an idle keep-alive connection never closes:
//
//	srv := &http.Server{
//		Addr:              "127.0.0.1:8080",
//		Handler:           mux,
//		ReadHeaderTimeout: 5 * time.Second,  // the request line and headers
//		ReadTimeout:       10 * time.Second, // the whole request
//		WriteTimeout:      30 * time.Second, // the whole answer: leave room for the longest
//		IdleTimeout:       2 * time.Minute,  // a keep-alive connection between requests
//	}
//	log.Fatal(srv.ListenAndServe())
//
// Whoever reaches the handler sees every breaker's name, state and
// counters and the reasons of the degradation log. Reasons carry no URL
// credentials and no control characters ([runtime.Brief]), but an error's
// text may still say more than you want to publish. Serve it on a loopback
// or internal address only, or put authentication in front of it, as a
// middleware of your own. The dashboard refreshes itself with same-origin
// requests, which carry the browser's cookies and HTTP Basic credentials,
// so either kind of check keeps the page working:
//
//	func basicAuth(user, pass string, next http.Handler) http.Handler {
//		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
//			u, p, ok := r.BasicAuth()
//			if !ok || subtle.ConstantTimeCompare([]byte(u+":"+p), []byte(user+":"+pass)) != 1 {
//				w.Header().Set("WWW-Authenticate", `Basic realm="health", charset="UTF-8"`)
//				http.Error(w, "unauthorized", http.StatusUnauthorized)
//				return
//			}
//			next.ServeHTTP(w, r)
//		})
//	}
//
//	mux.Handle("/ops/", basicAuth("ops", secret, http.StripPrefix("/ops", httphealth.New(reg))))
//
// Basic credentials cross the network in the clear: serve them over TLS.
// What one request costs is bounded: the events answer holds at most
// [DefaultMaxLimit] events ([WithMaxLimit]) and the dashboard one page of
// [PageSize] breakers; only /health/datasources without page or q lists
// every breaker.
//
// # Errors
//
// Every endpoint answers GET and HEAD. Another method gets 405 Method Not
// Allowed with an Allow header, a path the handler does not serve 404 Not
// Found, and a bad query (a limit that is not a whole number, a negative
// one, one given twice, a page that is not a whole number >= 1, a since
// that is not an RFC 3339 time, an empty or overlong source, more than
// [PageSize] of them, a malformed query string, a parameter the endpoint
// does not read, such as sources= or the dashboard's family=; a name that
// starts with "_", a cache buster, is let through) 400 Bad Request, each
// with a JSON body such as
//
//	{
//	  "error": "limit \"ten\" is not a whole number"
//	}
//
// Every answer, errors included, carries Cache-Control: no-store, and
// Date and [ServerTimeHeader] from the handler's clock ([WithClock]).
package httphealth
