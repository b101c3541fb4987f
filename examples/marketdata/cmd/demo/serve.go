package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/breakergen/breakergen/runtime"
)

// serveHealth serves the registry's health on addr until ctx ends.
func serveHealth(ctx context.Context, addr string, reg *runtime.Registry, out io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: healthMux(reg), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "\nserving http://%s/health/datasources and /health/degradation-events (Ctrl-C to stop)\n", ln.Addr())
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

// healthMux serves the health endpoints of reg.
//
// TODO(httphealth): a stand-in until runtime/httphealth lands; then this
// becomes mux.Handle("/health/", httphealth.Handler(reg)), which also
// formats events as SPEC section 4 says (second-precision timestamps, JSON
// errors for bad input).
func healthMux(reg *runtime.Registry) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health/datasources", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, reg.Health())
	})
	mux.HandleFunc("GET /health/degradation-events", func(w http.ResponseWriter, r *http.Request) {
		limit := 0
		if v := r.URL.Query().Get("limit"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "limit must be an integer"})
				return
			}
			limit = n
		}
		writeJSON(w, http.StatusOK, reg.Events(limit))
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
