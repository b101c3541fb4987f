// Command fleet is the market-data service run as a fleet of three
// processes sharing their breakers through Redis (package redisstate):
//
//	go run ./examples/fleet     (or: make demo-fleet)
//
// It starts a redis-server of its own on a free loopback port (persistence
// off; it says so and exits 0 when redis-server is not installed), the fake
// upstreams of examples/marketdata/fakeupstream, and three processes of the
// service (this same binary, with FLEET_DEMO_SERVICE set), each asking
// tencent for a quote every 300 ms through the generated StockSourceBreaker.
// Then it bans tencent (403, Retry-After 2s) and prints what the fleet did:
// one process tripped and the two others followed within milliseconds; it
// lifts the ban, and when the window ends exactly one probe goes out, for
// the whole fleet, and its success closes all three. It exits non-zero if
// the fleet did anything else.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if name := os.Getenv(serviceEnv); name != "" {
		if err := service(ctx, name, os.Getenv(redisEnv), os.Getenv(upstreamEnv), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

// The environment of a service process.
const (
	serviceEnv  = "FLEET_DEMO_SERVICE"  // its name, e.g. svc-1
	redisEnv    = "FLEET_DEMO_REDIS"    // the redis-server's address
	upstreamEnv = "FLEET_DEMO_UPSTREAM" // the fake upstreams' base URL
)
