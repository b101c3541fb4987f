// Command demo plays breakergen's market-data example through an outage
// and a recovery, in about thirteen seconds, with nothing to set up:
//
//	go run ./examples/marketdata/cmd/demo [-reset 2s] [-v] [-record calls.rec] [-serve 127.0.0.1:8080]
//
// It starts a fake of the five upstreams (eastmoney, tencent, tdx, push2ex,
// sina) on a loopback port, wraps a real HTTP client in the generated
// breakers, and scripts the upstreams' behaviour: normal traffic; a tdx
// outage (503) that trips its breaker; calls refused while it is OPEN, with
// the fake's request counter showing that none reached tdx; a failed probe
// and a successful one; eastmoney's limiter holding a burst to 1.5 requests
// per second; tdx's bulkhead letting 4 of 20 concurrent calls wait on it;
// a fund-flow chain answering from its backup at the hedge delay; a 403 ban
// and a 429 with Retry-After as typed errors; a slow upstream against a
// caller's deadline; fund flows from the backup and the stale cache;
// tencent's window riding out background failures and catching an outage;
// every breaker closing again; adaptive throttling shedding polls of a
// push2ex that fails every other request; an operator isolating eastmoney
// and resuming it; and a rehearsal, 30% of eastmoney's calls failed by
// fault injection while the fund-flow chain answers from sina.
// Transitions are printed live from the registry's state-change hook,
// followed by the degradation timeline and the health as JSON.
//
// The annotations keep the origin service's reset=30s (how long a breaker
// stays OPEN); the demo shortens it (-reset) by a run-time override alone
// (runtime.WithConfig), so that the whole cycle fits in seconds and every
// other annotated setting stays.
//
// Flags:
//
//	-reset d    how long every breaker stays OPEN (default 2s)
//	-v          also print the runtime's own log (log/slog) to stderr
//	-record f   record every call to f (runtime.WithRecorder) for breakergen sim
//	-serve addr after the scenario, serve GET /health/datasources and
//	            GET /health/degradation-events on addr until interrupted,
//	            with read, header, write and idle timeouts and no
//	            authentication: give it a loopback address
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/breakergen/breakergen/examples/marketdata/demo"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := demo.Main(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "demo:", err)
		}
		stop()
		os.Exit(2)
	}
}
