package e2e

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // reads the service's database in rowCounts

	webhooks "github.com/factuarea/webhooks"
)

// apiRoute is one /v1/ route of SPEC section 13, written as internal/httpapi
// registers it.
type apiRoute struct {
	method, pattern string
	admin           bool                // the admin key only
	shared          bool                // the platform's (the event-type catalog): every key reads the same
	body            func(objectIDs) any // a valid body; nil sends none
}

func (r apiRoute) String() string { return r.method + " " + r.pattern }

// objectIDs names the objects a route's path and body refer to: "account",
// "company", "company_endpoint", "account_endpoint", "company_delivery",
// "account_delivery", "event", "key" (an API key's id), "name" (an event
// type's), and "url" (an endpoint URL) and "nif" (a NIF nobody has) for
// bodies.
type objectIDs map[string]string

// path fills pattern's wildcards. {endpoint} and {delivery} are the
// company's or the account's, after the pattern's parent.
func (v objectIDs) path(pattern string) string {
	return fillPath(pattern, func(_ int, name string) string { return v.lookup(pattern, name) })
}

func (v objectIDs) lookup(pattern, name string) string {
	if name == "endpoint" || name == "delivery" {
		if strings.HasPrefix(pattern, "/v1/companies/") {
			return v["company_"+name]
		}
		return v["account_"+name]
	}
	return v[name]
}

// fillPath replaces the i-th wildcard {name} of pattern with value(i, name).
func fillPath(pattern string, value func(i int, name string) string) string {
	var b strings.Builder
	i := 0
	for {
		open := strings.IndexByte(pattern, '{')
		if open < 0 {
			b.WriteString(pattern)
			return b.String()
		}
		end := strings.IndexByte(pattern[open:], '}') + open
		b.WriteString(pattern[:open])
		b.WriteString(value(i, pattern[open+1:end]))
		pattern = pattern[end+1:]
		i++
	}
}

// wildcards returns the names of pattern's wildcards, in order.
func wildcards(pattern string) []string {
	var names []string
	fillPath(pattern, func(_ int, name string) string { names = append(names, name); return "" })
	return names
}

// nifs hands out valid DNI-based NIFs that no fixture uses.
var nifs = func() func() string {
	n := 40000000
	return func() string {
		n++
		return strconv.Itoa(n) + string("TRWAGMYFPDXBNJZSQVHLCKE"[n%23])
	}
}()

// endpointParents are the two parents of endpoint routes, SPEC's "…".
var endpointParents = []string{"/v1/companies/{company}", "/v1/accounts/{account}"}

