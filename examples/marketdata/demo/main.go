package demo

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/breakergen/breakergen/examples/marketdata/fakeupstream"
	"github.com/breakergen/breakergen/runtime"
)

// Main is the demo command: it parses args (the flags of cmd/demo), plays
// the scenario against a fake upstream on loopback, and serves the health
// endpoints afterwards if asked to. Each mount adds its own handlers to the
// served mux (a /metrics endpoint, say), so that a command in another
// module can serve more than this module depends on.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, mounts ...func(*http.ServeMux, *runtime.Registry)) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	reset := fs.Duration("reset", 2*time.Second, "how long every breaker stays OPEN (the annotations say reset=30s)")
	verbose := fs.Bool("v", false, "also print the runtime's own log to stderr")
	serve := fs.String("serve", "", "after the scenario, serve the health endpoints on `addr` until interrupted")
	record := fs.String("record", "", "record every call to `file` (runtime.WithRecorder), for breakergen sim")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if *reset <= 0 {
		return fmt.Errorf("-reset must be positive")
	}

	up := fakeupstream.New()
	if _, err := up.Start("127.0.0.1:0"); err != nil {
		return err
	}
	defer up.Close()

	sc := &Scenario{Up: up, Client: up.Client(), Reset: *reset}
	if *verbose {
		sc.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	if *record != "" {
		f, err := os.Create(*record)
		if err != nil {
			return err
		}
		defer f.Close()
		sc.Options = append(sc.Options, runtime.WithRecorder(f))
	}
	_, err := sc.Run(ctx, stdout)
	if *record != "" {
		if cerr := sc.Registry().Close(); err == nil && cerr != nil {
			err = fmt.Errorf("recording %s: %w", *record, cerr)
		}
	}
	if err != nil {
		return err
	}
	if *serve == "" {
		return nil
	}
	mux := HealthMux(sc.Registry())
	for _, mount := range mounts {
		mount(mux, sc.Registry())
	}
	return Serve(ctx, *serve, mux, stdout)
}
