package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/breakergen/breakergen/examples/marketdata"
	"github.com/breakergen/breakergen/redisstate"
	"github.com/breakergen/breakergen/runtime"
)

// callEvery is how often a service asks tencent for a quote.
const callEvery = 300 * time.Millisecond

// service is one process of the fleet, named name: it prints "ready",
// then one line per transition of its breakers ("event <breaker> <from>
// <to> <reason>"), until its stdin closes.
func service(ctx context.Context, name, redisAddr, upstream string, in io.Reader, out io.Writer) error {
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...)
	}
	reg := runtime.NewRegistry(runtime.WithoutEnv(), runtime.WithLogger(slog.New(slog.DiscardHandler)),
		runtime.OnStateChange(func(ev runtime.Event) {
			say("event %s %s %s %s", ev.Source, ev.From, ev.To, ev.Reason)
		}))
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr})
	defer rdb.Close()
	fleet, err := redisstate.Attach(reg, rdb, redisstate.WithOrigin(name),
		redisstate.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return err
	}
	defer fleet.Close()

	client := &marketdata.Client{HTTP: &http.Client{Timeout: 2 * time.Second}, Endpoints: marketdata.Endpoints{
		Eastmoney: upstream + "/" + marketdata.Eastmoney,
		Tencent:   upstream + "/" + marketdata.Tencent,
		TDX:       upstream + "/" + marketdata.TDX,
		Push2ex:   upstream + "/" + marketdata.Push2ex,
		Sina:      upstream + "/" + marketdata.Sina,
	}}
	stocks := marketdata.NewStockSourceBreaker(client, reg)
	say("ready %d", fleet.Health().Members)

	done := make(chan struct{})
	go func() { // the coordinator ends us by closing our stdin
		_, _ = io.Copy(io.Discard, bufio.NewReader(in))
		close(done)
	}()
	// Each process calls at its own phase of the period (svc-1 100 ms
	// after svc-0), so that one of them meets the ban first.
	var index int
	_, _ = fmt.Sscanf(name, "svc-%d", &index)
	phase := time.Duration(index) * callEvery / processes
	now := time.Now()
	select {
	case <-time.After(now.Truncate(callEvery).Add(callEvery + phase).Sub(now)):
	case <-ctx.Done():
		return nil
	}
	tick := time.NewTicker(callEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-done:
			return nil
		case <-tick.C:
			_, _ = stocks.Quote(ctx, "600519")
		}
	}
}
