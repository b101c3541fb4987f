package redisstate_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/breakergen/breakergen/redisstate"
	"github.com/breakergen/breakergen/runtime"
)

// Attach a registry to its fleet. Here no Redis answers, which is not an
// error: the registry goes on alone, and Health says so, until Redis
// answers.
func ExampleAttach() {
	reg := runtime.NewRegistry(runtime.WithoutEnv())
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // nothing listens there
	defer rdb.Close()
	fleet, err := redisstate.Attach(reg, rdb,
		redisstate.WithOrigin("quotes-1"),
		redisstate.WithSharedLimits("eastmoney"),
		redisstate.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer fleet.Close()

	b := reg.Breaker(runtime.Config{Name: "eastmoney"})
	err = b.Do(context.Background(), func(context.Context) error { return nil })
	fmt.Println(err, b.State(), reg.Health().Fleet.Redis)
	// Output: <nil> CLOSED down
}
