package console

import (
	"context"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/laraworker/laraworker/internal/httpguard"
	"github.com/rs/zerolog"
)

// listenAddr turns an address flag's value into host:port. A bare port
// ("6060" or ":6060") binds the loopback interface: these servers show
// the worker's internals and must be exposed on purpose, by naming a host.
func listenAddr(flag, value string) (string, error) {
	if n, err := strconv.Atoi(value); err == nil {
		value = ":" + strconv.Itoa(n)
	}
	host, port, err := net.SplitHostPort(value)
	if err != nil {
		return "", fmt.Errorf("--%s %q: want PORT or HOST:PORT (e.g. 127.0.0.1:9090)", flag, value)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("--%s %q: %q is not a port number", flag, value, port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// listen opens the listener for an address flag; errors name the flag.
func listen(flag, value string) (net.Listener, error) {
	addr, err := listenAddr(flag, value)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flag, err)
	}
	return ln, nil
}

// serveUntilDone serves h on ln until ctx ends, with httpguard's limits
// (headers, read timeouts) and writeTimeout (0: none). The server's own
// errors (a TLS handshake that failed, say) go to log, as JSON lines like
// the rest.
func serveUntilDone(ctx context.Context, ln net.Listener, h http.Handler, writeTimeout time.Duration, log zerolog.Logger) {
	srv := httpguard.NewServer(h, writeTimeout)
	srv.ErrorLog = stdlog.New(serverErrors{log.With().Str("addr", ln.Addr().String()).Logger()}, "", 0)
	go func() { _ = srv.Serve(ln) }()
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
}

// serverErrors writes net/http's error lines as warnings.
type serverErrors struct{ log zerolog.Logger }

func (e serverErrors) Write(p []byte) (int, error) {
	e.log.Warn().Msg(strings.TrimSpace(string(p)))
	return len(p), nil
}

// servePprof serves net/http/pprof's handlers (/debug/pprof/...) so a
// heap or CPU profile of a running worker can be taken with
// `go tool pprof http://ADDR/debug/pprof/heap`; behind obs's guard.
func servePprof(ctx context.Context, obs observeSetup, log zerolog.Logger) error {
	ln, err := listen("pprof-addr", obs.pprofAddr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	serveUntilDone(ctx, ln, obs.guard(mux), 0, log)
	log.Info().Str("addr", ln.Addr().String()).Bool("token", obs.token != "").Msg("serving pprof on /debug/pprof/")
	return nil
}
