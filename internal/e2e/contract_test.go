package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/factuarea/webhooks/internal/httpapi"
)

// The contract: every API request the end-to-end tests make (they all go
// through http.DefaultClient) is validated against internal/httpapi's
// openapi.yaml, and so is its response. A request that breaks the
// contract fails the call, and so the test that made it, with the reason:
//
//   - a response that does not match the document: a status the operation
//     does not declare (the document declares no "default"), a body that
//     does not match the schema (unknown fields included), an error code
//     the response does not list;
//   - a request the document refuses that the service accepted (2xx);
//   - a request the document accepts that the service refused as malformed
//     JSON or for an unknown body field (the document lists a field the
//     service does not know);
//   - an API path the document does not describe that the service does not
//     answer 404 (an undocumented route), or a known path with another
//     method that does not answer the document's 405.
//
// The routes others serve beside the API (/portal/, /metrics) are not part
// of it. TestContract calls every operation, error paths included, and
// checks that the document has no operation it did not exercise.

func init() {
	http.DefaultClient.Transport = &contractTransport{next: http.DefaultTransport}
	// GET / answers a page to anyone that does not ask for JSON.
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
}

// contract is the loaded document and what the calls exercised.
var contract struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router
	err    error

	mu sync.Mutex
	// seen counts the statuses each operation answered, by operationId;
	// "405" and "404" hold the answers of paths and methods outside the
	// document.
	seen map[string]map[int]int
}

func loadContract() error {
	contract.once.Do(func() {
		loader := openapi3.NewLoader()
		doc, err := loader.LoadFromData(httpapi.OpenAPI)
		if err != nil {
			contract.err = fmt.Errorf("openapi.yaml: %w", err)
			return
		}
		if err := doc.Validate(context.Background()); err != nil {
			contract.err = fmt.Errorf("openapi.yaml is not valid OpenAPI: %w", err)
			return
		}
		router, err := gorillamux.NewRouter(doc)
		if err != nil {
			contract.err = fmt.Errorf("openapi.yaml: routes: %w", err)
			return
		}
		contract.doc, contract.router = doc, router
		contract.seen = map[string]map[int]int{}
	})
	return contract.err
}

// record counts one answer of an operation.
func record(operation string, status int) {
	contract.mu.Lock()
	defer contract.mu.Unlock()
	if contract.seen[operation] == nil {
		contract.seen[operation] = map[int]int{}
	}
	contract.seen[operation][status]++
}

// exercised returns a copy of the counts.
func exercised() map[string]map[int]int {
	contract.mu.Lock()
	defer contract.mu.Unlock()
	out := map[string]map[int]int{}
	for op, statuses := range contract.seen {
		out[op] = map[int]int{}
		for s, n := range statuses {
			out[op][s] = n
		}
	}
	return out
}

// inContract reports whether a path is the API's (the document's).
func inContract(path string) bool {
	return strings.HasPrefix(path, "/v1/") || path == "/v1" || path == "/" || path == "/healthz" || path == "/readyz" || path == "/openapi.yaml"
}

// contractTransport validates the API's requests and responses.
type contractTransport struct {
	next http.RoundTripper
}

var contractOptions = &openapi3filter.Options{
	IncludeResponseStatus: true, // an undeclared status fails
	MultiError:            false,
	AuthenticationFunc: func(_ context.Context, in *openapi3filter.AuthenticationInput) error {
		if in.SecurityScheme.Type == "http" && in.SecurityScheme.Scheme == "bearer" {
			if auth := in.RequestValidationInput.Request.Header.Get("Authorization"); strings.HasPrefix(auth, "Bearer ") && len(auth) > len("Bearer ") {
				return nil
			}
			return errors.New("no Authorization: Bearer <key>")
		}
		return fmt.Errorf("unknown security scheme %s", in.SecuritySchemeName)
	},
}

