package storetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

// t0 is the suite's clock. Every time a test hands a store is t0 plus an
// offset, so a run does not depend on the wall clock; it has no sub-second
// part, so the store's millisecond precision loses nothing.
var t0 = time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)

// at returns t0 plus d.
func at(d time.Duration) time.Time { return t0.Add(d) }

// day is a calendar day, for the resend windows.
const day = 24 * time.Hour

// setup marks t parallel and opens it a fresh store: every leaf test owns
// its data, so tests never see each other's rows.
func setup(t *testing.T, open func(t *testing.T) Store) Store {
	t.Helper()
	t.Parallel()
	return open(t)
}

// group runs fn as a parallel subtest that holds a group of leaf tests.
func group(t *testing.T, name string, fn func(t *testing.T)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		t.Parallel()
		fn(t)
	})
}

// UseCases returns the use cases on s with now as their clock: what the API
// and the portal call, so that the suite checks their rules on every
// backend.
func UseCases(s Store, now time.Time) *app.App {
	return app.New(app.Config{Store: s, Registrar: s, AdminKey: "storetest", Now: func() time.Time { return now }})
}

// admin is the caller of the changes the suite makes.
var admin = app.Admin()

// ref names an endpoint by its id alone (the admin sees every owner).
func ref(endpointID string) app.EndpointRef { return app.EndpointRef{ID: endpointID} }

// MustCreateAccount creates an account, managed when provisionedBy is set.
func MustCreateAccount(tb testing.TB, s Store, provisionedBy string) *webhooks.Account {
	tb.Helper()
	a, err := UseCases(s, t0).CreateAccount(tb.Context(), admin, "Account "+nextSerial(), provisionedBy)
	if err != nil {
		tb.Fatalf("CreateAccount: %v", err)
	}
	return a
}

// MustCreateCompany creates a company of the account, with a NIF no other
// company of the process has.
func MustCreateCompany(tb testing.TB, s Store, accountID string) *webhooks.Company {
	tb.Helper()
	c, err := UseCases(s, t0).CreateCompany(tb.Context(), admin, accountID, NewNIF(), "Company "+nextSerial())
	if err != nil {
		tb.Fatalf("CreateCompany: %v", err)
	}
	return c
}

var serial atomic.Int64

func nextSerial() string { return fmt.Sprint(serial.Add(1)) }

var nifSerial atomic.Int64

// NewNIF returns a valid DNI-based NIF that no earlier call returned.
func NewNIF() string {
	n := 10_000_000 + nifSerial.Add(1)
	return fmt.Sprintf("%08d%c", n, "TRWAGMYFPDXBNJZSQVHLCKE"[n%23])
}

// NewCompanyEndpoint returns an unsaved company endpoint of the company
// subscribed to events.
func NewCompanyEndpoint(companyID string, events ...string) *webhooks.Endpoint {
	return &webhooks.Endpoint{
		Scope:         webhooks.ScopeCompany,
		CompanyID:     companyID,
		URL:           "https://receiver.example.com/hooks/" + nextSerial(),
		EnabledEvents: events,
		Livemode:      true,
	}
}

// NewAccountEndpoint returns an unsaved account endpoint of the account
// subscribed to events with relationships (nil: the default, both).
func NewAccountEndpoint(accountID string, rels []webhooks.Relationship, events ...string) *webhooks.Endpoint {
	return &webhooks.Endpoint{
		Scope:         webhooks.ScopeAccount,
		AccountID:     accountID,
		URL:           "https://receiver.example.com/hooks/" + nextSerial(),
		EnabledEvents: events,
		Relationships: rels,
		Livemode:      true,
	}
}

// MustCreateEndpoint creates the endpoint e describes as the API would, at
// e.Created (t0 unless set), and fills e with what the creation assigned
// (id, secret, times, defaults).
func MustCreateEndpoint(tb testing.TB, s Store, e *webhooks.Endpoint) *webhooks.Endpoint {
	tb.Helper()
	oe, err := createEndpoint(tb, s, e)
	if err != nil {
		tb.Fatalf("CreateEndpoint: %v", err)
	}
	*e = *oe.Endpoint
	return e
}