// apiRoutes is every /v1/ route. TestRouteTable keeps it equal to what
// internal/httpapi registers.
var apiRoutes = func() []apiRoute {
	routes := []apiRoute{
		{method: "POST", pattern: "/v1/accounts", admin: true, body: func(v objectIDs) any { return object{"name": "Mallory"} }},
		{method: "GET", pattern: "/v1/accounts", admin: true},
		{method: "GET", pattern: "/v1/audit_log", admin: true},
		{method: "GET", pattern: "/v1/accounts/{account}"},
		{method: "PATCH", pattern: "/v1/accounts/{account}", admin: true, body: func(v objectIDs) any { return object{"name": "Mallory"} }},
		{method: "DELETE", pattern: "/v1/accounts/{account}", admin: true},
		{method: "GET", pattern: "/v1/accounts/{account}/companies", admin: true},
		{method: "POST", pattern: "/v1/accounts/{account}/api_keys", admin: true},
		{method: "GET", pattern: "/v1/accounts/{account}/api_keys", admin: true},
		{method: "DELETE", pattern: "/v1/accounts/{account}/api_keys/{key}", admin: true},
		{method: "POST", pattern: "/v1/accounts/{account}/portal_sessions", admin: true},
		{method: "GET", pattern: "/v1/accounts/{account}/audit_log"},
		{method: "POST", pattern: "/v1/companies", admin: true, body: func(v objectIDs) any {
			return object{"account_id": v["account"], "nif": v["nif"], "name": "Mallory SL"}
		}},
		{method: "GET", pattern: "/v1/companies/{company}"},
		{method: "PATCH", pattern: "/v1/companies/{company}", admin: true, body: func(v objectIDs) any { return object{"name": "Mallory SL"} }},
		{method: "DELETE", pattern: "/v1/companies/{company}", admin: true},
		{method: "POST", pattern: "/v1/events", admin: true, body: func(v objectIDs) any {
			return object{"type": "invoice.sent", "company_id": v["company"], "data": object{"object": invoice}}
		}},
		{method: "GET", pattern: "/v1/events/{event}"},
		{method: "POST", pattern: "/v1/events/{event}/erase", admin: true},
		{method: "GET", pattern: "/v1/companies/{company}/events"},
		{method: "GET", pattern: "/v1/accounts/{account}/events"},
		{method: "POST", pattern: "/v1/event_types", admin: true, body: func(v objectIDs) any {
			return object{"name": "mallory.created", "description": "Mallory's."}
		}},
		{method: "GET", pattern: "/v1/event_types", shared: true},
		{method: "GET", pattern: "/v1/event_types/{name}", shared: true},
		{method: "PATCH", pattern: "/v1/event_types/{name}", admin: true, body: func(v objectIDs) any { return object{"description": "changed"} }},
		{method: "DELETE", pattern: "/v1/event_types/{name}", admin: true},
	}
	for _, parent := range endpointParents {
		base := parent + "/webhook_endpoints"
		routes = append(routes,
			apiRoute{method: "POST", pattern: base, body: func(v objectIDs) any { return object{"url": v["url"], "enabled_events": []string{"*"}} }},
			apiRoute{method: "GET", pattern: base},
			apiRoute{method: "GET", pattern: base + "/{endpoint}"},
			apiRoute{method: "PATCH", pattern: base + "/{endpoint}", body: func(v objectIDs) any { return object{"description": "changed", "status": "disabled"} }},
			apiRoute{method: "DELETE", pattern: base + "/{endpoint}"},
			apiRoute{method: "GET", pattern: base + "/{endpoint}/secret"},
			apiRoute{method: "POST", pattern: base + "/{endpoint}/rotate_secret", body: func(v objectIDs) any { return object{"expires_in": 0} }},
			apiRoute{method: "POST", pattern: base + "/{endpoint}/test"},
			apiRoute{method: "POST", pattern: base + "/{endpoint}/rehearsals"},
			apiRoute{method: "POST", pattern: base + "/{endpoint}/recover", body: func(v objectIDs) any { return object{"since": 1} }},
			apiRoute{method: "GET", pattern: base + "/{endpoint}/deliveries"},
			apiRoute{method: "GET", pattern: base + "/{endpoint}/deliveries/{delivery}"},
			apiRoute{method: "POST", pattern: base + "/{endpoint}/deliveries/{delivery}/retry"},
			apiRoute{method: "POST", pattern: base + "/{endpoint}/deliveries/{delivery}/replay"},
			// The local relay (SPEC 20): the listener's stream and its answers.
			apiRoute{method: "GET", pattern: base + "/{endpoint}/relay"},
			apiRoute{method: "POST", pattern: base + "/{endpoint}/relay/answers", body: func(v objectIDs) any {
				return object{"request_id": webhooks.NewID(), "status": 200}
			}},
		)
	}
	return routes
}()

