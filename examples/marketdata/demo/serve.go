package demo

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

// Serve serves h on addr until ctx ends, with the timeouts of [NewServer].
func Serve(ctx context.Context, addr string, h http.Handler, out io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := NewServer(h)
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

// NewServer returns a server for h with every timeout set, as httphealth's
// doc asks: without them, a client that sends half a request or never
// reads the answer holds a connection for ever, and idle keep-alive
// connections never close. The demo serves a loopback address and no
// authentication; a real service would put its own in front of the
// handler (see httphealth's "Serving").
func NewServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
}

// HealthMux serves the health endpoints and the dashboard of reg, with the
// providers' display names.
func HealthMux(reg *runtime.Registry) *http.ServeMux {
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