// createEndpoint creates the endpoint e describes at e.Created (t0 unless
// set).
func createEndpoint(tb testing.TB, s Store, e *webhooks.Endpoint) (*app.OwnedEndpoint, error) {
	owner := app.CompanyOwner(e.CompanyID)
	switch e.Scope {
	case webhooks.ScopeAccount:
		owner = app.AccountOwner(e.AccountID)
	case webhooks.ScopePlatform:
		owner = app.PlatformOwner()
	}
	in := app.EndpointInput{URL: e.URL, EnabledEvents: e.EnabledEvents, APIVersion: e.APIVersion, Livemode: &e.Livemode, Description: e.Description,
		Ordered: e.Ordered, AutoRecover: e.AutoRecover, Relay: e.Relay}
	if e.Relationships != nil {
		in.Relationships = &e.Relationships
	}
	if e.Created.IsZero() {
		e.Created = t0
	}
	return UseCases(s, e.Created).CreateEndpoint(tb.Context(), admin, owner, in)
}

// recordAudit stores an audit entry in a transaction of its own.
func recordAudit(tb testing.TB, s Store, e *webhooks.AuditEntry) error {
	return s.InTx(tb.Context(), func(tx app.Tx) error { return tx.InsertAudit(tb.Context(), e) })
}

// The use cases the suite calls at a given time, by the ids of what they
// act on.

func updateEndpoint(tb testing.TB, s Store, id string, u *webhooks.EndpointUpdate, now time.Time) (*webhooks.Endpoint, error) {
	return UseCases(s, now).UpdateEndpoint(tb.Context(), admin, ref(id), *u)
}

func deleteEndpoint(tb testing.TB, s Store, id string, now time.Time) error {
	return UseCases(s, now).DeleteEndpoint(tb.Context(), admin, ref(id))
}

// rotateSecret rotates the endpoint's secret at now, the old one signing
// until expires.
func rotateSecret(tb testing.TB, s Store, id string, expires, now time.Time) (*app.Rotation, error) {
	secs := int64(expires.Sub(now) / time.Second)
	return UseCases(s, now).RotateSecret(tb.Context(), admin, ref(id), &secs)
}

func sendTestEvent(tb testing.TB, s Store, endpointID string, now time.Time) (*webhooks.Delivery, error) {
	return UseCases(s, now).SendTestEvent(tb.Context(), admin, ref(endpointID))
}

// resend retries or replays the delivery id at now.
func resend(tb testing.TB, s Store, action, id string, now time.Time) (*webhooks.Delivery, error) {
	d, err := s.FindDelivery(tb.Context(), id)
	if err != nil {
		return nil, err
	}
	return UseCases(s, now).Resend(tb.Context(), admin, ref(d.EndpointID), id, action)
}

func retryDelivery(tb testing.TB, s Store, id string, now time.Time) (*webhooks.Delivery, error) {
	return resend(tb, s, webhooks.ActionRetry, id, now)
}

func replayDelivery(tb testing.TB, s Store, id string, now time.Time) (*webhooks.Delivery, error) {
	return resend(tb, s, webhooks.ActionReplay, id, now)
}

// recoverRange recovers the endpoint's deliveries created in [since,
// until) at now.
func recoverRange(tb testing.TB, s Store, endpointID string, since, until, now time.Time) (int, error) {
	from, to := since.Unix(), until.Unix()
	return UseCases(s, now).Recover(tb.Context(), admin, ref(endpointID), app.RecoverInput{Since: &from, Until: &to})
}

