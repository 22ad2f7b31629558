package httpapi

import (
	"net/http"
	"strings"
)

// indexLinks are what GET / points to, in the order the page lists them.
var indexLinks = []struct{ key, path, text string }{
	{"portal", "/portal/", "The customer portal (opened by a link the platform asks for)"},
	{"api_reference", "/openapi.yaml", "The API reference (OpenAPI 3)"},
	{"health", "/healthz", "Health: the process serves"},
	{"readiness", "/readyz", "Readiness: the process serves and its database answers"},
}

// indexJSON is GET / for a client that asks for JSON.
type indexJSON struct {
	Object string            `json:"object"`
	Name   string            `json:"name"`
	Links  map[string]string `json:"links"`
}

// indexPage is GET / for anyone else: a page with the same links.
const indexPage = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Factuarea webhooks</title></head>
<body>
<h1>Factuarea webhooks</h1>
<p>The webhook delivery service of the Factuarea platform.</p>
<ul>
%s</ul>
</body>
</html>
`

func (s *Server) registerIndexRoutes(mux *http.ServeMux) {
	// Needs no key: it tells where things are, nothing about any account.
	s.public(mux, "GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Accept"), "application/json") {
			out := indexJSON{Object: "index", Name: "Factuarea webhooks", Links: map[string]string{}}
			for _, l := range indexLinks {
				out.Links[l.key] = l.path
			}
			writeJSON(w, http.StatusOK, out)
			return
		}
		var items strings.Builder
		for _, l := range indexLinks {
			items.WriteString(`<li><a href="` + l.path + `">` + l.text + "</a></li>\n")
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(strings.Replace(indexPage, "%s", items.String(), 1)))
	})
}
