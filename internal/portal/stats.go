package portal

import (
	"context"
	"fmt"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

// The 24-hour figures: one bar an hour.
const (
	statsWindow  = 24 * time.Hour
	statsBuckets = 24
)

// Stats are an endpoint's deliveries of the last 24 hours by outcome.
// Pending counts those not attempted yet and the sends by hand under way:
// any other pending delivery has failed an attempt and is being retried on
// the schedule, and counts as failing (Health).
type Stats struct {
	Delivered, Failed, Pending int
	Health
	Chart Chart
}

// Health is what an endpoint's deliveries being retried say of it now.
type Health struct {
	// Retrying counts the deliveries of the last 24 hours being retried:
	// pending after at least one failed attempt, not sent by hand (see
	// retrying).
	Retrying int
	// FailingSince is when the endpoint's attempts began to fail, while
	// they still fail (zero when they do not).
	FailingSince TimeView
}

// Shown reports whether there is anything wrong to say.
func (h Health) Shown() bool { return h.Retrying > 0 || !h.FailingSince.IsZero() }

// RetryingText says how many deliveries are being retried, and, when the
// endpoint is not failing, that it answers again.
func (h Health) RetryingText() string {
	switch {
	case h.Retrying == 0:
		return ""
	case h.Retrying == 1 && h.FailingSince.IsZero():
		return "1 delivery of the last 24 hours waits for a retry on the schedule; your endpoint has accepted a delivery since it failed."
	case h.Retrying == 1:
		return "1 delivery of the last 24 hours is being retried on the schedule."
	case h.FailingSince.IsZero():
		return fmt.Sprintf("%d deliveries of the last 24 hours wait for a retry on the schedule; your endpoint has accepted a delivery since they failed.", h.Retrying)
	}
	return fmt.Sprintf("%d deliveries of the last 24 hours are being retried on the schedule.", h.Retrying)
}

// Total is how many deliveries the figures count.
func (s Stats) Total() int { return s.Delivered + s.Failed + s.Retrying + s.Pending }

// Rate is the share of attempted deliveries that reached the endpoint, a
// delivery being retried counting as one that did not (yet), or a dash
// when none was attempted.
func (s Stats) Rate() string {
	done := s.Delivered + s.Failed + s.Retrying
	if done == 0 {
		return "—"
	}
	pct := float64(s.Delivered) * 100 / float64(done)
	if pct > 99.9 && s.Delivered < done {
		return "99.9%"
	}
	if pct == float64(int(pct)) {
		return fmt.Sprintf("%d%%", int(pct))
	}
	return fmt.Sprintf("%.1f%%", pct)
}

// Summary says the figures in words (the chart's text alternative).
func (s Stats) Summary() string {
	return fmt.Sprintf("Last 24 hours: %d delivered to the endpoint, %d being retried, %d failed, %d pending.",
		s.Delivered, s.Retrying, s.Failed, s.Pending)
}

// failingSince is when an endpoint's attempts began to fail, while they
// still fail: its own failing_since, which the engine keeps (SPEC 14).
func failingSince(ep *webhooks.Endpoint) time.Time {
	if ep.FailureStreak == 0 {
		return time.Time{}
	}
	return ep.FailingSince
}

// Chart is an inline SVG bar chart: one stacked bar per hour, oldest on
// the left.
type Chart struct {
	Width, Height int
	Bars          []Bar
}

// Bar is one hour's stacked segments.
type Bar struct {
	X, W     int
	Segments []Segment
	Title    string // "14:00–15:00 UTC: 3 delivered, 1 retrying, 1 failed, 0 pending"
}

// Segment is one outcome's part of a bar.
type Segment struct {
	Y, H  float64
	Class string // "delivered", "pending", "retrying", "failed" or "empty"
}

// hourCounts are one hour's deliveries by outcome.
type hourCounts struct{ delivered, failed, retrying, pending int }

func (n hourCounts) total() int { return n.delivered + n.failed + n.retrying + n.pending }

// endpointStats counts the deliveries of the last 24 hours of every
// endpoint in hold, by hour and outcome, in two queries (by state, and
// those being retried), and returns their figures by endpoint id.
func (h *Handler) endpointStats(ctx context.Context, hold *app.Holdings, now time.Time) (map[string]Stats, error) {
	since := now.Add(-statsWindow)
	counts, err := h.cfg.App.CountDeliveries(ctx, hold, since, statsWindow/statsBuckets)
	if err != nil {
		return nil, err
	}
	// Read after the states: a delivery first attempted in between is
	// pending in both, and moves from one figure to the other below.
	retrying, err := h.cfg.App.CountRetrying(ctx, hold.All(), since, statsWindow/statsBuckets)
	if err != nil {
		return nil, err
	}
	buckets := map[string]*[statsBuckets]hourCounts{}
	for _, ep := range hold.All() {
		buckets[ep.ID] = &[statsBuckets]hourCounts{}
	}
	for _, n := range counts {
		b := buckets[n.EndpointID]
		if b == nil {
			continue
		}
		i := min(max(n.Bucket, 0), statsBuckets-1)
		switch n.Status {
		case webhooks.DeliveryDelivered:
			b[i].delivered += n.N
		case webhooks.DeliveryPending:
			b[i].pending += n.N
		default:
			b[i].failed += n.N
		}
	}
	for _, n := range retrying {
		b := buckets[n.EndpointID]
		if b == nil {
			continue
		}
		i := min(max(n.Bucket, 0), statsBuckets-1)
		// No more than the states counted pending: one created since
		// was not in their count.
		moved := min(n.N, b[i].pending)
		b[i].pending -= moved
		b[i].retrying += moved
	}
	failing := map[string]time.Time{}
	for _, ep := range hold.All() {
		failing[ep.ID] = failingSince(ep)
	}
	out := make(map[string]Stats, len(buckets))
	for id, b := range buckets {
		var s Stats
		for _, n := range b {
			s.Delivered += n.delivered
			s.Failed += n.failed
			s.Retrying += n.retrying
			s.Pending += n.pending
		}
		s.FailingSince = timeView(failing[id], now)
		s.Chart = chart(b[:], since)
		out[id] = s
	}
	return out, nil
}

// endpointHealth is one endpoint's Health, in one query.
func (h *Handler) endpointHealth(ctx context.Context, ep *webhooks.Endpoint, now time.Time) (Health, error) {
	retrying, err := h.cfg.App.CountRetrying(ctx, []*webhooks.Endpoint{ep}, now.Add(-statsWindow), statsWindow)
	if err != nil {
		return Health{}, err
	}
	var v Health
	for _, n := range retrying {
		v.Retrying += n.N
	}
	v.FailingSince = timeView(failingSince(ep), now)
	return v, nil
}

// chart draws the buckets as stacked bars, scaled to the busiest hour:
// delivered at the bottom, then pending, retrying and failed.
func chart(counts []hourCounts, since time.Time) Chart {
	const barW, gap, height = 8, 2, 40
	c := Chart{Width: len(counts)*(barW+gap) - gap, Height: height}
	peak := 1
	for _, n := range counts {
		peak = max(peak, n.total())
	}
	for i, n := range counts {
		from := since.Add(time.Duration(i) * time.Hour).UTC()
		bar := Bar{X: i * (barW + gap), W: barW,
			Title: fmt.Sprintf("%s–%s UTC: %d delivered, %d retrying, %d failed, %d pending",
				from.Format("15:04"), from.Add(time.Hour).Format("15:04"), n.delivered, n.retrying, n.failed, n.pending)}
		y := float64(height)
		if n.total() == 0 {
			bar.Segments = append(bar.Segments, Segment{Y: height - 1, H: 1, Class: "empty"})
		}
		for _, part := range []struct {
			class string
			v     int
		}{{"delivered", n.delivered}, {"pending", n.pending}, {"retrying", n.retrying}, {"failed", n.failed}} {
			if part.v == 0 {
				continue
			}
			hgt := max(float64(part.v)*float64(height)/float64(peak), 2)
			y -= hgt
			bar.Segments = append(bar.Segments, Segment{Y: max(y, 0), H: hgt, Class: part.class})
		}
		c.Bars = append(c.Bars, bar)
	}
	return c
}