// NewEvent returns an unregistered event about the company, as the API
// builds it: validated, with its id, version and time assigned.
func NewEvent(tb testing.TB, typ, companyID string, created time.Time) *webhooks.Event {
	tb.Helper()
	ev := &webhooks.Event{
		Type:      typ,
		CompanyID: companyID,
		Livemode:  true,
		Object:    json.RawMessage(`{"object": "invoice", "id": "inv_` + nextSerial() + `", "total": "1210.00"}`),
	}
	return assignEvent(tb, ev, created)
}

// NewAccountEvent returns an unregistered account.* event of the account.
func NewAccountEvent(tb testing.TB, typ, accountID string, created time.Time) *webhooks.Event {
	tb.Helper()
	ev := &webhooks.Event{
		Type:      typ,
		AccountID: accountID,
		Livemode:  true,
		Object:    json.RawMessage(`{"object": "account", "id": "` + accountID + `"}`),
	}
	return assignEvent(tb, ev, created)
}

func assignEvent(tb testing.TB, ev *webhooks.Event, created time.Time) *webhooks.Event {
	tb.Helper()
	if err := ev.Validate(); err != nil {
		tb.Fatalf("Event.Validate: %v", err)
	}
	ev.ID, ev.APIVersion, ev.Created = webhooks.NewID(), webhooks.LatestAPIVersion, created
	return ev
}

// MustRegisterEvent registers ev without an idempotency key and returns its
// deliveries.
func MustRegisterEvent(tb testing.TB, s Store, ev *webhooks.Event) []*webhooks.Delivery {
	tb.Helper()
	got, ds, created, err := s.RegisterEvent(tb.Context(), ev, nil)
	if err != nil {
		tb.Fatalf("RegisterEvent(%s): %v", ev.Type, err)
	}
	if !created || got.ID != ev.ID {
		tb.Fatalf("RegisterEvent(%s): got event %s created %t, want %s created true", ev.Type, got.ID, created, ev.ID)
	}
	return ds
}

// MustRegisterOne registers ev and returns its delivery to endpointID,
// failing if there is not exactly one.
func MustRegisterOne(tb testing.TB, s Store, ev *webhooks.Event, endpointID string) *webhooks.Delivery {
	tb.Helper()
	var out *webhooks.Delivery
	for _, d := range MustRegisterEvent(tb, s, ev) {
		if d.EndpointID == endpointID {
			if out != nil {
				tb.Fatalf("RegisterEvent(%s): two deliveries to endpoint %s", ev.Type, endpointID)
			}
			out = d
		}
	}
	if out == nil {
		tb.Fatalf("RegisterEvent(%s): no delivery to endpoint %s", ev.Type, endpointID)
	}
	return out
}

// MustFindDelivery returns the delivery with its attempts.
func MustFindDelivery(tb testing.TB, s Store, id string) *webhooks.Delivery {
	tb.Helper()
	d, err := s.FindDelivery(tb.Context(), id)
	if err != nil {
		tb.Fatalf("FindDelivery(%s): %v", id, err)
	}
	return d
}

// MustFindEndpoint returns the endpoint.
func MustFindEndpoint(tb testing.TB, s Store, id string) *webhooks.Endpoint {
	tb.Helper()
	e, err := s.FindEndpoint(tb.Context(), id)
	if err != nil {
		tb.Fatalf("FindEndpoint(%s): %v", id, err)
	}
	return e
}

// MustFindEvent returns the event.
func MustFindEvent(tb testing.TB, s Store, id string) *webhooks.Event {
	tb.Helper()
	ev, err := s.FindEvent(tb.Context(), id)
	if err != nil {
		tb.Fatalf("FindEvent(%s): %v", id, err)
	}
	return ev
}

// MustClaim claims due deliveries at now with a new token and a one-minute
// lease.
func MustClaim(tb testing.TB, s Store, now time.Time, limit int) []*webhooks.Claim {
	tb.Helper()
	return MustClaimRequest(tb, s, webhooks.ClaimRequest{
		Now: now, Limit: limit, Token: webhooks.NewID(), LeaseUntil: now.Add(time.Minute),
	})
}

