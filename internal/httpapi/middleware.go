package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// statusWriter records the status, and turns the mux's own plain-text
// answers (405 for a known path with another method) into JSON errors.
type statusWriter struct {
	http.ResponseWriter
	status  int
	swallow bool
	s       *Server
	r       *http.Request
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status != 0 {
		return
	}
	w.status = code
	if code == http.StatusMethodNotAllowed && !strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		w.swallow = true
		w.Header().Del("X-Content-Type-Options")
		writeJSON(w.ResponseWriter, code, errorBody(webhooks.EMETHOD, fmt.Sprintf("%s is not allowed on %s; allowed: %s.", w.r.Method, w.r.URL.Path, w.Header().Get("Allow"))))
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.swallow {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// middleware recovers panics, logs each request (never its body or its
// Authorization header) and reports it to Observe.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, s: s, r: r}
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
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
	})
}
