package storetest

import (
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// testDeferClaims checks the hand-back of deliveries a rate limit holds
// (SPEC 14): a deferred delivery stays pending, with no attempt, is not
// claimable until its time and is then; a deferral whose token the
// delivery no longer holds changes nothing.
func testDeferClaims(t *testing.T, open func(t *testing.T) Store) {
	group(t, "DeferClaims", func(t *testing.T) {
		t.Run("HandBack", func(t *testing.T) { testDeferHandBack(t, open) })
	})
}

func testDeferHandBack(t *testing.T, open func(t *testing.T) Store) {
	s := setup(t, open)
	q := newQueue(s)
	e := q.endpoint(t)
	d := q.add(t, e, t0)
	claims := q.claim(t, webhooks.ClaimRequest{Now: at(time.Second), Limit: 10})
	checkClaims(t, "claim", claims, d)
	until := at(time.Minute)
	stale := webhooks.Deferral{DeliveryID: d.ID, Token: "not-the-claim", Until: at(time.Hour)}
	if err := s.DeferClaims(t.Context(), []webhooks.Deferral{stale}); err != nil {
		t.Fatalf("DeferClaims with another token: %v", err)
	}
	if err := s.DeferClaims(t.Context(), []webhooks.Deferral{{DeliveryID: d.ID, Token: claims[0].Token, Until: until}}); err != nil {
		t.Fatalf("DeferClaims: %v", err)
	}
	got := MustFindDelivery(t, s, d.ID)
	if got.Status != webhooks.DeliveryPending || got.AttemptCount != 0 || len(got.Attempts) != 0 || !got.NextAttemptAt.Equal(until) {
		t.Errorf("deferred delivery: %+v, want pending, no attempt, due at %v", got, until)
	}
	checkClaims(t, "claim before its time", q.claim(t, webhooks.ClaimRequest{Now: until.Add(-time.Second), Limit: 10}))
	checkClaims(t, "claim at its time", q.claim(t, webhooks.ClaimRequest{Now: until, Limit: 10}), d)
}
