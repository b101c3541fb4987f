// Package marketdata is breakergen's flagship example: the data sources of a
// Chinese A-share market-data service, each behind a named circuit breaker,
// with the settings the original Python service used.
//
// # The sources
//
// [StockSource] is the stock service's view of its upstreams. Its
// annotations route each method to a breaker the way the service's
// _safe_call routed by label:
//
//   - eastmoney (search, industry, quote lists; the default route): 5 failures,
//     30s open, and a limiter of 1.5 requests per second with a burst of 3,
//     because eastmoney bans IPs that call it too often;
//   - tencent (Stock*, Quote): 5 failures, 30s open;
//   - tdx (Kline*, Finance*): 5 failures, 30s open;
//   - push2ex (Changes, the intraday-changes monitor): 2 failures, 30s open,
//     more aggressive on purpose: its caller has stale data to fall back on,
//     and waiting out a full failure chain on every poll is worse.
//
// [FundFlowSource] names eastmoney bare, so it shares that breaker and that
// limiter with [StockSource]: one budget per upstream host, whoever calls it.
//
// go generate writes [StockSourceBreaker] and [FundFlowSourceBreaker] into
// sources_breaker.go, and the gomock mocks in package mocks.
//
// # The implementation
//
// [Client] implements both interfaces over HTTP and JSON. Upstream answers
// other than 2xx come back as a [*StatusError], which says whether a retry
// makes sense and how long the upstream asked us to stay away. The
// fakeupstream package serves the same API on loopback and can be told to
// fail, ban, throttle or stall per provider; the demo package (run by
// cmd/demo) drives it through a whole outage and recovery.
//
// [Service] is a consumer: it builds a stock overview from several sources
// and degrades section by section when a breaker is open.
package marketdata

//go:generate go tool breakergen
//go:generate go tool mockgen -source=sources.go -destination=mocks/sources.go -package=mocks