func (c *contractTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !inContract(req.URL.Path) || req.Method == http.MethodHead {
		return c.next.RoundTrip(req)
	}
	if err := loadContract(); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	var reqBody []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		reqBody = b
	}
	send := req.Clone(req.Context())
	send.Body = io.NopCloser(bytes.NewReader(reqBody))
	send.ContentLength = int64(len(reqBody))
	if len(reqBody) == 0 {
		send.Body = http.NoBody
	}

	// The service does not look at Content-Type, and the tests do not
	// send one: validate the body as the JSON it is.
	check := req.Clone(req.Context())
	check.Body = io.NopCloser(bytes.NewReader(reqBody))
	if len(reqBody) > 0 && check.Header.Get("Content-Type") == "" {
		check.Header.Set("Content-Type", "application/json")
	}
	route, params, routeErr := contract.router.FindRoute(check)

	resp, err := c.next.RoundTrip(send)
	if err != nil {
		return nil, err
	}
	respBody, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	fail := func(format string, args ...any) (*http.Response, error) {
		return nil, fmt.Errorf("contract (internal/httpapi/openapi.yaml): %s %s answered %d %s: %s",
			req.Method, req.URL.RequestURI(), resp.StatusCode, truncateBody(respBody), fmt.Sprintf(format, args...))
	}

	switch {
	case errors.Is(routeErr, routers.ErrPathNotFound):
		if err := checkComponent("NotFound", resp, respBody); err != nil || resp.StatusCode != http.StatusNotFound {
			return fail("the path is not in the document, so it must answer its NotFound response (%v)", err)
		}
		record("404 (no such path)", resp.StatusCode)
		return resp, nil
	case errors.Is(routeErr, routers.ErrMethodNotAllowed):
		if err := checkMethodNotAllowed(resp, respBody); err != nil {
			return fail("the document has no %s operation on this path, so it must answer 405 method_not_allowed as the document's description says: %v", req.Method, err)
		}
		record("405 (no such method)", resp.StatusCode)
		return resp, nil
	case routeErr != nil:
		return fail("finding the route: %v", routeErr)
	}

	in := &openapi3filter.RequestValidationInput{Request: check, PathParams: params, Route: route, Options: contractOptions}
	reqErr := openapi3filter.ValidateRequest(req.Context(), in)
	if len(bytes.TrimSpace(reqBody)) > 0 && !json.Valid(reqBody) {
		// kin-openapi decodes the first JSON value and ignores what
		// follows it; an application/json body is one value.
		reqErr = errors.Join(reqErr, errors.New("the body is not one JSON value"))
	}
	if !utf8.Valid(reqBody) {
		// JSON is UTF-8 (RFC 8259); Go's decoder, and so kin-openapi,
		// turns what is not into U+FFFD.
		reqErr = errors.Join(reqErr, errors.New("the body is not UTF-8"))
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header, Options: contractOptions,
	}
	out.SetBodyBytes(respBody)
	if err := openapi3filter.ValidateResponse(req.Context(), out); err != nil {
		return fail("the response does not match operation %s: %v", route.Operation.OperationID, err)
	}
	if reqErr != nil && resp.StatusCode < 300 {
		return fail("operation %s refuses the request, which the service accepted: %v", route.Operation.OperationID, reqErr)
	}
	if reqErr == nil && resp.StatusCode == http.StatusBadRequest {
		var e apiError
		json.Unmarshal(respBody, &e)
		unknown := strings.HasPrefix(e.Error.Message, "Unknown field ") || strings.Contains(e.Error.Message, " directly in ")
		if e.Error.Code == "invalid_json" || (e.Error.Code == "unknown_field" && unknown) {
			return fail("operation %s accepts a request body the service refused as %s", route.Operation.OperationID, e.Error.Code)
		}
	}
	record(route.Operation.OperationID, resp.StatusCode)
	return resp, nil
}

// checkComponent validates an answer against one of the document's
// reusable responses.
func checkComponent(name string, resp *http.Response, body []byte) error {
	ref := contract.doc.Components.Responses[name]
	if ref == nil || ref.Value == nil {
		return fmt.Errorf("the document has no %s response", name)
	}
	mt := ref.Value.Content.Get(resp.Header.Get("Content-Type"))
	if mt == nil {
		return fmt.Errorf("Content-Type %q is not the %s response's", resp.Header.Get("Content-Type"), name)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return err
	}
	return mt.Schema.Value.VisitJSON(v)
}

// checkMethodNotAllowed checks the answer to a method a path does not take,
// as the document's description gives it (OpenAPI has no place for a
// response of no operation): 405, an Allow header naming the methods the
// path takes, and the error object with code method_not_allowed.
func checkMethodNotAllowed(resp *http.Response, body []byte) error {
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") == "" || resp.Header.Get("Content-Type") != "application/json" {
		return fmt.Errorf("got %d, Allow %q, Content-Type %q; want 405, an Allow header and JSON", resp.StatusCode, resp.Header.Get("Allow"), resp.Header.Get("Content-Type"))
	}
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error.Code != "method_not_allowed" || e.Error.Message == "" {
		return fmt.Errorf("want {\"error\": {\"code\": \"method_not_allowed\", \"message\": …}} (%v)", err)
	}
	return nil
}

func truncateBody(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return strings.TrimSpace(string(b))
}

