package e2e

import (
	"bufio"
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// TestRelay_Isolation: a relay endpoint's connection is its owner's
// (SPEC 8, 20). On both backends, another account's key gets 404 on the
// stream and on the answers, exactly as for an endpoint that does not
// exist, and an answer it posts to the owner's request changes nothing;
// the owner's answer is the attempt's outcome. Before any listener
// connects, the attempt fails relay_not_connected.
func TestRelay_Isolation(t *testing.T) {
	for name, opts := range backends(t) {
		t.Run(name, func(t *testing.T) {
			ts := startService(t, "", opts...)
			a := ts.newAccount("Acme", "", "B12345674")
			b := ts.newAccount("Bravo", "", "12345678Z")
			ep := ts.newEndpoint("/v1/companies/"+a.companyID, a.key, object{"relay": true, "enabled_events": []string{"invoice.*"}})
			relayPath := ep.path + "/relay"

			// No listener: relay_not_connected.
			ts.registerEvent(object{"type": "invoice.sent", "company_id": a.companyID, "data": object{"object": invoice}})
			ts.waitFor("relay_not_connected", 10*time.Second, func() bool {
				ds := ts.deliveries(ep, a.key)
				if len(ds) != 1 {
					return false
				}
				var d struct {
					Attempts []struct{ Error *string } `json:"attempts"`
				}
				ts.must(200, "GET", ep.path+"/deliveries/"+ds[0]["id"].(string), a.key, nil, &d)
				return len(d.Attempts) == 1 && d.Attempts[0].Error != nil && *d.Attempts[0].Error == "relay_not_connected"
			})

			// Another account's key: what a missing endpoint answers.
			for _, key := range []string{b.key} {
				ts.wantError(404, "not_found", "GET", relayPath, key, nil)
				ts.wantError(404, "not_found", "GET", "/v1/companies/"+b.companyID+"/webhook_endpoints/"+ep.id+"/relay", key, nil)
				ts.wantError(404, "not_found", "POST", relayPath+"/answers", key, object{"request_id": webhookID(), "status": 200})
			}

			// The owner's connection (outside the contract's transport,
			// which reads an answer whole: this one lasts).
			req, _ := http.NewRequestWithContext(t.Context(), "GET", ts.url+relayPath, nil)
			req.Header.Set("Authorization", "Bearer "+a.key)
			resp, err := (&http.Client{Transport: http.DefaultTransport}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			lines := bufio.NewScanner(resp.Body)
			lines.Buffer(nil, 1<<20)
			next := func() map[string]any {
				t.Helper()
				for lines.Scan() {
					var l map[string]any
					if err := json.Unmarshal(lines.Bytes(), &l); err != nil {
						t.Fatal(err)
					}
					if l["type"] != "ping" {
						return l
					}
				}
				t.Fatalf("the stream ended: %v", lines.Err())
				return nil
			}
			if l := next(); l["type"] != "connected" {
				t.Fatalf("first line: got %v", l)
			}
			ev := ts.registerEvent(object{"type": "invoice.paid", "company_id": a.companyID, "data": object{"object": invoice}})
			l := next()
			headers, _ := l["headers"].(map[string]any)
			if l["type"] != "request" || headers == nil || headers["Factuarea-Event-Id"].([]any)[0] != ev["id"] {
				t.Fatalf("got %v, want the request of event %s", l, ev["id"])
			}
			id := l["id"].(string)
			ts.wantError(404, "not_found", "POST", relayPath+"/answers", b.key, object{"request_id": id, "status": 500})
			ts.must(204, "POST", relayPath+"/answers", a.key, object{"request_id": id, "status": 200, "duration_ms": 3, "body": "thanks"}, nil)
			ts.waitFor("the delivery to be delivered", 10*time.Second, func() bool {
				for _, d := range ts.deliveries(ep, a.key) {
					if d["event_id"] == ev["id"] {
						return d["status"] == "delivered" && d["last_response_status"] == float64(200)
					}
				}
				return false
			})
		})
	}
}