// MustClaimRequest claims deliveries as r says.
func MustClaimRequest(tb testing.TB, s Store, r webhooks.ClaimRequest) []*webhooks.Claim {
	tb.Helper()
	claims, err := s.ClaimDeliveries(tb.Context(), r)
	if err != nil {
		tb.Fatalf("ClaimDeliveries: %v", err)
	}
	for _, c := range claims {
		if c.Token != r.Token {
			tb.Errorf("claim of %s: token: got %q, want %q", c.Delivery.ID, c.Token, r.Token)
		}
	}
	return claims
}

// MustClaimOne claims the delivery id, due at now, and hands back any other
// delivery the claim took.
func MustClaimOne(tb testing.TB, s Store, id string, now time.Time) *webhooks.Claim {
	tb.Helper()
	claims := MustClaim(tb, s, now, 100)
	var out *webhooks.Claim
	var others []string
	for _, c := range claims {
		if c.Delivery.ID == id {
			out = c
		} else {
			others = append(others, c.Delivery.ID)
		}
	}
	if out == nil {
		tb.Fatalf("ClaimDeliveries at %s: delivery %s not claimed (claimed %v)", now, id, claimIDs(claims))
	}
	if len(others) > 0 {
		if err := s.ReleaseClaims(tb.Context(), out.Token, others); err != nil {
			tb.Fatalf("ReleaseClaims: %v", err)
		}
	}
	return out
}

// NewRecord returns the record of an attempt on a claimed delivery, made at
// now and answered with status (0: no answer), that ends in t.
func NewRecord(c *webhooks.Claim, now time.Time, status int, t webhooks.Transition) *webhooks.AttemptRecord {
	a := &webhooks.Attempt{
		DeliveryID:     c.Delivery.ID,
		Number:         c.Delivery.AttemptCount + 1,
		StartedAt:      now,
		Duration:       250 * time.Millisecond,
		ResponseStatus: status,
		Manual:         c.Delivery.Manual,
	}
	if status == 0 {
		a.Error = "dial tcp: connection refused"
	} else {
		a.ResponseBody = fmt.Sprintf(`{"status":%d}`, status)
	}
	return &webhooks.AttemptRecord{Token: c.Token, EndpointID: c.Endpoint.ID, Attempt: a, Transition: t, Delivery: c.Delivery, Endpoint: c.Endpoint}
}

// MustRecord records one attempt.
func MustRecord(tb testing.TB, s Store, r *webhooks.AttemptRecord) {
	tb.Helper()
	if err := s.RecordAttempts(tb.Context(), []*webhooks.AttemptRecord{r}); err != nil {
		tb.Fatalf("RecordAttempts: %v", err)
	}
}

// Transitions the suite records.
var (
	failedPermanently = webhooks.Transition{Status: webhooks.DeliveryFailedPermanently, Reason: webhooks.ReasonNonRetryableStatus}
	manualFailed      = webhooks.Transition{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonManualAttemptFailed}
	delivered         = webhooks.Transition{Status: webhooks.DeliveryDelivered}
)

func retryAt(next time.Time) webhooks.Transition {
	return webhooks.Transition{Status: webhooks.DeliveryPending, NextAttemptAt: next}
}

// MustAttempt claims the delivery at now and records one attempt answered
// with status that ends in t.
func MustAttempt(tb testing.TB, s Store, id string, now time.Time, status int, t webhooks.Transition) {
	tb.Helper()
	MustRecord(tb, s, NewRecord(MustClaimOne(tb, s, id, now), now, status, t))
}

// MustFailPermanently makes the delivery, due at now, end failed_permanently
// after a 410.
func MustFailPermanently(tb testing.TB, s Store, id string, now time.Time) {
	tb.Helper()
	MustAttempt(tb, s, id, now, 410, failedPermanently)
}

