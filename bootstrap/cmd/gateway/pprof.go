package main

import (
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"
)

// PprofEnv names a loopback address (host:port) on which the gateway serves
// Go's runtime profiles (net/http/pprof: /debug/pprof/profile for CPU,
// /debug/pprof/allocs, /debug/pprof/heap, ...). Unset: no profile endpoint.
// It is a developer switch for `make bench-native` (BENCH_PPROF=1), not a
// configuration key: only loopback addresses are accepted.
const PprofEnv = "FLUSS_GATEWAY_PPROF_LISTEN"

func init() {
	addr := os.Getenv(PprofEnv)
	if addr == "" {
		return
	}
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
		slog.Error("ignoring "+PprofEnv+": not a loopback host:port", "value", addr)
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.ListenAndServe(); err != nil {
			slog.Error("pprof listener", "addr", addr, "error", err)
		}
	}()
}
