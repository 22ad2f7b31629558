package storetest

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

// Settings of the backlog and recovery tests: SPEC 14's defaults.
const (
	backlogAlert  = webhooks.DefaultBacklogAlert
	recoveryProbe = webhooks.DefaultRecoveryProbe
	recoveryFor   = webhooks.DefaultRecoveryFor
)

// maintained returns the use cases at now with the backlog alert and
// automatic recovery on, and the spec's retry schedule.
func maintained(s Store, now time.Time) *app.App {
	return app.New(app.Config{
		Store: s, Registrar: s, AdminKey: "storetest", Now: func() time.Time { return now },
		Policy: webhooks.DefaultRetryPolicy(), Maintenance: s,
		BacklogAlert: backlogAlert, RecoveryProbe: recoveryProbe, RecoveryFor: recoveryFor,
	})
}

// testBacklog: the moment a delivery came due, which the backlog alert and
// the gauge measure (SPEC 14), is its first attempt's or its next retry's,
// and holding it back for a rate limit or the cap does not move it; a
// delivery waiting behind another of its chain is not due. The alert
// fires once per episode, and clears when nothing due has waited that
// long any more.
func testBacklog(t *testing.T, open func(t *testing.T) Store) {
	group(t, "Backlog", func(t *testing.T) {
		t.Run("DueSince", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			e := q.endpoint(t)
			d := q.add(t, e, t0)
			check := func(when string, now time.Time, due int, oldest time.Time) {
				t.Helper()
				st, err := s.QueueStats(t.Context(), now)
				if err != nil {
					t.Fatal(err)
				}
				if st.Due != due || !st.OldestDue.Equal(oldest) {
					t.Errorf("%s: QueueStats due %d oldest %v, want %d %v", when, st.Due, st.OldestDue, due, oldest)
				}
				backlogs, _, err := s.Backlogs(t.Context(), now, now)
				if err != nil {
					t.Fatal(err)
				}
				var want []webhooks.Backlog
				if due > 0 {
					want = []webhooks.Backlog{{EndpointID: e.ID, OldestDue: oldest, Due: due}}
				}
				if !slices.EqualFunc(backlogs, want, sameBacklog) {
					t.Errorf("%s: Backlogs %+v, want %+v", when, backlogs, want)
				}
				one, err := s.Backlog(t.Context(), e.ID, now)
				if err != nil {
					t.Fatal(err)
				}
				if w := (webhooks.Backlog{EndpointID: e.ID, OldestDue: oldest, Due: due}); !sameBacklog(one, w) {
					t.Errorf("%s: Backlog %+v, want %+v", when, one, w)
				}
			}
			check("registered", at(time.Minute), 1, t0)
			// Held back for a rate limit: still due since t0.
			c := MustClaimOne(t, s, d.ID, at(time.Minute))
			check("claimed", at(time.Minute), 0, time.Time{})
			if err := s.DeferClaims(t.Context(), []webhooks.Deferral{{DeliveryID: d.ID, Token: c.Token, Until: at(10 * time.Minute)}}); err != nil {
				t.Fatal(err)
			}
			check("deferred", at(2*time.Minute), 1, t0)
			// Released by a process that shut down: still due since t0.
			c = MustClaimOne(t, s, d.ID, at(10*time.Minute))
			if err := s.ReleaseClaims(t.Context(), c.Token, []string{d.ID}); err != nil {
				t.Fatal(err)
			}
			check("released", at(11*time.Minute), 1, t0)
			// Attempted and scheduled again: due at its retry.
			MustAttempt(t, s, d.ID, at(12*time.Minute), 503, retryAt(at(time.Hour)))
			check("retry scheduled", at(30*time.Minute), 0, time.Time{})
			check("retry due", at(2*time.Hour), 1, at(time.Hour))
			// A lapsed claim's delivery is due again since its lease ended.
			MustClaimOne(t, s, d.ID, at(2*time.Hour)) // a lease of a minute
			check("lapsed", at(3*time.Hour), 1, at(2*time.Hour+time.Minute))
		})

		t.Run("WaitingIsNotDue", func(t *testing.T) {
			s := setup(t, open)
			o := newOrdered(t, s, true)
			first, second := o.add(t, "inv_1", 0), o.add(t, "inv_1", 1)
			backlogs, _, err := s.Backlogs(t.Context(), at(time.Hour), at(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if want := []webhooks.Backlog{{EndpointID: o.ep.ID, OldestDue: t0, Due: 1}}; !slices.EqualFunc(backlogs, want, sameBacklog) {
				t.Errorf("with the second waiting behind the first: %+v, want %+v", backlogs, want)
			}
			// The first delivered releases the second, due from then.
			c := MustClaimOne(t, s, first.ID, at(time.Hour))
			MustRecord(t, s, NewRecord(c, at(time.Hour), 200, delivered))
			released := at(time.Hour + 250*time.Millisecond) // the attempt's end
			backlogs, _, err = s.Backlogs(t.Context(), at(2*time.Hour), at(2*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if want := []webhooks.Backlog{{EndpointID: o.ep.ID, OldestDue: released, Due: 1}}; !slices.EqualFunc(backlogs, want, sameBacklog) {
				t.Errorf("after the first was delivered: %+v, want %+v (the second, due since the release)", backlogs, want)
			}
			_ = second
		})

		t.Run("AlertOncePerEpisode", func(t *testing.T) {
			s := setup(t, open)
			platform := mustPlatformEndpoint(t, s)
			q := newQueue(s)
			busy, healthy := q.endpoint(t), q.endpoint(t)
			d1 := q.add(t, busy, t0)
			q.add(t, busy, at(time.Minute))
			check := func(when string, now time.Time, want int) {
				t.Helper()
				n, err := maintained(s, now).CheckBacklogs(t.Context())
				if err != nil || n != want {
					t.Fatalf("%s: CheckBacklogs changed %d alerts, %v; want %d", when, n, err, want)
				}
				mustDrain(t, s, now)
			}
			check("under the alert", at(backlogAlert), 0)
			raised := at(backlogAlert + time.Second)
			check("over the alert", raised, 1)
			if got := MustFindEndpoint(t, s, busy.ID).BackloggedSince; !got.Equal(raised) {
				t.Errorf("backlogged_since: %v, want %v", got, raised)
			}
			check("a minute on", raised.Add(time.Minute), 0)
			// The healthy endpoint's delivery has waited less than the
			// alert: nothing about it.
			q.add(t, healthy, raised.Add(2*time.Minute))
			// The oldest is attempted: the next has waited too long still.
			MustAttempt(t, s, d1.ID, raised.Add(2*time.Minute), 200, delivered)
			check("the next one is old too", raised.Add(3*time.Minute), 0)
			// All caught up: cleared.
			for _, c := range MustClaim(t, s, raised.Add(4*time.Minute), 100) {
				MustRecord(t, s, NewRecord(c, raised.Add(4*time.Minute), 200, delivered))
			}
			cleared := raised.Add(5 * time.Minute)
			check("caught up", cleared, 1)
			if got := MustFindEndpoint(t, s, busy.ID).BackloggedSince; !got.IsZero() {
				t.Errorf("backlogged_since after the clear: %v, want none", got)
			}
			check("caught up still", cleared.Add(time.Minute), 0)
			// A second episode.
			q.add(t, busy, cleared.Add(time.Minute))
			check("a second episode", cleared.Add(time.Minute+backlogAlert+time.Second), 1)

			events := operationalEvents(t, s, platform.ID)
			want := []string{webhooks.EventEndpointBacklogged, webhooks.EventBacklogCleared, webhooks.EventEndpointBacklogged}
			var got []string
			for _, ev := range events {
				got = append(got, ev.Type)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("operational events: %v, want %v", got, want)
			}
			objects := make([]map[string]any, len(events))
			for i, ev := range events {
				if err := json.Unmarshal(ev.Object, &objects[i]); err != nil {
					t.Fatal(err)
				}
				if objects[i]["id"] != busy.ID {
					t.Errorf("%s is about %v, want the busy endpoint %s", ev.Type, objects[i]["id"], busy.ID)
				}
			}
			if o := objects[0]; o["oldest_due_at"] != float64(t0.Unix()) || o["due_count"] != float64(2) {
				t.Errorf("backlogged: oldest_due_at %v due_count %v, want %d and 2", o["oldest_due_at"], o["due_count"], t0.Unix())
			}
			if o := objects[1]; o["oldest_due_at"] != nil || o["due_count"] != float64(0) {
				t.Errorf("backlog_cleared: oldest_due_at %v due_count %v, want null and 0", o["oldest_due_at"], o["due_count"])
			}
			if _, ok := objects[1]["oldest_due_at"]; !ok {
				t.Errorf("backlog_cleared: no oldest_due_at, want null")
			}
		})

		t.Run("NeverWithoutAlert", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			q.add(t, q.endpoint(t), t0)
			off := app.New(app.Config{Store: s, Registrar: s, Maintenance: s, Now: func() time.Time { return at(24 * time.Hour) }})
			if n, err := off.CheckBacklogs(t.Context()); err != nil || n != 0 {
				t.Errorf("with the alert off (0): %d alerts, %v", n, err)
			}
		})
	})

	group(t, "Recovery", func(t *testing.T) {
		// Disabled for failing, probed every hour from an hour after the
		// disable; a failed probe changes nothing, the first 2xx enables
		// it again by the system and recovers what it missed.
		t.Run("EnabledAtTheFirst2xx", func(t *testing.T) {
			s := setup(t, open)
			platform := mustPlatformEndpoint(t, s)
			e, missed, disabled := disabledFailing(t, s, true)
			// probe sends the probes due at now, and claims the due
			// deliveries: it returns the probe's claim, and records the
			// others (the platform's) delivered.
			probe := func(now time.Time, want int) *webhooks.Claim {
				t.Helper()
				n, err := maintained(s, now).ProbeDisabled(t.Context(), 10)
				if err != nil || n != want {
					t.Fatalf("ProbeDisabled at disable + %s: %d, %v; want %d", now.Sub(disabled), n, err, want)
				}
				var pings []*webhooks.Claim
				for _, c := range MustClaim(t, s, now, 100) {
					if c.Delivery.EndpointID == e.ID && c.Delivery.EventType == webhooks.PingEventType {
						pings = append(pings, c)
					} else {
						MustRecord(t, s, NewRecord(c, now, 200, delivered))
					}
				}
				if len(pings) != want {
					t.Fatalf("probes at disable + %s: %d pings claimed, want %d", now.Sub(disabled), len(pings), want)
				}
				if want == 0 {
					return nil
				}
				if !pings[0].Delivery.Manual {
					t.Errorf("the probe is not a single (manual) attempt")
				}
				return pings[0]
			}
			probe(disabled.Add(30*time.Minute), 0)
			first := disabled.Add(recoveryProbe)
			c := probe(first, 1)
			if got := MustFindEndpoint(t, s, e.ID).ProbedAt; !got.Equal(first) {
				t.Errorf("probed_at: %v, want %v", got, first)
			}
			MustRecord(t, s, NewRecord(c, first, 503, webhooks.Transition{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonManualAttemptFailed}))
			mustDrain(t, s, first)
			probe(first.Add(30*time.Minute), 0)
			if ep := MustFindEndpoint(t, s, e.ID); ep.Enabled() {
				t.Fatalf("enabled after a failed probe")
			}
			second := first.Add(recoveryProbe)
			c = probe(second, 1)
			MustRecord(t, s, NewRecord(c, second, 200, delivered))
			if got := kinds(mustOutbox(t, s)); !slices.Contains(got, webhooks.OutboxRecover) {
				t.Fatalf("outbox after the probe's 2xx: %v, want a recover", got)
			}
			recovered := second.Add(time.Second)
			if _, err := maintained(s, recovered).DrainOutbox(t.Context(), 100); err != nil {
				t.Fatal(err)
			}
			mustDrain(t, s, recovered) // the enable's announcement
			ep := MustFindEndpoint(t, s, e.ID)
			if !ep.Enabled() || ep.DisabledReason != "" || !ep.ProbedAt.IsZero() {
				t.Fatalf("after the 2xx: %s (%q), probed at %v; want enabled", ep.Status, ep.DisabledReason, ep.ProbedAt)
			}
			for _, d := range missed {
				if got := MustFindDelivery(t, s, d.ID); got.Status != webhooks.DeliveryPending {
					t.Errorf("missed delivery %s: %s, want pending (recovered)", d.ID, got.Status)
				}
			}
			var enabled map[string]any
			for _, ev := range operationalEvents(t, s, platform.ID) {
				if ev.Type == webhooks.EventEndpointEnabled {
					if err := json.Unmarshal(ev.Object, &enabled); err != nil {
						t.Fatal(err)
					}
				}
			}
			if enabled == nil {
				t.Fatalf("no webhook_endpoint.enabled among %v", operationalTypes(t, s, platform.ID))
			}
			if actor, _ := enabled["actor"].(map[string]any); enabled["reason"] != webhooks.EnabledRecovered || actor["type"] != string(webhooks.ActorSystem) {
				t.Errorf("webhook_endpoint.enabled: reason %v actor %v, want recovered by the system", enabled["reason"], enabled["actor"])
			}
			actions := auditActions(t, s, e.AccountID)
			for _, want := range []string{webhooks.AuditEndpointEnabled, webhooks.AuditEndpointRecovered} {
				if !slices.Contains(actions, want) {
					t.Errorf("audit log %v: no %s", actions, want)
				}
			}
			// Enabled, it is probed no more.
			probe(recovered.Add(2*recoveryProbe), 0)
		})

		t.Run("ProbedForRecoveryFor", func(t *testing.T) {
			s := setup(t, open)
			_, _, disabled := disabledFailing(t, s, true)
			last := disabled.Add(recoveryFor)
			if n, err := maintained(s, last).ProbeDisabled(t.Context(), 10); err != nil || n != 1 {
				t.Errorf("at the end of the window: %d probes, %v; want 1", n, err)
			}
			if n, err := maintained(s, last.Add(2*recoveryProbe)).ProbeDisabled(t.Context(), 10); err != nil || n != 0 {
				t.Errorf("after the window: %d probes, %v; want none", n, err)
			}
		})

		// Never for an endpoint that did not ask, or that was disabled as
		// gone or by hand, even when an attempt to it gets a 2xx.
		t.Run("Controls", func(t *testing.T) {
			s := setup(t, open)
			notAsked, _, disabled := disabledFailing(t, s, false)
			gone := disabledGone(t, s)
			manual := MustCreateEndpoint(t, s, autoRecovering(NewAccountEndpoint(MustCreateAccount(t, s, "").ID, nil, "*")))
			status := webhooks.EndpointDisabled
			if _, err := updateEndpoint(t, s, manual.ID, &webhooks.EndpointUpdate{Status: &status}, disabled); err != nil {
				t.Fatal(err)
			}
			for _, now := range []time.Time{disabled.Add(recoveryProbe), disabled.Add(2 * recoveryProbe)} {
				if n, err := maintained(s, now).ProbeDisabled(t.Context(), 10); err != nil || n != 0 {
					t.Errorf("probes at disable + %s: %d, %v; want none", now.Sub(disabled), n, err)
				}
			}
			// A 2xx reaches each anyway (an attempt in flight at the
			// disable): none is enabled.
			for _, ep := range []*webhooks.Endpoint{notAsked, gone, manual} {
				d := mustPing(t, s, MustFindEndpoint(t, s, ep.ID), disabled)
				c := MustClaimOne(t, s, d.ID, disabled.Add(time.Hour))
				MustRecord(t, s, NewRecord(c, disabled.Add(time.Hour), 200, delivered))
			}
			if got := kinds(mustOutbox(t, s)); slices.Contains(got, webhooks.OutboxRecover) {
				t.Errorf("outbox: %v, want no recover", got)
			}
			if _, err := maintained(s, disabled.Add(time.Hour)).DrainOutbox(t.Context(), 100); err != nil {
				t.Fatal(err)
			}
			for _, ep := range []*webhooks.Endpoint{notAsked, gone, manual} {
				if got := MustFindEndpoint(t, s, ep.ID); got.Enabled() {
					t.Errorf("endpoint disabled as %s: enabled again, want it disabled", got.DisabledReason)
				}
			}
		})
	})
}

// sameBacklog compares backlogs to the millisecond the stores keep.
func sameBacklog(a, b webhooks.Backlog) bool {
	return a.EndpointID == b.EndpointID && a.Due == b.Due && a.OldestDue.Truncate(time.Millisecond).Equal(b.OldestDue.Truncate(time.Millisecond))
}

func autoRecovering(e *webhooks.Endpoint) *webhooks.Endpoint {
	e.AutoRecover = true
	return e
}

// disabledFailing creates an account endpoint (asking for automatic
// recovery if auto) whose every attempt fails for the default disable
// time, so that the service disables it for failing; it returns the
// endpoint, the deliveries it missed (ended failed by the disable, or
// created failed after it) and the moment it was disabled.
func disabledFailing(tb testing.TB, s Store, auto bool) (*webhooks.Endpoint, []*webhooks.Delivery, time.Time) {
	tb.Helper()
	a := MustCreateAccount(tb, s, "")
	e := NewAccountEndpoint(a.ID, nil, "*")
	e.AutoRecover = auto
	e = MustCreateEndpoint(tb, s, e)
	q := newQueue(s)
	first := q.add(tb, e, t0)
	MustAttempt(tb, s, first.ID, t0, 503, retryAt(at(webhooks.DefaultDisableAfter+time.Hour)))
	second := q.add(tb, e, at(time.Hour))
	disabled := at(webhooks.DefaultDisableAfter + time.Minute)
	MustAttempt(tb, s, second.ID, disabled, 503, retryAt(disabled.Add(time.Hour)))
	mustDrain(tb, s, disabled)
	if got := MustFindEndpoint(tb, s, e.ID); got.Enabled() || got.DisabledReason != webhooks.DisabledFailing {
		tb.Fatalf("endpoint: %s (%s), want disabled for failing", got.Status, got.DisabledReason)
	}
	disabled = MustFindEndpoint(tb, s, e.ID).DisabledAt
	after := q.add(tb, e, disabled.Add(time.Minute))
	for _, d := range []*webhooks.Delivery{first, second, after} {
		if got := MustFindDelivery(tb, s, d.ID); got.Status != webhooks.DeliveryFailed {
			tb.Fatalf("delivery %s of the disabled endpoint: %s, want failed", d.ID, got.Status)
		}
	}
	return e, []*webhooks.Delivery{first, second, after}, disabled
}

// disabledGone creates an endpoint asking for automatic recovery that a
// 410 disabled.
func disabledGone(tb testing.TB, s Store) *webhooks.Endpoint {
	tb.Helper()
	e := MustCreateEndpoint(tb, s, autoRecovering(NewAccountEndpoint(MustCreateAccount(tb, s, "").ID, nil, "*")))
	d := newQueue(s).add(tb, e, t0)
	MustFailPermanently(tb, s, d.ID, t0)
	mustDrain(tb, s, t0)
	if got := MustFindEndpoint(tb, s, e.ID); got.Enabled() || got.DisabledReason != webhooks.DisabledGone {
		tb.Fatalf("endpoint: %s (%s), want disabled as gone", got.Status, got.DisabledReason)
	}
	return e
}

// operationalEvents returns the events delivered to the platform endpoint,
// in the order they were made.
func operationalEvents(tb testing.TB, s Store, platformID string) []*webhooks.Event {
	tb.Helper()
	ds := MustListDeliveries(tb, s, webhooks.DeliveryFilter{EndpointID: platformID})
	slices.Reverse(ds) // the list is newest first
	out := make([]*webhooks.Event, len(ds))
	for i, d := range ds {
		out[i] = MustFindEvent(tb, s, d.EventID)
	}
	return out
}

// auditActions returns the actions in the account's audit log.
func auditActions(tb testing.TB, s Store, accountID string) []string {
	tb.Helper()
	l, err := s.ListAudit(tb.Context(), accountID, webhooks.Page{Limit: 100})
	if err != nil {
		tb.Fatalf("ListAudit: %v", err)
	}
	var out []string
	for _, e := range l.Data {
		out = append(out, e.Action)
	}
	return out
}

// mustPing stores a probe's ping to ep, pending at now.
func mustPing(tb testing.TB, s Store, ep *webhooks.Endpoint, now time.Time) *webhooks.Delivery {
	tb.Helper()
	ev, d, err := webhooks.NewProbe(ep, ep.AccountID, now)
	if err != nil {
		tb.Fatal(err)
	}
	err = s.InTx(tb.Context(), func(tx app.Tx) error {
		if err := tx.InsertEvent(tb.Context(), ev); err != nil {
			return err
		}
		_, err := tx.InsertDeliveries(tb.Context(), []*webhooks.Delivery{d})
		return err
	})
	if err != nil {
		tb.Fatalf("storing a ping: %v", err)
	}
	return d
}
