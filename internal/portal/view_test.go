package portal

import (
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

func TestRelative(t *testing.T) {
	now := time.Date(2026, 10, 14, 10, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "just now"},
		{4 * time.Second, "just now"},
		{-3 * time.Second, "just now"},
		{45 * time.Second, "in 45 s"},
		{3*time.Minute + 59*time.Second, "in 4 min"},
		{4 * time.Minute, "in 4 min"},
		{-4 * time.Minute, "4 min ago"},
		{time.Hour - time.Second, "in 1 h"},
		{2*time.Hour + 5*time.Minute, "in 2 h 5 min"},
		{-(26 * time.Hour), "1 day 2 h ago"},
		{72 * time.Hour, "in 3 days"},
	} {
		if got := relative(now.Add(tc.d), now); got != tc.want {
			t.Errorf("relative(%s): got %q, want %q", tc.d, got, tc.want)
		}
	}
}

func TestNextText(t *testing.T) {
	now := time.Date(2026, 10, 14, 10, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		d     webhooks.Delivery
		scope webhooks.Scope
		want  string
	}{
		{webhooks.Delivery{Status: webhooks.DeliveryPending, NextAttemptAt: now.Add(4 * time.Minute)}, webhooks.ScopeCompany, "Next attempt in 4 min"},
		{webhooks.Delivery{Status: webhooks.DeliveryPending, NextAttemptAt: now}, webhooks.ScopeCompany, "Next attempt: due now"},
		{webhooks.Delivery{Status: webhooks.DeliveryDelivered}, webhooks.ScopeCompany, "Nothing more to send"},
		{webhooks.Delivery{Status: webhooks.DeliveryFailed}, webhooks.ScopeAccount, "No more automatic attempts: retry or recover by hand"},
		{webhooks.Delivery{Status: webhooks.DeliveryFailedPermanently}, webhooks.ScopeCompany, "No more automatic attempts: replay or recover by hand"},
	} {
		if got := nextText(&tc.d, tc.scope, now); got != tc.want {
			t.Errorf("%s on a %s endpoint: got %q, want %q", tc.d.Status, tc.scope, got, tc.want)
		}
	}
}

// The wording says "delivered to your endpoint", never "processed".
func TestStateView_Wording(t *testing.T) {
	for _, status := range []string{webhooks.DeliveryPending, webhooks.DeliveryDelivered, webhooks.DeliveryFailed, webhooks.DeliveryFailedPermanently} {
		v := stateView(&webhooks.Delivery{Status: status})
		if strings.Contains(strings.ToLower(v.Label), "processed") {
			t.Errorf("%s: label %q says processed", status, v.Label)
		}
	}
	if got := stateView(&webhooks.Delivery{Status: webhooks.DeliveryDelivered}).Label; got != "Delivered to your endpoint" {
		t.Errorf("delivered: got %q, want Delivered to your endpoint", got)
	}
}

func TestStats(t *testing.T) {
	for _, tc := range []struct {
		s    Stats
		want string
	}{
		{Stats{}, "—"},
		{Stats{Pending: 3}, "—"},
		{Stats{Delivered: 72}, "100%"},
		{Stats{Delivered: 35, Failed: 1}, "97.2%"},
		{Stats{Delivered: 9999, Failed: 1}, "99.9%"},
		{Stats{Failed: 2}, "0%"},
	} {
		if got := tc.s.Rate(); got != tc.want {
			t.Errorf("%+v: got %q, want %q", tc.s, got, tc.want)
		}
	}
	since := time.Date(2026, 10, 13, 10, 30, 0, 0, time.UTC)
	counts := make([][3]int, statsBuckets)
	counts[0] = [3]int{4, 0, 0}
	counts[23] = [3]int{1, 2, 1}
	c := chart(counts, since)
	if len(c.Bars) != statsBuckets || c.Width != statsBuckets*10-2 {
		t.Fatalf("chart: got %d bars, width %d", len(c.Bars), c.Width)
	}
	if got := c.Bars[0].Segments; len(got) != 1 || got[0].Class != "delivered" || got[0].H != float64(c.Height) {
		t.Errorf("busiest bar: got %+v, want one delivered segment of full height", got)
	}
	if got := c.Bars[1].Segments; len(got) != 1 || got[0].Class != "empty" {
		t.Errorf("empty hour: got %+v, want a baseline", got)
	}
	if got := c.Bars[23]; len(got.Segments) != 3 || got.Title != "09:30–10:30 UTC: 1 delivered, 2 failed, 1 pending" {
		t.Errorf("last hour: got %+v", got)
	}
}
