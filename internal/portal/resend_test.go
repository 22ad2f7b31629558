package portal

import (
	"strings"
	"testing"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

func TestReplayedView(t *testing.T) {
	now := time.Date(2026, 10, 14, 10, 30, 0, 0, time.UTC)
	at := func(m int) time.Time { return now.Add(time.Duration(m) * time.Minute) }
	original := &webhooks.Delivery{ID: "d0", EndpointID: "e", Status: webhooks.DeliveryFailedPermanently, Created: at(-60)}
	replay := func(id, status string, created int) *webhooks.Delivery {
		return &webhooks.Delivery{ID: id, EndpointID: "e", ReplayOf: "d0", Status: status, Created: at(created)}
	}
	delivered := replay("d1", webhooks.DeliveryDelivered, -30)
	failedLater := replay("d2", webhooks.DeliveryFailed, -10)
	failedFirst := replay("d3", webhooks.DeliveryFailed, -40)
	sending := replay("d4", webhooks.DeliveryPending, -1)

	if v := replayedView(original, []*webhooks.Delivery{original}, now, defaultWords); v != nil {
		t.Errorf("no replay: got %+v, want nil", v)
	}
	for _, tc := range []struct {
		name      string
		d         *webhooks.Delivery
		sameEvent []*webhooks.Delivery
		link      string
		text      string
		confirm   bool
		count     int
	}{
		{"delivered", original, []*webhooks.Delivery{original, delivered}, "d1", "Replayed: delivered to your endpoint", true, 1},
		// The one that arrived tells, even if a later one failed.
		{"delivered, then failed", original, []*webhooks.Delivery{original, delivered, failedLater}, "d1", "Replayed: delivered to your endpoint", true, 2},
		{"failed", original, []*webhooks.Delivery{original, failedFirst}, "d3", "Replayed: the replay failed too", false, 1},
		{"being sent", original, []*webhooks.Delivery{original, failedFirst, sending}, "d4", "Replayed: the replay is being sent", true, 2},
		// A replay's page tells of the replays made after it only.
		{"a failed replay replayed", failedFirst, []*webhooks.Delivery{original, failedFirst, delivered}, "d1", "Replayed: delivered to your endpoint", true, 1},
		{"the last replay", failedLater, []*webhooks.Delivery{original, failedFirst, delivered, failedLater}, "", "", false, 0},
	} {
		v := replayedView(tc.d, tc.sameEvent, now, defaultWords)
		if tc.link == "" {
			if v != nil {
				t.Errorf("%s: got %+v, want nil", tc.name, v)
			}
			continue
		}
		if v == nil || v.Link != deliveryPath("e", tc.link) || v.Text != tc.text || v.Confirm != tc.confirm || v.Count != tc.count {
			t.Errorf("%s: got %+v, want a link to %s, %q, confirm %t, %d replays", tc.name, v, tc.link, tc.text, tc.confirm, tc.count)
		}
	}
}

// After a send by hand, the page says what became of it: under way, in
// its own style, while it waits for its attempt; delivered in green; a
// failure in the error style, never announced as sent.
func TestSendOutcome(t *testing.T) {
	now := time.Date(2026, 10, 14, 10, 30, 0, 0, time.UTC)
	unavailable := &webhooks.Attempt{Number: 2, ResponseStatus: 503, Manual: true}
	refused := &webhooks.Attempt{Number: 1, Error: "connection failed: connect: connection refused", Manual: true}
	for _, tc := range []struct {
		name                string
		notice              string
		d                   webhooks.Delivery
		last                *webhooks.Attempt
		notice2, info, fail string
		refresh             bool
	}{
		{name: "replay waiting", notice: "replayed", d: webhooks.Delivery{Status: webhooks.DeliveryPending, Manual: true, NextAttemptAt: now.Add(-time.Second)},
			info: "Replay sent: this new delivery, with the same event id and body, makes one attempt now.", refresh: true},
		{name: "retry waiting for long", notice: "retried", d: webhooks.Delivery{Status: webhooks.DeliveryPending, Manual: true, AttemptCount: 1, NextAttemptAt: now.Add(-time.Minute)},
			info: "Retry sent: the same delivery makes one attempt now."},
		{name: "replay failed", notice: "replayed", d: webhooks.Delivery{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonManualAttemptFailed, AttemptCount: 1},
			last: &webhooks.Attempt{Number: 1, ResponseStatus: 503, Manual: true}, fail: "Replay attempted: the endpoint answered 503 Service Unavailable."},
		{name: "retry failed", notice: "retried", d: webhooks.Delivery{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonManualAttemptFailed, AttemptCount: 2},
			last: unavailable, fail: "Retry attempted: the endpoint answered 503 Service Unavailable."},
		{name: "replay could not connect", notice: "replayed", d: webhooks.Delivery{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonManualAttemptFailed, AttemptCount: 1},
			last: refused, fail: "Replay attempted: could not connect (connection refused)."},
		{name: "replay delivered", notice: "replayed", d: webhooks.Delivery{Status: webhooks.DeliveryDelivered, AttemptCount: 1},
			last: &webhooks.Attempt{Number: 1, ResponseStatus: 200, Manual: true}, notice2: "Replay delivered to your endpoint: the endpoint answered 200 OK."},
		{name: "test event waiting", notice: "test_sent", d: webhooks.Delivery{Status: webhooks.DeliveryPending, NextAttemptAt: now},
			info: "Test event sent: a ping event with test: true, to this endpoint alone.", refresh: true},
		{name: "test event retried", notice: "test_sent", d: webhooks.Delivery{Status: webhooks.DeliveryPending, AttemptCount: 1, NextAttemptAt: now.Add(time.Minute)},
			last: &webhooks.Attempt{Number: 1, ResponseStatus: 500}, fail: "Test event attempted: the endpoint answered 500 Internal Server Error. It is retried on the schedule."},
		{name: "endpoint disabled meanwhile", notice: "retried", d: webhooks.Delivery{Status: webhooks.DeliveryFailed, Reason: webhooks.ReasonEndpointDisabled, AttemptCount: 2},
			last: unavailable, fail: "Retry not attempted. The endpoint was disabled, so this delivery was not sent."},
		{name: "another notice", notice: "updated", d: webhooks.Delivery{Status: webhooks.DeliveryFailed}},
	} {
		p := &DeliveryPage{}
		p.sendOutcome(tc.notice, &tc.d, tc.last, now, defaultWords)
		if p.Notice != tc.notice2 || !strings.HasPrefix(p.Info, tc.info) || (tc.info == "") != (p.Info == "") || p.Error != tc.fail || (p.Refresh > 0) != tc.refresh {
			t.Errorf("%s: got notice %q, info %q, error %q, refresh %d; want %q, %q…, %q, refresh %t",
				tc.name, p.Notice, p.Info, p.Error, p.Refresh, tc.notice2, tc.info, tc.fail, tc.refresh)
		}
	}
}
