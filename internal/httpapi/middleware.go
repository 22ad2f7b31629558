package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"path"
	"runtime/debug"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// statusWriter records the status of the answer, for the log and the
// metrics.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status != 0 {
		return
	}
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// middleware recovers panics, logs each request (never its body or its
// Authorization header) and reports it to Observe. A path that is not in
// its clean form (with //, . or .. segments) names no route: it answers
// the JSON 404 instead of the mux's redirect, an HTML page.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.Logger.Error("http: panic", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				if sw.status == 0 {
					s.error(sw, r, fmt.Errorf("panic: %v", v))
				}
			}
			d := time.Since(start)
			level := slog.LevelDebug
			switch {
			case sw.status >= 500:
				level = slog.LevelError
			case sw.status >= 400:
				level = slog.LevelInfo
			}
			s.Logger.Log(r.Context(), level, "http: request", "method", r.Method, "route", r.Pattern, "status", sw.status, "duration_ms", d.Milliseconds())
			if s.Observe != nil {
				s.Observe(r.Pattern, sw.status, d)
			}
		}()
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if p := r.URL.Path; p != cleanPath(p) {
			s.error(sw, r, webhooks.Errorf(webhooks.ENOTFOUND, "No route %s %s: paths have no empty, . or .. segments.", r.Method, p))
			return
		}
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
	})
}

// cleanPath is p as the mux routes it: path.Clean's, with a trailing slash
// kept.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c
}
