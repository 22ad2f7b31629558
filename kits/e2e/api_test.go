package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// tenant is a managed account and its provider: account parent provisions
// account managed, which owns company. An account endpoint of parent gets
// parent's account events as "own" and everything of managed as "managed".
type tenant struct {
	parent, managed, company string
}

func (s *service) newTenant(t *testing.T, n int) tenant {
	t.Helper()
	var p, a, c struct{ ID string }
	s.call(t, "POST", "/v1/accounts", object{"name": fmt.Sprintf("Gestoría %d", n)}, 201, &p)
	s.call(t, "POST", "/v1/accounts", object{"name": fmt.Sprintf("Cliente %d", n), "provisioned_by": p.ID}, 201, &a)
	s.call(t, "POST", "/v1/companies", object{"account_id": a.ID, "nif": dni(n), "name": fmt.Sprintf("Cliente %d SL", n)}, 201, &c)
	return tenant{parent: p.ID, managed: a.ID, company: c.ID}
}

// endpoint is a webhook endpoint made through the API.
type endpoint struct {
	ID string
	// path is its API path, /v1/companies/…/webhook_endpoints/… or
	// /v1/accounts/…/webhook_endpoints/….
	path string
	// secrets are its live secrets, new first.
	secrets []string
}

// createEndpoint creates an endpoint under parent (/v1/companies/{id} or
// /v1/accounts/{id}).
func (s *service) createEndpoint(t *testing.T, parent string, in object) *endpoint {
	t.Helper()
	var out struct{ ID, Secret string }
	s.call(t, "POST", parent+"/webhook_endpoints", in, 201, &out)
	if out.Secret == "" {
		t.Fatalf("POST %s/webhook_endpoints gave no secret", parent)
	}
	return &endpoint{ID: out.ID, path: parent + "/webhook_endpoints/" + out.ID, secrets: []string{out.Secret}}
}

// rotate rotates the endpoint's secret with an hour of overlap.
func (s *service) rotate(t *testing.T, ep *endpoint) {
	t.Helper()
	var out struct{ Secret string }
	s.call(t, "POST", ep.path+"/rotate_secret", object{"expires_in": 3600}, 200, &out)
	// Only one old secret is kept: rotating again ends the older one.
	ep.secrets = []string{out.Secret, ep.secrets[0]}
}

// event registers an event and returns its id.
func (s *service) event(t *testing.T, in object) string {
	t.Helper()
	var out struct{ ID string }
	s.call(t, "POST", "/v1/events", in, 201, &out)
	return out.ID
}

// delivery is a webhook_delivery with its attempts.
type delivery struct {
	ID                 string
	Status             string
	AttemptCount       int       `json:"attempt_count"`
	LastResponseStatus *int      `json:"last_response_status"`
	Attempts           []attempt `json:"attempts"`
}

type attempt struct {
	Number         int
	ResponseStatus *int    `json:"response_status"`
	ResponseBody   string  `json:"response_body"`
	Error          *string `json:"error"`
}

func (d delivery) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "delivery %s %s after %d attempts", d.ID, d.Status, d.AttemptCount)
	for _, a := range d.Attempts {
		status, errText := "no answer", ""
		if a.ResponseStatus != nil {
			status = fmt.Sprint(*a.ResponseStatus)
		}
		if a.Error != nil {
			errText = " error: " + *a.Error
		}
		fmt.Fprintf(&b, "; attempt %d: %s %q%s", a.Number, status, strings.TrimSpace(a.ResponseBody), errText)
	}
	return b.String()
}

// attempted waits until the endpoint's delivery of the event has had an
// attempt, and returns it with its attempts.
func (s *service) attempted(t *testing.T, ep *endpoint, eventID string) delivery {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var l struct{ Data []delivery }
		s.call(t, "GET", ep.path+"/deliveries?event_id="+eventID, nil, 200, &l)
		if len(l.Data) > 1 {
			t.Fatalf("endpoint %s has %d deliveries of event %s, want one", ep.ID, len(l.Data), eventID)
		}
		if len(l.Data) == 1 && l.Data[0].AttemptCount > 0 {
			var d delivery
			s.call(t, "GET", ep.path+"/deliveries/"+l.Data[0].ID, nil, 200, &d)
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("endpoint %s: no attempt of event %s in 30 s (deliveries: %v)", ep.ID, eventID, l.Data)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// delivered waits for the endpoint's delivery of each event and fails,
// with what the receiver answered, unless its first attempt delivered it.
func (s *service) delivered(t *testing.T, ep *endpoint, eventIDs ...string) {
	t.Helper()
	for _, id := range eventIDs {
		if d := s.attempted(t, ep, id); d.Status != "delivered" || d.AttemptCount != 1 {
			t.Fatalf("event %s to endpoint %s: got %s, want delivered at the first attempt", id, ep.ID, d)
		}
	}
}
