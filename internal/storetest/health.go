package storetest

import (
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// testHealth checks that recording attempts keeps each endpoint's streak
// of failures (SPEC 14): a failure lengthens it and starts failing_since, a
// 2xx ends it, and each endpoint's last record in a batch carries what the
// batch did, so that the engine can tell the operational events to send.
// Through RecordAttempts and through ClaimDeliveries, which records too,
// also when the claim fills its limit with more due than it reads.
func testHealth(t *testing.T, open func(t *testing.T) Store) {
	group(t, "Health", func(t *testing.T) {
		t.Run("ClaimDeliveriesFull", func(t *testing.T) {
			s := setup(t, open)
			q := newQueue(s)
			e, busy := q.endpoint(t), q.endpoint(t)
			now := at(time.Minute)
			d := q.add(t, e, now)
			rec := NewRecord(MustClaimOne(t, s, d.ID, now), now, 500, failedPermanently)
			for range 50 {
				q.add(t, busy, now)
			}
			if claims := q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 1, Records: []*webhooks.AttemptRecord{rec}}); len(claims) != 1 {
				t.Fatalf("the claim that records: got %d claims, want 1 of the backlog", len(claims))
			}
			if got := MustFindEndpoint(t, s, e.ID); got.FailureStreak != 1 || !got.FailingSince.Equal(now) {
				t.Errorf("after a failure recorded by a full claim: streak %d since %v, want 1 since %v", got.FailureStreak, got.FailingSince, now)
			}
			if h := rec.Health; h == nil || h.After != 1 {
				t.Errorf("the failure recorded by a full claim: health %+v, want a streak of 1", h)
			}
			if got := MustFindDelivery(t, s, d.ID); got.Status != webhooks.DeliveryFailedPermanently {
				t.Errorf("the delivery recorded by a full claim: %s, want %s", got.Status, webhooks.DeliveryFailedPermanently)
			}
		})
		for _, via := range []string{"RecordAttempts", "ClaimDeliveries"} {
			t.Run(via, func(t *testing.T) {
				s := setup(t, open)
				q := newQueue(s)
				e, other := q.endpoint(t), q.endpoint(t)
				record := func(now time.Time, statuses map[*webhooks.Endpoint][]int) []*webhooks.AttemptRecord {
					t.Helper()
					var records []*webhooks.AttemptRecord
					for ep, list := range statuses {
						for range list {
							q.add(t, ep, now)
						}
					}
					claims := q.claim(t, webhooks.ClaimRequest{Now: now, Limit: 100})
					next := map[string]int{}
					for _, c := range claims {
						list := statuses[map[string]*webhooks.Endpoint{e.ID: e, other.ID: other}[c.Endpoint.ID]]
						status := list[next[c.Endpoint.ID]]
						next[c.Endpoint.ID]++
						tr := delivered
						if status < 200 || status > 299 {
							tr = failedPermanently // so that no retry comes back in a later claim
						}
						records = append(records, NewRecord(c, now, status, tr))
					}
					var err error
					if via == "RecordAttempts" {
						err = s.RecordAttempts(t.Context(), records)
					} else {
						_, err = s.ClaimDeliveries(t.Context(), webhooks.ClaimRequest{Now: now, Records: records})
					}
					if err != nil {
						t.Fatalf("%s: %v", via, err)
					}
					return records
				}
				last := func(records []*webhooks.AttemptRecord, ep *webhooks.Endpoint) *webhooks.Health {
					var h *webhooks.Health
					for _, r := range records {
						if r.EndpointID == ep.ID && r.Health != nil {
							h = r.Health
						}
					}
					return h
				}
				check := func(what string, ep *webhooks.Endpoint, streak int, since time.Time) {
					t.Helper()
					got := MustFindEndpoint(t, s, ep.ID)
					if got.FailureStreak != streak || !got.FailingSince.Equal(since) {
						t.Errorf("%s: streak %d since %v, want %d since %v", what, got.FailureStreak, got.FailingSince, streak, since)
					}
				}

				// Three failures, then one more: failing at the 4th.
				r := record(at(time.Minute), map[*webhooks.Endpoint][]int{e: {500, 503, 0}, other: {200}})
				check("after 3 failures", e, 3, at(time.Minute))
				check("a healthy endpoint", other, 0, time.Time{})
				if h := last(r, e); h == nil || h.After != 3 || h.Failing != nil {
					t.Errorf("after 3 failures: health %+v", h)
				}
				r = record(at(time.Hour), map[*webhooks.Endpoint][]int{e: {500}})
				check("after 4 failures", e, 4, at(time.Minute))
				if h := last(r, e); h == nil || h.Failing == nil || !h.Failing.Since.Equal(at(time.Minute)) || !h.FailingSince.Equal(at(time.Minute)) {
					t.Errorf("the 4th failure: health %+v, want failing since the first", h)
				}
				r = record(at(2*time.Hour), map[*webhooks.Endpoint][]int{e: {500}})
				if h := last(r, e); h == nil || h.Failing != nil || h.After != 5 {
					t.Errorf("the 5th failure: health %+v, want no new episode", h)
				}
				// A 2xx ends it: recovered, from a streak of 5.
				r = record(at(3*time.Hour), map[*webhooks.Endpoint][]int{e: {200}})
				check("after a 2xx", e, 0, time.Time{})
				if h := last(r, e); h == nil || h.Recovered == nil || h.Recovered.Length != 5 || !h.Recovered.Since.Equal(at(time.Minute)) {
					t.Errorf("the 2xx: health %+v, want recovered from 5 failures since the first", h)
				}

				// A 2xx between failures in one batch: the streak after it is
				// the failures that follow it alone (the batch resets the
				// streak and adds to it), and the one before it recovered.
				record(at(4*time.Hour), map[*webhooks.Endpoint][]int{e: {500, 500, 500, 500}})
				check("failing again", e, 4, at(4*time.Hour))
				r = record(at(5*time.Hour), map[*webhooks.Endpoint][]int{e: {500, 200, 500}})
				var want webhooks.Health
				for _, st := range webhooks.StreakSteps(r) {
					if st.EndpointID == e.ID {
						want = st.Apply(4, at(4*time.Hour))
					}
				}
				if want.After != 1 || !want.FailingSince.Equal(at(5*time.Hour)) || want.Recovered == nil || want.Recovered.Length != 5 {
					t.Fatalf("StreakStep.Apply of 500, 200, 500 after 4 failures: %+v, want 1 failure since the batch, recovered from 5", want)
				}
				check("500, 200, 500 in one batch", e, want.After, want.FailingSince)
				h := last(r, e)
				if h == nil || h.After != want.After || !h.FailingSince.Equal(want.FailingSince) || h.Failing != nil ||
					h.Recovered == nil || h.Recovered.Length != want.Recovered.Length || !h.Recovered.Since.Equal(want.Recovered.Since) {
					t.Errorf("500, 200, 500 in one batch: health %+v, want %+v (recovered %+v)", h, want, want.Recovered)
				}
			})
		}
	})
}
