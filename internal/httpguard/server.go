package httpguard

import (
	"net/http"
	"time"
)

// MaxHeaderBytes bounds a request's header block (Go's default is 1 MB):
// a browser's headers with the dashboard's cookies take under 2 kB.
const MaxHeaderBytes = 32 << 10

// NewServer is an http.Server for h with the limits every server of
// laraworker has: headers within MaxHeaderBytes and 5 s, a whole request
// within 30 s, idle connections closed after 2 minutes. writeTimeout
// bounds writing a response (0: none, for pprof's profiles, which run
// for as long as asked).
func NewServer(h http.Handler, writeTimeout time.Duration) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    MaxHeaderBytes,
	}
}
