package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/breakergen/breakergen/runtime"
	"github.com/breakergen/breakergen/runtime/httphealth"
)

// serveHealth serves the registry's health on addr until ctx ends.
func serveHealth(ctx context.Context, addr string, reg *runtime.Registry, out io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: healthMux(reg), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "\ndashboard  http://%s/health/\njson       http://%[1]s/health/datasources  http://%[1]s/health/degradation-events\n(Ctrl-C to stop)\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		return nil
	}
}

// healthMux serves the health endpoints and the dashboard of reg, with the
// providers' display names.
func healthMux(reg *runtime.Registry) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("/health/", httphealth.New(reg,
		httphealth.WithTitle("breakergen demo: market data sources"),
		httphealth.WithDisplayName("eastmoney", "东方财富 East Money"),
		httphealth.WithDisplayName("tencent", "腾讯行情 Tencent"),
		httphealth.WithDisplayName("tdx", "通达信 TDX"),
		httphealth.WithDisplayName("push2ex", "东财异动 push2ex"),
	))
	mux.Handle("/{$}", http.RedirectHandler("/health/", http.StatusFound))
	return mux
}