// TestContract calls every operation of the document, with the error
// paths (400, 401, 403, 404, 405, 409, 413, 422, 503), through the
// validating transport, and checks that no operation was left out.
func TestContract(t *testing.T) {
	if err := loadContract(); err != nil {
		t.Fatal(err)
	}
	before := exercised()
	clock, opt := stepClock(time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC))
	ts := startService(t, "", opt)

	// Operations.
	checkIndex(t, ts)
	ts.wantError(405, "method_not_allowed", "POST", "/", adminKey, nil)
	for _, path := range []string{"/", "/healthz", "/readyz", "/openapi.yaml"} {
		ts.wantError(400, "unknown_field", "GET", path+"?verbose=1", "", nil)
	}
	ts.must(200, "GET", "/healthz", "", nil, nil)
	ts.must(200, "GET", "/readyz", "", nil, nil)
	resp, err := http.Get(ts.url + "/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/yaml" || !bytes.Equal(doc, httpapi.OpenAPI) {
		t.Errorf("GET /openapi.yaml: got %d, Content-Type %q and %d bytes; want 200, application/yaml and the embedded document",
			resp.StatusCode, resp.Header.Get("Content-Type"), len(doc))
	}
	ts.wantError(405, "method_not_allowed", "POST", "/openapi.yaml", adminKey, nil)

	// Accounts, keys, portal sessions.
	acme := ts.newAccount("Acme", "", "B12345674")
	var managed object
	ts.must(201, "POST", "/v1/accounts", adminKey, object{"name": "Client", "provisioned_by": acme.accountID}, &managed)
	ts.must(201, "POST", "/v1/accounts", adminKey, object{"name": "Plain", "provisioned_by": nil}, nil)
	ts.wantError(400, "invalid_json", "POST", "/v1/accounts", adminKey, "{")
	ts.wantError(400, "invalid_json", "POST", "/v1/accounts", adminKey, "[]")
	ts.wantError(400, "unknown_field", "POST", "/v1/accounts", adminKey, object{"name": "X", "plan": "gold"})
	ts.wantError(400, "invalid_request", "POST", "/v1/accounts", adminKey, object{"name": " "})
	ts.wantError(400, "invalid_request", "POST", "/v1/accounts", adminKey, object{"name": 42})
	ts.wantError(401, "unauthorized", "POST", "/v1/accounts", "", object{"name": "X"})
	ts.wantError(401, "unauthorized", "POST", "/v1/accounts", "fk_not-a-key", object{"name": "X"})
	ts.wantError(403, "forbidden", "POST", "/v1/accounts", acme.key, object{"name": "X"})
	big := `{"name": "` + strings.Repeat("x", 300<<10) + `"}`
	ts.wantError(413, "request_too_large", "POST", "/v1/accounts", adminKey, big)
	ts.wantError(422, "invalid_provisioning", "POST", "/v1/accounts", adminKey, object{"name": "X", "provisioned_by": managed["id"]})
	ts.wantError(422, "invalid_provisioning", "POST", "/v1/accounts", adminKey, object{"name": "X", "provisioned_by": "nope"})
	ts.must(200, "GET", "/v1/accounts?limit=2", adminKey, nil, nil)
	ts.wantError(400, "invalid_request", "GET", "/v1/accounts?limit=0", adminKey, nil)
	ts.wantError(400, "unknown_field", "GET", "/v1/accounts?name=Acme", adminKey, nil)
	ts.wantError(401, "unauthorized", "GET", "/v1/accounts", "", nil)
	ts.wantError(403, "forbidden", "GET", "/v1/accounts", acme.key, nil)
	ts.wantError(405, "method_not_allowed", "DELETE", "/v1/accounts", adminKey, nil)

	a := "/v1/accounts/" + acme.accountID
	ts.must(200, "GET", a, acme.key, nil, nil)
	ts.must(200, "GET", a, adminKey, nil, nil)
	ts.wantError(404, "not_found", "GET", "/v1/accounts/"+managed["id"].(string), acme.key, nil)
	ts.wantError(404, "not_found", "GET", "/v1/accounts/nope", adminKey, nil)
	ts.wantError(401, "unauthorized", "GET", a, "", nil)
	ts.wantError(405, "method_not_allowed", "PUT", a, adminKey, nil)

	var key object
	ts.must(201, "POST", a+"/api_keys", adminKey, nil, &key)
	ts.must(201, "POST", a+"/api_keys", adminKey, object{}, nil)
	ts.wantError(400, "unknown_field", "POST", a+"/api_keys", adminKey, object{"name": "ci"})
	ts.wantError(403, "forbidden", "POST", a+"/api_keys", acme.key, nil)
	ts.wantError(404, "not_found", "POST", "/v1/accounts/"+webhookID()+"/api_keys", adminKey, nil)
	ts.wantError(413, "request_too_large", "POST", a+"/api_keys", adminKey, big)
	ts.wantError(401, "unauthorized", "POST", a+"/api_keys", "", nil)
	ts.must(204, "DELETE", a+"/api_keys/"+key["id"].(string), adminKey, nil, nil)
	ts.wantError(401, "unauthorized", "GET", a, key["key"].(string), nil)
	ts.wantError(404, "not_found", "DELETE", a+"/api_keys/"+key["id"].(string), adminKey, nil)
	ts.wantError(403, "forbidden", "DELETE", a+"/api_keys/"+key["id"].(string), acme.key, nil)
	ts.wantError(401, "unauthorized", "DELETE", a+"/api_keys/"+key["id"].(string), "", nil)
	ts.must(200, "GET", a+"/api_keys?limit=1", adminKey, nil, nil)
	ts.wantError(400, "invalid_request", "GET", a+"/api_keys?starting_after="+webhookID(), adminKey, nil)
	ts.wantError(400, "unknown_field", "GET", a+"/api_keys?key=x", adminKey, nil)
	ts.wantError(401, "unauthorized", "GET", a+"/api_keys", "", nil)
	ts.wantError(403, "forbidden", "GET", a+"/api_keys", acme.key, nil)
	ts.wantError(404, "not_found", "GET", "/v1/accounts/"+webhookID()+"/api_keys", adminKey, nil)
	ts.wantError(405, "method_not_allowed", "PUT", a+"/api_keys", adminKey, nil)
	ts.must(200, "GET", a+"/companies", adminKey, nil, nil)
	ts.wantError(400, "invalid_request", "GET", a+"/companies?limit=101", adminKey, nil)
	ts.wantError(400, "unknown_field", "GET", a+"/companies?nif=B12345674", adminKey, nil)
	ts.wantError(401, "unauthorized", "GET", a+"/companies", "", nil)
	ts.wantError(403, "forbidden", "GET", a+"/companies", acme.key, nil)
	ts.wantError(404, "not_found", "GET", "/v1/accounts/"+webhookID()+"/companies", adminKey, nil)
	ts.wantError(405, "method_not_allowed", "POST", a+"/companies", adminKey, nil)

	var session object
	ts.must(201, "POST", a+"/portal_sessions", adminKey, nil, &session)
	ts.wantError(403, "forbidden", "POST", a+"/portal_sessions", acme.key, nil)
	ts.wantError(404, "not_found", "POST", "/v1/accounts/"+webhookID()+"/portal_sessions", adminKey, nil)
	ts.wantError(400, "unknown_field", "POST", a+"/portal_sessions", adminKey, object{"return_url": "x"})
	ts.wantError(401, "unauthorized", "POST", a+"/portal_sessions", "", nil)
	ts.wantError(413, "request_too_large", "POST", a+"/portal_sessions", adminKey, big)

	// Companies.
	ts.wantError(409, "nif_taken", "POST", "/v1/companies", adminKey, object{"account_id": acme.accountID, "nif": "B12345674", "name": "Again"})
	ts.wantError(422, "invalid_nif", "POST", "/v1/companies", adminKey, object{"account_id": acme.accountID, "nif": "B12345675", "name": "Bad"})
	ts.wantError(422, "unknown_account", "POST", "/v1/companies", adminKey, object{"account_id": webhookID(), "nif": "A58818501", "name": "Orphan"})
	ts.wantError(400, "invalid_request", "POST", "/v1/companies", adminKey, object{"account_id": "x", "nif": "A58818501", "name": "Bad"})
	ts.wantError(400, "unknown_field", "POST", "/v1/companies", adminKey, object{"account_id": acme.accountID, "nif": "A58818501", "name": "X", "vat": "ES"})
	ts.wantError(403, "forbidden", "POST", "/v1/companies", acme.key, object{"account_id": acme.accountID, "nif": "A58818501", "name": "X"})
	ts.wantError(401, "unauthorized", "POST", "/v1/companies", "", nil)
	ts.wantError(413, "request_too_large", "POST", "/v1/companies", adminKey, big)
	c := "/v1/companies/" + acme.companyID
	ts.must(200, "GET", c, acme.key, nil, nil)
	ts.wantError(404, "not_found", "GET", "/v1/companies/"+webhookID(), acme.key, nil)
	ts.wantError(401, "unauthorized", "GET", c, "", nil)
	ts.wantError(405, "method_not_allowed", "PUT", c, adminKey, object{"name": "Y"})

	// Endpoints of every scope: one whose receiver refuses (422), so that
	// its deliveries can be sent again, and one that takes everything.
	// (A 410 would disable the endpoint.) The platform's receive the
	// operational events of the others' failures.
	refusing, _ := statusSink(t, 422)
	okSink := newSink(t)
	type scope struct {
		name, parent, unknownParent, right, wrong, key, events string
		rightStatus                                            int
		ep, ok                                                 endpoint
	}
	scopes := []*scope{
		{name: "company", parent: c, unknownParent: "/v1/companies/" + webhookID(), right: "replay", wrong: "retry", rightStatus: 201, key: acme.key, events: "invoice.*"},
		{name: "account", parent: a, unknownParent: "/v1/accounts/" + webhookID(), right: "retry", wrong: "replay", rightStatus: 200, key: acme.key, events: "invoice.*"},
		{name: "platform", parent: "/v1", right: "replay", wrong: "retry", rightStatus: 201, key: adminKey, events: "webhook_delivery.*"},
	}
	for _, sc := range scopes {
		in := object{"url": refusing.URL, "enabled_events": []string{sc.events}, "description": "ERP", "api_version": "2025-06-01", "livemode": true}
		if sc.name == "account" {
			in["relationships"] = []string{"own"}
		}
		sc.ep = ts.newEndpoint(sc.parent, sc.key, in)
		sc.ok = ts.newEndpoint(sc.parent, adminKey, object{"url": okSink.URL, "enabled_events": []string{"*"}})
		base, ep := sc.parent+"/webhook_endpoints", sc.ep
		ts.wantError(400, "url_not_allowed", "POST", base, sc.key, object{"url": "http://10.0.0.1/hook", "enabled_events": []string{"*"}})
		ts.wantError(400, "invalid_request", "POST", base, sc.key, object{"url": okSink.URL, "enabled_events": []string{}})
		ts.wantError(400, "unknown_field", "POST", base, sc.key, object{"url": okSink.URL, "enabled_events": []string{"*"}, "secret": "whsec_x"})
		ts.wantError(400, "invalid_json", "POST", base, sc.key, `{"url": `)
		ts.wantError(401, "unauthorized", "POST", base, "", nil)
		ts.wantError(413, "request_too_large", "POST", base, sc.key, big)
		if sc.unknownParent != "" {
			ts.wantError(404, "not_found", "POST", sc.unknownParent+"/webhook_endpoints", adminKey, object{"url": okSink.URL, "enabled_events": []string{"*"}})
			ts.wantError(404, "not_found", "GET", sc.unknownParent+"/webhook_endpoints", sc.key, nil)
		}
		ts.must(200, "GET", base, sc.key, nil, nil)
		ts.must(200, "GET", base+"?limit=1", sc.key, nil, nil)
		ts.wantError(400, "invalid_request", "GET", base+"?limit=0", sc.key, nil)
		if sc.unknownParent != "" {
			// The local relay (SPEC 20): a relay endpoint has no url. Its
			// stream lasts, so cmd/webhooks' relay tests hold it; here its
			// refusals.
			var relayEP object
			ts.must(201, "POST", base, sc.key, object{"relay": true, "enabled_events": []string{"*"}}, &relayEP)
			if relayEP["relay"] != true || relayEP["url"] != nil || relayEP["secret"] == nil {
				t.Errorf("relay endpoint: got relay %v url %v, want true and null, with a secret", relayEP["relay"], relayEP["url"])
			}
			ts.wantError(400, "invalid_request", "POST", base, sc.key, object{"relay": true, "url": okSink.URL, "enabled_events": []string{"*"}})
			ts.wantError(400, "invalid_request", "POST", base, sc.key, object{"enabled_events": []string{"*"}})
			relayPath := base + "/" + relayEP["id"].(string)
			ts.wantError(400, "invalid_request", "PATCH", relayPath, sc.key, object{"url": okSink.URL})
			ts.wantError(400, "invalid_request", "GET", ep.path+"/relay", sc.key, nil)
			ts.wantError(404, "not_found", "GET", base+"/"+webhookID()+"/relay", sc.key, nil)
			ts.wantError(401, "unauthorized", "GET", relayPath+"/relay", "", nil)
			ts.wantError(404, "not_found", "POST", relayPath+"/relay/answers", sc.key, object{"request_id": webhookID(), "status": 200})
			ts.wantError(400, "invalid_request", "POST", relayPath+"/relay/answers", sc.key, object{"request_id": webhookID()})
			ts.wantError(400, "unknown_field", "POST", relayPath+"/relay/answers", sc.key, object{"request_id": webhookID(), "status": 200, "headers": 1})
			ts.wantError(401, "unauthorized", "POST", relayPath+"/relay/answers", "", nil)
			ts.wantError(400, "invalid_request", "POST", ep.path+"/relay/answers", sc.key, object{"request_id": webhookID(), "status": 200})
			ts.must(204, "DELETE", relayPath, sc.key, nil, nil)
		}
		ts.wantError(400, "unknown_field", "GET", base+"?status=enabled", sc.key, nil)
		ts.wantError(401, "unauthorized", "GET", base, "", nil)
		ts.wantError(405, "method_not_allowed", "PUT", base, sc.key, nil)

		ts.must(200, "GET", ep.path, sc.key, nil, nil)
		ts.wantError(404, "not_found", "GET", base+"/"+webhookID(), sc.key, nil)
		ts.wantError(401, "unauthorized", "GET", ep.path, "", nil)
		ts.must(200, "PATCH", ep.path, sc.key, object{"description": "ERP (prod)", "enabled_events": []string{sc.events, "*"}}, nil)
		ts.must(200, "PATCH", ep.path, sc.key, object{"enabled_events": []string{sc.events}}, nil)
		ts.must(200, "PATCH", ep.path, sc.key, object{}, nil)
		ts.wantError(400, "url_not_allowed", "PATCH", ep.path, sc.key, object{"url": "http://169.254.169.254/latest"})
		ts.wantError(400, "invalid_request", "PATCH", ep.path, sc.key, object{"status": "paused"})
		ts.wantError(400, "unknown_field", "PATCH", ep.path, sc.key, object{"scope": "company"})
		ts.wantError(404, "not_found", "PATCH", base+"/"+webhookID(), sc.key, object{})
		ts.wantError(413, "request_too_large", "PATCH", ep.path, sc.key, big)
		ts.wantError(401, "unauthorized", "PATCH", ep.path, "", object{})
		ts.wantError(405, "method_not_allowed", "POST", ep.path, sc.key, object{})

		ts.must(200, "GET", ep.path+"/secret", sc.key, nil, nil)
		ts.wantError(404, "not_found", "GET", base+"/"+webhookID()+"/secret", sc.key, nil)
		ts.wantError(401, "unauthorized", "GET", ep.path+"/secret", "", nil)
		ts.must(200, "POST", ep.path+"/rotate_secret", sc.key, object{"expires_in": 0}, nil)
		ts.must(200, "POST", ep.path+"/rotate_secret", sc.key, nil, nil)
		ts.wantError(400, "invalid_request", "POST", ep.path+"/rotate_secret", sc.key, object{"expires_in": 604801})
		ts.wantError(400, "unknown_field", "POST", ep.path+"/rotate_secret", sc.key, object{"expires": 60})
		ts.wantError(404, "not_found", "POST", base+"/"+webhookID()+"/rotate_secret", sc.key, nil)
		ts.wantError(413, "request_too_large", "POST", ep.path+"/rotate_secret", sc.key, big)
		ts.wantError(401, "unauthorized", "POST", ep.path+"/rotate_secret", "", nil)
	}

	// Events.
	ev := ts.registerEvent(eventIn(acme.companyID, "invoice.sent"))
	hdr := http.Header{"Idempotency-Key": {"order-42"}}
	for _, want := range []int{201, 200} {
		if got, raw := ts.raw("POST", "/v1/events", adminKey, eventIn(acme.companyID, "invoice.paid"), hdr); got != want {
			t.Errorf("POST /v1/events with Idempotency-Key: got %d %s, want %d", got, raw, want)
		}
	}
	if got, raw := ts.raw("POST", "/v1/events", adminKey, eventIn(acme.companyID, "invoice.created"), hdr); got != 409 {
		t.Errorf("POST /v1/events with a reused Idempotency-Key: got %d %s, want 409", got, raw)
	}
	ts.registerEvent(object{"type": "account.updated", "account_id": acme.accountID, "correlation_id": webhookID(), "livemode": true, "data": object{"object": object{"object": "account"}}})
	ts.wantError(422, "company_required", "POST", "/v1/events", adminKey, object{"type": "invoice.sent", "data": object{"object": invoice}})
	ts.wantError(422, "unknown_company", "POST", "/v1/events", adminKey, eventIn(webhookID(), "invoice.sent"))
	ts.wantError(422, "unknown_account", "POST", "/v1/events", adminKey, object{"type": "account.updated", "account_id": webhookID(), "data": object{"object": object{}}})
	ts.wantError(422, "unprocessable", "POST", "/v1/events", adminKey, object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": object{"object": "invoice", "total": "1.234"}}})
	ts.wantError(400, "invalid_request", "POST", "/v1/events", adminKey, object{"type": "Invoice Sent", "company_id": acme.companyID, "data": object{"object": invoice}})
	ts.wantError(400, "invalid_request", "POST", "/v1/events", adminKey, object{"type": "invoice.sent", "company_id": acme.companyID})
	ts.wantError(400, "unknown_field", "POST", "/v1/events", adminKey, object{"type": "invoice.sent", "company_id": acme.companyID, "data": object{"object": invoice}, "id": webhookID()})
	ts.wantError(403, "forbidden", "POST", "/v1/events", acme.key, eventIn(acme.companyID, "invoice.sent"))
	ts.wantError(401, "unauthorized", "POST", "/v1/events", "", eventIn(acme.companyID, "invoice.sent"))
	ts.wantError(413, "request_too_large", "POST", "/v1/events", adminKey, big)
	ts.wantError(405, "method_not_allowed", "GET", "/v1/events", adminKey, nil)
	exerciseBatch(ts, acme)
	exerciseEventTypes(t)
	ts.must(200, "GET", "/v1/events/"+ev["id"].(string), acme.key, nil, nil)
	ts.wantError(404, "not_found", "GET", "/v1/events/"+webhookID(), acme.key, nil)
	ts.wantError(401, "unauthorized", "GET", "/v1/events/"+ev["id"].(string), "", nil)
	for _, log := range []string{c + "/events", a + "/events"} {
		ts.must(200, "GET", log+"?type=invoice.sent&created_gte=0&created_lt=9999999999&limit=5", acme.key, nil, nil)
		ts.wantError(400, "invalid_request", "GET", log+"?created_gte=soon", acme.key, nil)
		ts.wantError(400, "unknown_field", "GET", log+"?order=asc", acme.key, nil)
		ts.wantError(401, "unauthorized", "GET", log, "", nil)
	}
	ts.wantError(404, "not_found", "GET", "/v1/companies/"+webhookID()+"/events", acme.key, nil)
	ts.wantError(404, "not_found", "GET", "/v1/accounts/"+webhookID()+"/events", acme.key, nil)

	// Deliveries: list and detail, retry and replay, test, recover.
	for _, sc := range scopes {
		ts.settle(clock, sc.ep.id, sc.ok.id)
		ep := sc.ep
		ds := ts.deliveries(ep, sc.key)
		if len(ds) == 0 || ds[0]["status"] != "failed_permanently" {
			t.Fatalf("%s endpoint: got deliveries %v, want failed_permanently ones", sc.name, ds)
		}
		d := ds[0]["id"].(string)
		other := webhookID()
		ts.must(200, "GET", ep.path+"/deliveries?status=failed_permanently&event_id="+ds[0]["event_id"].(string), sc.key, nil, nil)
		ts.wantError(400, "invalid_request", "GET", ep.path+"/deliveries?status=ok", sc.key, nil)
		ts.wantError(400, "unknown_field", "GET", ep.path+"/deliveries?type=invoice.sent", sc.key, nil)
		ts.wantError(404, "not_found", "GET", sc.parent+"/webhook_endpoints/"+other+"/deliveries", sc.key, nil)
		ts.wantError(401, "unauthorized", "GET", ep.path+"/deliveries", "", nil)
		ts.must(200, "GET", ep.path+"/deliveries/"+d, sc.key, nil, nil)
		ts.wantError(404, "not_found", "GET", ep.path+"/deliveries/"+other, sc.key, nil)
		ts.wantError(401, "unauthorized", "GET", ep.path+"/deliveries/"+d, "", nil)
		ts.wantError(405, "method_not_allowed", "DELETE", ep.path+"/deliveries/"+d, sc.key, nil)

		for _, action := range []string{sc.wrong, sc.right} {
			ts.wantError(404, "not_found", "POST", ep.path+"/deliveries/"+other+"/"+action, sc.key, nil)
			ts.wantError(401, "unauthorized", "POST", ep.path+"/deliveries/"+d+"/"+action, "", nil)
			ts.wantError(413, "request_too_large", "POST", ep.path+"/deliveries/"+d+"/"+action, sc.key, big)
			ts.wantError(400, "unknown_field", "POST", ep.path+"/deliveries/"+d+"/"+action, sc.key, object{"at": 0})
		}
		ts.wantError(400, "wrong_resend_action", "POST", ep.path+"/deliveries/"+d+"/"+sc.wrong, sc.key, nil)
		ts.must(sc.rightStatus, "POST", ep.path+"/deliveries/"+d+"/"+sc.right, sc.key, object{}, nil)
		ts.settle(clock, ep.id)

		ts.must(201, "POST", ep.path+"/test", sc.key, nil, nil)
		ts.must(201, "POST", ep.path+"/rehearsals", sc.key, nil, nil)
		ts.wantError(400, "unknown_field", "POST", ep.path+"/rehearsals", sc.key, object{"minutes": 10})
		ts.wantError(404, "not_found", "POST", sc.parent+"/webhook_endpoints/"+other+"/rehearsals", sc.key, nil)
		ts.wantError(401, "unauthorized", "POST", ep.path+"/rehearsals", "", nil)
		ts.wantError(413, "request_too_large", "POST", ep.path+"/rehearsals", sc.key, big)
		ts.wantError(400, "unknown_field", "POST", ep.path+"/test", sc.key, object{"type": "ping"})
		ts.wantError(404, "not_found", "POST", sc.parent+"/webhook_endpoints/"+other+"/test", sc.key, nil)
		ts.wantError(401, "unauthorized", "POST", ep.path+"/test", "", nil)
		ts.wantError(413, "request_too_large", "POST", ep.path+"/test", sc.key, big)
		ts.settle(clock, ep.id)

		ts.must(200, "POST", ep.path+"/recover", sc.key, object{"since": 0}, nil)
		ts.must(200, "POST", ep.path+"/recover", sc.key, object{"since": 0, "until": clock.Now().Unix()}, nil)
		ts.wantError(400, "invalid_request", "POST", ep.path+"/recover", sc.key, object{"until": 10})
		ts.wantError(400, "unknown_field", "POST", ep.path+"/recover", sc.key, object{"since": 0, "status": "failed"})
		ts.wantError(404, "not_found", "POST", sc.parent+"/webhook_endpoints/"+other+"/recover", sc.key, object{"since": 0})
		ts.wantError(401, "unauthorized", "POST", ep.path+"/recover", "", object{"since": 0})
		ts.wantError(413, "request_too_large", "POST", ep.path+"/recover", sc.key, big)
		ts.wantError(405, "method_not_allowed", "GET", ep.path+"/recover", sc.key, nil)
		ts.settle(clock, ep.id)

		// 409: a delivered delivery; then a disabled endpoint.
		delivered := ts.deliveries(sc.ok, sc.key)[0]
		if delivered["status"] != "delivered" {
			t.Fatalf("%s: got %v, want a delivered delivery", sc.name, delivered)
		}
		ts.wantError(409, "delivery_not_resendable", "POST", sc.ok.path+"/deliveries/"+delivered["id"].(string)+"/"+sc.right, sc.key, nil)
		ts.must(200, "PATCH", ep.path, sc.key, object{"status": "disabled"}, nil)
		ts.wantError(409, "endpoint_disabled", "POST", ep.path+"/deliveries/"+d+"/"+sc.right, sc.key, nil)
		ts.wantError(409, "endpoint_disabled", "POST", ep.path+"/test", sc.key, nil)
		ts.wantError(409, "endpoint_disabled", "POST", ep.path+"/rehearsals", sc.key, nil)
		ts.wantError(409, "endpoint_disabled", "POST", ep.path+"/recover", sc.key, object{"since": 0})
		ts.must(200, "PATCH", ep.path, sc.key, object{"status": "enabled"}, nil)
	}

	// Audit log.
	ts.must(200, "GET", a+"/audit_log?limit=100", acme.key, nil, nil)
	ts.wantError(400, "invalid_request", "GET", a+"/audit_log?limit=101", acme.key, nil)
	ts.wantError(400, "unknown_field", "GET", a+"/audit_log?action=x", acme.key, nil)
	ts.wantError(404, "not_found", "GET", "/v1/accounts/"+webhookID()+"/audit_log", acme.key, nil)
	ts.wantError(401, "unauthorized", "GET", a+"/audit_log", "", nil)
	ts.must(200, "GET", "/v1/audit_log?limit=100", adminKey, nil, nil)
	ts.wantError(400, "invalid_request", "GET", "/v1/audit_log?limit=101", adminKey, nil)
	ts.wantError(400, "invalid_request", "GET", "/v1/audit_log?starting_after="+webhookID(), adminKey, nil)
	ts.wantError(400, "unknown_field", "GET", "/v1/audit_log?account_id="+acme.accountID, adminKey, nil)
	ts.wantError(401, "unauthorized", "GET", "/v1/audit_log", "", nil)
	ts.wantError(403, "forbidden", "GET", "/v1/audit_log", acme.key, nil)
	ts.wantError(405, "method_not_allowed", "POST", "/v1/audit_log", adminKey, nil)

	// The data lifecycle (SPEC 19), on an account of its own.
	gone := ts.newAccount("Gone", "", "A58818501")
	goneEv := ts.registerEvent(object{"type": "invoice.sent", "company_id": gone.companyID, "data": object{"object": invoice}})
	ga, gc, ge := "/v1/accounts/"+gone.accountID, "/v1/companies/"+gone.companyID, "/v1/events/"+goneEv["id"].(string)
	ts.must(200, "PATCH", ga, adminKey, object{"name": "Gone Again"}, nil)
	ts.wantError(400, "invalid_request", "PATCH", ga, adminKey, object{"name": " "})
	ts.wantError(400, "unknown_field", "PATCH", ga, adminKey, object{"name": "X", "provisioned_by": nil})
	ts.wantError(401, "unauthorized", "PATCH", ga, "", object{"name": "X"})
	ts.wantError(403, "forbidden", "PATCH", ga, gone.key, object{"name": "X"})
	ts.wantError(404, "not_found", "PATCH", "/v1/accounts/"+webhookID(), adminKey, object{"name": "X"})
	ts.wantError(413, "request_too_large", "PATCH", ga, adminKey, object{"name": strings.Repeat("x", 300<<10)})
	ts.must(200, "PATCH", gc, adminKey, object{"name": "Gone SL"}, nil)
	ts.wantError(400, "unknown_field", "PATCH", gc, adminKey, object{"nif": "B12345674"})
	ts.wantError(401, "unauthorized", "PATCH", gc, "", object{"name": "X"})
	ts.wantError(403, "forbidden", "PATCH", gc, gone.key, object{"name": "X"})
	ts.wantError(404, "not_found", "PATCH", "/v1/companies/"+webhookID(), adminKey, object{"name": "X"})
	ts.wantError(413, "request_too_large", "PATCH", gc, adminKey, object{"name": strings.Repeat("x", 300<<10)})
	ts.must(200, "POST", ge+"/erase", adminKey, nil, nil)
	ts.wantError(400, "unknown_field", "POST", ge+"/erase", adminKey, object{"reason": "gdpr"})
	ts.wantError(401, "unauthorized", "POST", ge+"/erase", "", nil)
	ts.wantError(403, "forbidden", "POST", ge+"/erase", gone.key, nil)
	ts.wantError(404, "not_found", "POST", "/v1/events/"+webhookID()+"/erase", adminKey, nil)
	ts.wantError(413, "request_too_large", "POST", ge+"/erase", adminKey, object{"x": strings.Repeat("x", 300<<10)})
	var goneClient object
	ts.must(201, "POST", "/v1/accounts", adminKey, object{"name": "Gone's client", "provisioned_by": gone.accountID}, &goneClient)
	ts.wantError(409, "account_has_managed_accounts", "DELETE", ga, adminKey, nil)
	ts.wantError(401, "unauthorized", "DELETE", ga, "", nil)
	ts.wantError(403, "forbidden", "DELETE", ga, gone.key, nil)
	ts.wantError(400, "unknown_field", "DELETE", ga+"?force=1", adminKey, nil)
	ts.wantError(401, "unauthorized", "DELETE", gc, "", nil)
	ts.wantError(403, "forbidden", "DELETE", gc, gone.key, nil)
	ts.wantError(400, "unknown_field", "DELETE", gc+"?force=1", adminKey, nil)
	ts.must(204, "DELETE", gc, adminKey, nil, nil)
	ts.wantError(404, "not_found", "DELETE", gc, adminKey, nil)
	ts.must(204, "DELETE", "/v1/accounts/"+goneClient["id"].(string), adminKey, nil, nil)
	ts.must(204, "DELETE", ga, adminKey, nil, nil)
	ts.wantError(404, "not_found", "DELETE", ga, adminKey, nil)
	ts.must(200, "GET", ga+"/audit_log", adminKey, nil, nil)

	// Deleting, last: the endpoint's routes answer 404.
	for _, sc := range scopes {
		ep := sc.ep
		ts.must(204, "DELETE", ep.path, sc.key, nil, nil)
		ts.wantError(404, "not_found", "DELETE", ep.path, sc.key, nil)
		ts.wantError(401, "unauthorized", "DELETE", ep.path, "", nil)
	}
	// The platform endpoints are the admin key's alone.
	pe := scopes[2].ok
	for _, call := range [][2]string{{"POST", "/v1/webhook_endpoints"}, {"GET", "/v1/webhook_endpoints"}, {"GET", pe.path},
		{"PATCH", pe.path}, {"DELETE", pe.path}, {"GET", pe.path + "/secret"}, {"POST", pe.path + "/rotate_secret"},
		{"POST", pe.path + "/test"}, {"POST", pe.path + "/rehearsals"}, {"POST", pe.path + "/recover"}, {"GET", pe.path + "/deliveries"},
		{"GET", pe.path + "/deliveries/" + webhookID()}, {"POST", pe.path + "/deliveries/" + webhookID() + "/retry"},
		{"POST", pe.path + "/deliveries/" + webhookID() + "/replay"}} {
		ts.wantError(403, "forbidden", call[0], call[1], acme.key, nil)
	}
	ts.wantError(404, "not_found", "GET", "/v1/nothing", acme.key, nil)
	ts.wantError(404, "not_found", "GET", "/v1/accounts/"+acme.accountID+"/invoices", acme.key, nil)

	// readyz when the database is gone.
	down := startService(t, "")
	down.svc.Store.Close()
	if got, raw := down.raw("GET", "/readyz", "", nil, nil); got != 503 {
		t.Errorf("GET /readyz with the database closed: got %d %s, want 503", got, raw)
	}

	// Every operation of the document was exercised by this test.
	after := exercised()
	var ops []string
	var missing []string
	for path, item := range contract.doc.Paths.Map() {
		for method, o := range item.Operations() {
			ops = append(ops, o.OperationID)
			if len(diff(after[o.OperationID], before[o.OperationID])) == 0 {
				missing = append(missing, fmt.Sprintf("%s %s (%s)", method, path, o.OperationID))
			}
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("operation %s was not exercised", m)
	}
	// And every error status of the brief, somewhere.
	all := map[int]bool{}
	for op, statuses := range after {
		for s := range diff(statuses, before[op]) {
			all[s] = true
		}
	}
	for _, s := range []int{200, 201, 204, 400, 401, 403, 404, 405, 409, 413, 422, 503} {
		if !all[s] {
			t.Errorf("no call answered %d", s)
		}
	}
	// The coverage, operation by operation: declared statuses, with the
	// ones exercised marked.
	sort.Strings(ops)
	var b strings.Builder
	for _, id := range ops {
		o := operationByID(id)
		var cells []string
		for _, code := range declaredStatuses(o) {
			mark := " "
			if diff(after[id], before[id])[code] > 0 {
				mark = "x"
			}
			cells = append(cells, fmt.Sprintf("%d[%s]", code, mark))
		}
		fmt.Fprintf(&b, "%-36s %s\n", id, strings.Join(cells, " "))
	}
	for _, pseudo := range []struct {
		name   string
		status int
	}{{"404 (no such path)", 404}, {"405 (no such method)", 405}} {
		fmt.Fprintf(&b, "%-36s %d calls\n", pseudo.name, diff(after[pseudo.name], before[pseudo.name])[pseudo.status])
	}
	t.Logf("contract coverage (status[x] = exercised):\n%s", b.String())
}

// webhookID returns a well-formed id of nothing.
func webhookID() string {
	return fmt.Sprintf("01a00000-0000-7000-8000-%012d", time.Now().UnixNano()%1e12)
}

// diff returns after minus before, status by status.
func diff(after, before map[int]int) map[int]int {
	out := map[int]int{}
	for s, n := range after {
		if n-before[s] > 0 {
			out[s] = n - before[s]
		}
	}
	return out
}

func operationByID(id string) *openapi3.Operation {
	for _, item := range contract.doc.Paths.Map() {
		for _, o := range item.Operations() {
			if o.OperationID == id {
				return o
			}
		}
	}
	return nil
}

func declaredStatuses(o *openapi3.Operation) []int {
	var out []int
	for code := range o.Responses.Map() {
		var n int
		fmt.Sscan(code, &n)
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