// MustListDeliveries returns every delivery of the endpoint (up to 100).
func MustListDeliveries(tb testing.TB, s Store, f webhooks.DeliveryFilter) []*webhooks.Delivery {
	tb.Helper()
	l, err := s.ListDeliveries(tb.Context(), f, webhooks.Page{Limit: 100})
	if err != nil {
		tb.Fatalf("ListDeliveries: %v", err)
	}
	return l.Data
}

// MustListAudit returns the account's audit entries (up to 100), newest
// first.
func MustListAudit(tb testing.TB, s Store, accountID string) []*webhooks.AuditEntry {
	tb.Helper()
	l, err := s.ListAudit(tb.Context(), accountID, webhooks.Page{Limit: 100})
	if err != nil {
		tb.Fatalf("ListAudit: %v", err)
	}
	return l.Data
}

// checkCode reports an error whose code is not want.
func checkCode(tb testing.TB, name string, err error, want string) {
	tb.Helper()
	if got := webhooks.ErrorCode(err); got != want {
		tb.Errorf("%s: error code: got %q (%v), want %q", name, got, err, want)
	}
}

// checkTime reports a time that differs from want at millisecond
// precision, the precision the store keeps.
func checkTime(tb testing.TB, name string, got, want time.Time) {
	tb.Helper()
	if !got.Truncate(time.Millisecond).Equal(want.Truncate(time.Millisecond)) {
		tb.Errorf("%s: got %s, want %s", name, got, want)
	}
}

// checkState reports a delivery whose status, reason, due time or attempt
// count differ from want's.
func checkState(tb testing.TB, name string, got *webhooks.Delivery, want webhooks.Transition, attempts int) {
	tb.Helper()
	if got.Status != want.Status {
		tb.Errorf("%s: status: got %q, want %q", name, got.Status, want.Status)
	}
	if got.Reason != want.Reason {
		tb.Errorf("%s: reason: got %q, want %q", name, got.Reason, want.Reason)
	}
	checkTime(tb, name+": next attempt", got.NextAttemptAt, want.NextAttemptAt)
	if got.AttemptCount != attempts {
		tb.Errorf("%s: attempt count: got %d, want %d", name, got.AttemptCount, attempts)
	}
}

// checkAudit reports an audit entry that does not record a succeeded change
// by admin at now.
func checkAudit(tb testing.TB, got *webhooks.AuditEntry, accountID, action, targetType, targetID string, now time.Time) {
	tb.Helper()
	if got.AccountID != accountID || got.Action != action || got.TargetType != targetType || got.TargetID != targetID {
		tb.Errorf("audit entry: got account %s %s %s %s, want account %s %s %s %s",
			got.AccountID, got.Action, got.TargetType, got.TargetID, accountID, action, targetType, targetID)
	}
	if got.Outcome != webhooks.AuditSucceeded || got.ErrorCode != "" {
		tb.Errorf("audit entry %s: outcome: got %q %q, want %q", got.Action, got.Outcome, got.ErrorCode, webhooks.AuditSucceeded)
	}
	if got.Actor != admin.Actor {
		tb.Errorf("audit entry %s: actor: got %+v, want %+v", got.Action, got.Actor, admin.Actor)
	}
	if !webhooks.ValidID(got.ID) {
		tb.Errorf("audit entry %s: id: got %q, want a UUID", got.Action, got.ID)
	}
	checkTime(tb, "audit entry "+got.Action+": created", got.Created, now)
}

// checkLastAudit checks the account's newest audit entry.
func checkLastAudit(tb testing.TB, s Store, accountID, action, targetType, targetID string, now time.Time) {
	tb.Helper()
	entries := MustListAudit(tb, s, accountID)
	if len(entries) == 0 {
		tb.Errorf("audit of %s: got no entries, want %s", accountID, action)
		return
	}
	checkAudit(tb, entries[0], accountID, action, targetType, targetID, now)
}