// registeredRoutes reads internal/httpapi's sources and returns the /v1/
// patterns it registers: the patterns given to s.handle, mux.Handle and
// mux.HandleFunc, evaluated where they are string literals, concatenations,
// or local variables holding them. A function parameter stands for itself
// as {name}; the endpoint and delivery routes' {parent} is expanded to both
// parents. A pattern it cannot evaluate fails the test, so that a new way of
// registering routes cannot hide one.
func registeredRoutes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../httpapi/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sources in ../httpapi: %v", err)
	}
	var patterns []string
	fset := token.NewFileSet()
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			env := map[string]string{}
			for _, field := range fd.Type.Params.List {
				for _, name := range field.Names {
					env[name.Name] = "{" + name.Name + "}"
				}
			}
			ranged := map[string]bool{}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.AssignStmt:
					if len(n.Lhs) == 1 && len(n.Rhs) == 1 {
						if id, ok := n.Lhs[0].(*ast.Ident); ok {
							if v, ok := evalString(n.Rhs[0], env); ok {
								env[id.Name] = v
							}
						}
					}
				case *ast.RangeStmt:
					for _, e := range []ast.Expr{n.Key, n.Value} {
						if id, ok := e.(*ast.Ident); ok {
							ranged[id.Name] = true
						}
					}
				case *ast.CallExpr:
					sel, ok := n.Fun.(*ast.SelectorExpr)
					if !ok {
						return true
					}
					var arg ast.Expr
					switch {
					case (sel.Sel.Name == "handle" || sel.Sel.Name == "list") && len(n.Args) == 3:
						arg = n.Args[1]
					case (sel.Sel.Name == "Handle" || sel.Sel.Name == "HandleFunc") && len(n.Args) == 2:
						arg = n.Args[0]
					default:
						return true
					}
					if id, ok := arg.(*ast.Ident); ok && (ranged[id.Name] || fd.Name.Name == "handle" || fd.Name.Name == "list") {
						return true // Server.Extra's patterns, and handle's and list's own HandleFunc
					}
					v, ok := evalString(arg, env)
					if !ok {
						t.Errorf("%s: cannot evaluate the route pattern; teach registeredRoutes how", fset.Position(arg.Pos()))
						return true
					}
					patterns = append(patterns, v)
				}
				return true
			})
		}
	}
	var out []string
	for _, p := range patterns {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			method, path = "ANY", p
		}
		switch {
		case strings.HasPrefix(path, "{parent}"):
			for _, parent := range endpointParents {
				out = append(out, method+" "+parent+strings.TrimPrefix(path, "{parent}"))
			}
		case strings.HasPrefix(path, "/v1/") || path == "/v1":
			out = append(out, method+" "+path)
		}
	}
	slices.Sort(out)
	return out
}

// evalString evaluates a string expression made of literals, + and
// variables of env.
func evalString(e ast.Expr, env map[string]string) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.ParenExpr:
		return evalString(e.X, env)
	case *ast.Ident:
		v, ok := env[e.Name]
		return v, ok
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, ok1 := evalString(e.X, env)
		y, ok2 := evalString(e.Y, env)
		return x + y, ok1 && ok2
	}
	return "", false
}

// TestRouteTable keeps apiRoutes equal to the routes internal/httpapi
// registers, so that the isolation matrix, the limits and the refusal of
// unknown fields cover every route.
func TestRouteTable(t *testing.T) {
	registered := registeredRoutes(t)
	var table []string
	for _, r := range apiRoutes {
		table = append(table, r.String())
	}
	slices.Sort(table)
	for _, r := range registered {
		if !slices.Contains(table, r) {
			t.Errorf("route %s is registered but missing from apiRoutes: add it (and say whether it is admin-only)", r)
		}
	}
	for _, r := range table {
		if !slices.Contains(registered, r) {
			t.Errorf("route %s is in apiRoutes but not registered", r)
		}
	}
	if len(registered) < 30 {
		t.Errorf("found only %d registered routes: %v", len(registered), registered)
	}
}

// tenant is one account with everything the API lets it own.
type tenant struct {
	fixture
	ids                              objectIDs // its objects
	spareKey, revokedKey             string
	companyEP, accountEP             endpoint
	sink                             *sink
	companyDelivery, accountDelivery string
}

