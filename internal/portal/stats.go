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
type Stats struct {
	Delivered, Failed, Pending int
	Chart                      Chart
}

// Total is how many deliveries the figures count.
func (s Stats) Total() int { return s.Delivered + s.Failed + s.Pending }

// Rate is the share of finished deliveries that reached the endpoint, or
// a dash when none finished.
func (s Stats) Rate() string {
	done := s.Delivered + s.Failed
	if done == 0 {
		return "—"
	}
	pct := float64(s.Delivered) * 100 / float64(done)
	if pct > 99.9 && s.Failed > 0 {
		return "99.9%"
	}
	if pct == float64(int(pct)) {
		return fmt.Sprintf("%d%%", int(pct))
	}
	return fmt.Sprintf("%.1f%%", pct)
}

// Summary says the figures in words (the chart's text alternative).
func (s Stats) Summary() string {
	return fmt.Sprintf("Last 24 hours: %d delivered to the endpoint, %d failed, %d pending.", s.Delivered, s.Failed, s.Pending)
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
	Title    string // "14:00–15:00 UTC: 3 delivered, 1 failed"
}

// Segment is one outcome's part of a bar.
type Segment struct {
	Y, H  float64
	Class string // "delivered", "failed", "pending" or "empty"
}

// endpointStats counts the deliveries of the last 24 hours of every
// endpoint in hold, by hour and state, in one query, and returns their
// figures by endpoint id.
func (h *Handler) endpointStats(ctx context.Context, hold *app.Holdings, now time.Time) (map[string]Stats, error) {
	since := now.Add(-statsWindow)
	counts, err := h.cfg.App.CountDeliveries(ctx, hold, since, statsWindow/statsBuckets)
	if err != nil {
		return nil, err
	}
	buckets := map[string]*[statsBuckets][3]int{} // delivered, failed, pending
	out := map[string]Stats{}
	for _, ep := range hold.All() {
		buckets[ep.ID] = &[statsBuckets][3]int{}
	}
	for _, n := range counts {
		b := buckets[n.EndpointID]
		if b == nil {
			continue
		}
		i := min(max(n.Bucket, 0), statsBuckets-1)
		s := out[n.EndpointID]
		switch n.Status {
		case webhooks.DeliveryDelivered:
			b[i][0] += n.N
			s.Delivered += n.N
		case webhooks.DeliveryPending:
			b[i][2] += n.N
			s.Pending += n.N
		default:
			b[i][1] += n.N
			s.Failed += n.N
		}
		out[n.EndpointID] = s
	}
	for id, b := range buckets {
		s := out[id]
		s.Chart = chart(b[:], since)
		out[id] = s
	}
	return out, nil
}

// chart draws the buckets as stacked bars, scaled to the busiest hour.
func chart(counts [][3]int, since time.Time) Chart {
	const barW, gap, height = 8, 2, 40
	c := Chart{Width: len(counts)*(barW+gap) - gap, Height: height}
	peak := 1
	for _, n := range counts {
		peak = max(peak, n[0]+n[1]+n[2])
	}
	for i, n := range counts {
		from := since.Add(time.Duration(i) * time.Hour).UTC()
		bar := Bar{X: i * (barW + gap), W: barW,
			Title: fmt.Sprintf("%s–%s UTC: %d delivered, %d failed, %d pending",
				from.Format("15:04"), from.Add(time.Hour).Format("15:04"), n[0], n[1], n[2])}
		y := float64(height)
		if n[0]+n[1]+n[2] == 0 {
			bar.Segments = append(bar.Segments, Segment{Y: height - 1, H: 1, Class: "empty"})
		}
		for k, class := range []string{"delivered", "pending", "failed"} {
			v := n[[]int{0, 2, 1}[k]]
			if v == 0 {
				continue
			}
			hgt := max(float64(v)*float64(height)/float64(peak), 2)
			y -= hgt
			bar.Segments = append(bar.Segments, Segment{Y: max(y, 0), H: hgt, Class: class})
		}
		c.Bars = append(c.Bars, bar)
	}
	return c
}