// checkList checks a list against want, the ids it must hold newest first:
// in one page, then two items a page following starting_after, with
// has_more true on every page but the last; and that an unknown cursor is
// refused.
func checkList[T any](t *testing.T, list func(webhooks.Page) (*webhooks.List[T], error), id func(T) string, want []string) {
	t.Helper()
	all, err := list(webhooks.Page{Limit: 100})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if got := mapIDs(all.Data, id); !slices.Equal(got, want) {
		t.Errorf("list: got %v, want %v", got, want)
	}
	if all.HasMore {
		t.Errorf("list of %d with limit 100: has_more: got true, want false", len(want))
	}
	var got []string
	after := ""
	for page := 1; ; page++ {
		l, err := list(webhooks.Page{Limit: 2, StartingAfter: after})
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if len(l.Data) > 2 {
			t.Fatalf("page %d with limit 2: got %d items", page, len(l.Data))
		}
		got = append(got, mapIDs(l.Data, id)...)
		if wantMore := len(got) < len(want); l.HasMore != wantMore {
			t.Errorf("page %d: has_more: got %t, want %t", page, l.HasMore, wantMore)
		}
		if !l.HasMore || len(l.Data) == 0 || page > len(want) {
			break
		}
		after = id(l.Data[len(l.Data)-1])
	}
	if !slices.Equal(got, want) {
		t.Errorf("pages of 2: got %v, want %v", got, want)
	}
	_, err = list(webhooks.Page{Limit: 2, StartingAfter: webhooks.NewID()})
	checkCode(t, "starting_after an unknown id", err, webhooks.EINVALID)
}

func mapIDs[T any](items []T, id func(T) string) []string {
	out := make([]string, len(items))
	for i, v := range items {
		out[i] = id(v)
	}
	return out
}

func claimIDs(claims []*webhooks.Claim) []string {
	return mapIDs(claims, func(c *webhooks.Claim) string { return c.Delivery.ID })
}

func deliveryID(d *webhooks.Delivery) string       { return d.ID }
func eventID(e *webhooks.Event) string             { return e.ID }
func endpointID(e *webhooks.Endpoint) string       { return e.ID }
func auditID(e *webhooks.AuditEntry) string        { return e.ID }
func deliveryIDs(ds []*webhooks.Delivery) []string { return mapIDs(ds, deliveryID) }

// envelope is the part of a delivery body the suite reads.
type envelope struct {
	ID                  string  `json:"id"`
	Type                string  `json:"type"`
	Test                bool    `json:"test"`
	Livemode            bool    `json:"livemode"`
	AccountRelationship *string `json:"account_relationship"`
	Account             *struct {
		ID string `json:"id"`
	} `json:"account"`
	CompanyID *string `json:"company_id"`
}

// decodeBody reads a delivery body, and the keys it has.
func decodeBody(tb testing.TB, body []byte) (envelope, map[string]json.RawMessage) {
	tb.Helper()
	var env envelope
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &env); err != nil {
		tb.Fatalf("delivery body %s: %v", body, err)
	}
	if err := json.Unmarshal(body, &keys); err != nil {
		tb.Fatalf("delivery body %s: %v", body, err)
	}
	return env, keys
}

// checkBody reports a delivery body that is not what the event, as stored,
// renders for the endpoint: the body is fixed at creation, from the stored
// event and the endpoint's envelope and version.
func checkBody(tb testing.TB, s Store, d *webhooks.Delivery, ep *webhooks.Endpoint) {
	tb.Helper()
	ev := MustFindEvent(tb, s, d.EventID)
	want, err := webhooks.RenderBody(ev, ep, d.Relationship)
	if err != nil {
		tb.Fatalf("RenderBody: %v", err)
	}
	if !bytes.Equal(d.Body, want) {
		tb.Errorf("delivery %s body:\ngot  %s\nwant %s", d.ID, d.Body, want)
	}
}

func ptr[T any](v T) *T { return &v }