// newTenant makes an account with a key, a spare key (the target of the key
// routes), a revoked key, a company, a company endpoint and an account
// endpoint, and one event whose two deliveries ended failed_permanently,
// so that a resend of them would be allowed.
func (ts *testService) newTenant(name, nif string) *tenant {
	return ts.newManagedTenant(name, "", nif)
}

// newManagedTenant is newTenant for an account provisioned by another.
func (ts *testService) newManagedTenant(name, provisionedBy, nif string) *tenant {
	t := ts.t
	t.Helper()
	tn := &tenant{fixture: ts.newAccount(name, provisionedBy, nif), sink: newSink(t)}
	tn.sink.setRespond(func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnprocessableEntity) })
	var spare, revoked object
	ts.must(201, "POST", "/v1/accounts/"+tn.accountID+"/api_keys", adminKey, nil, &spare)
	ts.must(201, "POST", "/v1/accounts/"+tn.accountID+"/api_keys", adminKey, nil, &revoked)
	ts.must(204, "DELETE", "/v1/accounts/"+tn.accountID+"/api_keys/"+revoked["id"].(string), adminKey, nil, nil)
	tn.spareKey, tn.revokedKey = spare["key"].(string), revoked["key"].(string)
	tn.companyEP = ts.newEndpoint("/v1/companies/"+tn.companyID, tn.key, object{"url": tn.sink.URL, "enabled_events": []string{"*"}})
	tn.accountEP = ts.newEndpoint("/v1/accounts/"+tn.accountID, tn.key, object{"url": tn.sink.URL, "enabled_events": []string{"*"}})
	ev := ts.registerEvent(object{"type": "invoice.sent", "company_id": tn.companyID, "data": object{"object": invoice}})
	tn.sink.waitRequests(t, 2, 5*time.Second)
	settled := func(ep endpoint) string {
		var id string
		ts.waitFor(name+"'s delivery to end", 5*time.Second, func() bool {
			ds := ts.deliveries(ep, tn.key)
			if len(ds) == 1 && ds[0]["status"] == "failed_permanently" {
				id = ds[0]["id"].(string)
				return true
			}
			return false
		})
		return id
	}
	tn.companyDelivery, tn.accountDelivery = settled(tn.companyEP), settled(tn.accountEP)
	tn.ids = objectIDs{
		"account": tn.accountID, "company": tn.companyID, "event": ev["id"].(string), "key": spare["id"].(string),
		"company_endpoint": tn.companyEP.id, "account_endpoint": tn.accountEP.id,
		"company_delivery": tn.companyDelivery, "account_delivery": tn.accountDelivery,
		"url": tn.sink.URL, "nif": nifs(), "name": "invoice.sent",
	}
	// The operational events its failures call for are registered too.
	ts.idle()
	return tn
}

// randomIDs names objects that do not exist.
func randomIDs(url string) objectIDs {
	v := objectIDs{"url": url, "nif": nifs(), "name": "shipment.missing"}
	for _, k := range []string{"account", "company", "event", "key", "company_endpoint", "account_endpoint", "company_delivery", "account_delivery"} {
		v[k] = webhooks.NewID()
	}
	return v
}

// snapshot reads, with the admin key, everything the API shows of a tenant
// (but its secrets, whose reading is audited).
func (ts *testService) snapshot(tn *tenant) map[string]string {
	ts.t.Helper()
	paths := []string{
		"/v1/accounts/" + tn.accountID,
		"/v1/accounts/" + tn.accountID + "/events?limit=100",
		"/v1/accounts/" + tn.accountID + "/audit_log?limit=100",
		"/v1/accounts/" + tn.accountID + "/webhook_endpoints?limit=100",
		"/v1/companies/" + tn.companyID,
		"/v1/companies/" + tn.companyID + "/events?limit=100",
		"/v1/companies/" + tn.companyID + "/webhook_endpoints?limit=100",
		"/v1/events/" + tn.ids["event"],
	}
	for _, ep := range []endpoint{tn.companyEP, tn.accountEP} {
		paths = append(paths, ep.path, ep.path+"/deliveries?limit=100")
	}
	paths = append(paths, tn.companyEP.path+"/deliveries/"+tn.companyDelivery, tn.accountEP.path+"/deliveries/"+tn.accountDelivery)
	out := map[string]string{}
	for _, p := range paths {
		status, raw := ts.raw("GET", p, adminKey, nil, nil)
		out[p] = fmt.Sprintf("%d %s", status, raw)
	}
	return out
}

