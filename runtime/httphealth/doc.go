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
// its state, level and [runtime.Stats] counters. Times are RFC 3339 with
// nanoseconds, and zero times are left out; next_probe is there while the
// breaker is OPEN. For example:
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
//	      "state_changes": 1,
//	      "consecutive_failures": 0,
//	      "consecutive_successes": 0,
//	      "probes_in_flight": 0,
//	      "last_failure": "2026-10-06T09:30:00Z",
//	      "opened_at": "2026-10-06T09:30:00Z",
//	      "next_probe": "2026-10-06T09:30:30Z",
//	      "counted": false,
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
//	      "state_changes": 0,
//	      "consecutive_failures": 0,
//	      "consecutive_successes": 0,
//	      "probes_in_flight": 0,
//	      "counted": false,
//	      "status": "ok"
//	    }
//	  ]
//	}
//
// With [runtime.WithCallCounts] on the registry, each breaker also reports
// calls, successes, rejections and last_success.
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
// # GET /health/
//
// The dashboard, an HTML page: the overall level, one card per breaker
// (its state in words and as a symbol, its counters, the time until its
// next probe) and the degradation timeline, newest first, with the reason
// of each event and names for people ([WithDisplayName]). The server
// renders it in full, so it is useful without JavaScript; a small inline
// script then refreshes it in place from the JSON endpoints every few
// seconds ([WithRefresh]). It loads nothing from anywhere else, and its
// Content-Security-Policy allows nothing else. Its sources are in package
// [github.com/breakergen/breakergen/templates]. GET /health redirects
// here.
//
// # Errors
//
// Every endpoint answers GET and HEAD. Another method gets 405 Method Not
// Allowed with an Allow header, a path the handler does not serve 404 Not
// Found, and a bad query (a limit that is not a whole number, a negative
// one, one given twice, a malformed query string) 400 Bad Request, each
// with a JSON body such as
//
//	{
//	  "error": "limit \"ten\" is not a whole number"
//	}
//
// Every answer, errors included, carries Cache-Control: no-store, and
// Date and [ServerTimeHeader] from the handler's clock ([WithClock]).
package httphealth