// rowCounts counts the rows of every table of the service's database.
func rowCounts(t *testing.T, path string) map[string]int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	rows.Close()
	counts := map[string]int{}
	for _, table := range tables {
		var n int
		if err := db.QueryRow(`SELECT count(*) FROM "` + table + `"`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		counts[table] = n
	}
	if len(counts) < 5 {
		t.Fatalf("found only the tables %v", tables)
	}
	return counts
}

// errorReply is the error body of an answer.
type errorReply struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func replyError(raw []byte) errorReply {
	var e errorReply
	json.Unmarshal(raw, &e)
	return e
}

// TestIsolation is the isolation matrix of SPEC section 8: with B's key,
// every route on A's objects answers exactly what it answers on objects
// that do not exist (404, or 403 on the admin's routes), and changes
// nothing; so does a route that names B's parent and A's child (an
// endpoint, a delivery, a key) with any key; without a key, or with a
// revoked one, every route answers 401; the admin's routes refuse account
// keys.
func TestIsolation(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "webhooks.db")
	ts := startService(t, dbPath)
	a := ts.newTenant("Acme", "B12345674")
	b := ts.newTenant("Bravo", "12345678Z")
	isolationMatrix(t, ts, dbPath, a, b, false)
}

// TestIsolation_Managed runs the matrix between an accounting firm and the
// account it provisioned, both ways: a provisioning account sees a managed
// account's events through its own endpoints' deliveries only, and a
// managed account sees nothing of the firm's.
func TestIsolation_Managed(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "webhooks.db")
	ts := startService(t, dbPath)
	firm := ts.newTenant("Firm", "B12345674")
	client := ts.newManagedTenant("Client", firm.accountID, "12345678Z")
	// The client's event reached the firm's account endpoint too.
	firm.sink.waitRequests(t, 3, 5*time.Second)
	ts.waitFor("the firm's deliveries to end", 5*time.Second, func() bool {
		for _, d := range ts.deliveries(firm.accountEP, firm.key) {
			if d["status"] == "pending" {
				return false
			}
		}
		return true
	})
	t.Run("firm's key on the client's objects", func(t *testing.T) { isolationMatrix(t, ts, dbPath, client, firm, true) })
	t.Run("client's key on the firm's objects", func(t *testing.T) { isolationMatrix(t, ts, dbPath, firm, client, false) })
}

// isolationMatrix calls every route with b's key on a's objects. bManagesA
// says that b provisioned a, whose events b's account endpoint receives.
func isolationMatrix(t *testing.T, ts *testService, dbPath string, a, b *tenant, bManagesA bool) {
	beforeA, beforeB := ts.snapshot(a), ts.snapshot(b)
	beforeRows := rowCounts(t, dbPath)
	sinkA, sinkB := len(a.sink.requests()), len(b.sink.requests())

	call := func(r apiRoute, key string, path string, v objectIDs) (int, []byte) {
		t.Helper()
		var body any
		if r.body != nil {
			body = r.body(v)
		}
		return ts.raw(r.method, path, key, body, nil)
	}
	for _, r := range apiRoutes {
		t.Run(r.String(), func(t *testing.T) {
			names := wildcards(r.pattern)

			// No key, a malformed header, a revoked key: 401, whatever the
			// route.
			for _, key := range []string{"", a.revokedKey, "not-a-key"} {
				status, raw := call(r, key, a.ids.path(r.pattern), a.ids)
				if e := replyError(raw); status != 401 || e.Error.Code != "unauthorized" {
					t.Errorf("key %.12q: got %d %s, want 401 unauthorized", key, status, clip(raw))
				}
			}

			// The platform's catalog belongs to no tenant: B's key reads
			// exactly what A's does.
			if r.shared {
				gotStatus, got := call(r, b.key, a.ids.path(r.pattern), a.ids)
				wantStatus, want := call(r, a.key, a.ids.path(r.pattern), a.ids)
				if gotStatus != wantStatus || string(got) != string(want) {
					t.Errorf("B's key: got %d %s; A's key gets %d %s", gotStatus, clip(got), wantStatus, clip(want))
				}
				return
			}

			// B's key: the first i wildcards are B's own objects, the rest
			// A's; the reference puts objects that do not exist there.
			// i = 0 is A's objects throughout.
			random := randomIDs(a.sink.URL)
			for i := 0; i <= max(0, len(names)-1); i++ {
				pick := func(rest objectIDs) string {
					return fillPath(r.pattern, func(j int, name string) string {
						if j < i {
							return b.ids.lookup(r.pattern, name)
						}
						return rest.lookup(r.pattern, name)
					})
				}
				gotStatus, got := call(r, b.key, pick(a.ids), a.ids)
				wantStatus, want := call(r, b.key, pick(random), random)
				if gotStatus != wantStatus || string(got) != string(want) {
					t.Errorf("B's key, %d of B's objects then A's: got %d %s; a missing object answers %d %s", i, gotStatus, clip(got), wantStatus, clip(want))
				}
				wantCode, wantHTTP := "not_found", 404
				if r.admin {
					wantCode, wantHTTP = "forbidden", 403
				}
				if e := replyError(got); gotStatus != wantHTTP || e.Error.Code != wantCode || e.Error.Message == "" {
					t.Errorf("B's key, %d of B's objects then A's: got %d %s, want %d %s", i, gotStatus, clip(got), wantHTTP, wantCode)
				}
			}

			// The admin key sees both tenants, but a child named under
			// another parent is still "not found".
			for i := 1; i < len(names); i++ {
				pick := func(rest objectIDs) string {
					return fillPath(r.pattern, func(j int, name string) string {
						if j < i {
							return b.ids.lookup(r.pattern, name)
						}
						return rest.lookup(r.pattern, name)
					})
				}
				gotStatus, got := call(r, adminKey, pick(a.ids), a.ids)
				wantStatus, want := call(r, adminKey, pick(random), random)
				if gotStatus != 404 || gotStatus != wantStatus || string(got) != string(want) {
					t.Errorf("admin key, %d of B's objects then A's: got %d %s; want 404, as a missing object answers %d %s", i, gotStatus, clip(got), wantStatus, clip(want))
				}
			}

			// A's own key, with an endpoint (and its delivery) of the other
			// scope: a company endpoint is not an account endpoint.
			if slices.Contains(names, "endpoint") {
				swapped := objectIDs{}
				for k, v := range a.ids {
					swapped[k] = v
				}
				swapped["company_endpoint"], swapped["account_endpoint"] = a.ids["account_endpoint"], a.ids["company_endpoint"]
				swapped["company_delivery"], swapped["account_delivery"] = a.ids["account_delivery"], a.ids["company_delivery"]
				missing := objectIDs{}
				for k, v := range a.ids {
					missing[k] = v
				}
				for _, k := range []string{"company_endpoint", "account_endpoint", "company_delivery", "account_delivery"} {
					missing[k] = random[k]
				}
				gotStatus, got := call(r, a.key, swapped.path(r.pattern), swapped)
				wantStatus, want := call(r, a.key, missing.path(r.pattern), missing)
				if gotStatus != 404 || gotStatus != wantStatus || string(got) != string(want) {
					t.Errorf("A's key, an endpoint of the other scope: got %d %s; want 404, as a missing one answers %d %s", gotStatus, clip(got), wantStatus, clip(want))
				}
			}

			// The admin's routes refuse account keys, even on their own
			// account.
			if r.admin {
				status, raw := call(r, a.key, a.ids.path(r.pattern), a.ids)
				if e := replyError(raw); status != 403 || e.Error.Code != "forbidden" {
					t.Errorf("A's key on A's own objects: got %d %s, want 403 forbidden", status, clip(raw))
				}
			}
		})
	}

	// Nothing changed: no row, no object, no request to a sink.
	ts.idle() // a wrongly armed delivery would be claimed by now
	if got := rowCounts(t, dbPath); !sameCounts(got, beforeRows) {
		t.Errorf("rows: got %v, want %v", got, beforeRows)
	}
	for name, pair := range map[string][2]map[string]string{"A": {beforeA, ts.snapshot(a)}, "B": {beforeB, ts.snapshot(b)}} {
		for p, before := range pair[0] {
			if after := pair[1][p]; after != before {
				t.Errorf("%s's GET %s changed:\nbefore %s\nafter  %s", name, p, before, after)
			}
		}
	}
	if got := len(a.sink.requests()); got != sinkA {
		t.Errorf("A's sink got %d requests, want %d", got, sinkA)
	}
	if got := len(b.sink.requests()); got != sinkB {
		t.Errorf("B's sink got %d requests, want %d", got, sinkB)
	}
	// A's secrets and keys are A's as before.
	for _, ep := range []endpoint{a.companyEP, a.accountEP} {
		var s struct{ Secret string }
		ts.must(200, "GET", ep.path+"/secret", a.key, nil, &s)
		if s.Secret != ep.secret {
			t.Errorf("%s: the secret changed", ep.path)
		}
	}
	for _, key := range []string{a.key, a.spareKey} {
		if status := ts.call("GET", "/v1/accounts/"+a.accountID, key, nil, nil); status != 200 {
			t.Errorf("A's key %.8s…: got %d, want 200", key, status)
		}
	}
	// The NIFs the refused calls named are still free.
	ts.must(201, "POST", "/v1/companies", adminKey, object{"account_id": a.accountID, "nif": a.ids["nif"], "name": "Second SL"}, nil)
	a.ids["nif"] = nifs()

	// B's lists show nothing of A's.
	for _, p := range []string{
		"/v1/accounts/" + b.accountID + "/events?limit=100",
		"/v1/accounts/" + b.accountID + "/audit_log?limit=100",
		"/v1/accounts/" + b.accountID + "/webhook_endpoints?limit=100",
		"/v1/companies/" + b.companyID + "/events?limit=100",
		"/v1/companies/" + b.companyID + "/webhook_endpoints?limit=100",
		b.companyEP.path + "/deliveries?limit=100",
		b.accountEP.path + "/deliveries?limit=100",
	} {
		_, raw := ts.raw("GET", p, b.key, nil, nil)
		for k, id := range a.ids {
			if bManagesA && k == "event" && strings.HasPrefix(p, b.accountEP.path+"/deliveries") {
				continue // b's endpoint received a's event: the delivery names it
			}
			if k != "url" && k != "name" && strings.Contains(string(raw), id) { // a type's name is the platform's
				t.Errorf("B's GET %s shows A's %s %s", p, k, id)
			}
		}
	}
}

// mustRefuse makes a call that must fail with status and the error code.
func (ts *testService) mustRefuse(status int, code, method, path, key string, body any) {
	ts.t.Helper()
	got, raw := ts.raw(method, path, key, body, nil)
	if e := replyError(raw); got != status || e.Error.Code != code {
		ts.t.Fatalf("%s %s: got %d %s, want %d %s", method, path, got, clip(raw), status, code)
	}
}

// clip shortens an answer for a failure message.
func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

func sameCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
