package webhooks

import (
	"testing"
	"time"
)

// batch returns records of one endpoint whose attempts succeeded or not,
// as ok says, a minute apart from t.
func batch(t time.Time, ok ...bool) []*AttemptRecord {
	var rs []*AttemptRecord
	for i, good := range ok {
		a := &Attempt{StartedAt: t.Add(time.Duration(i) * time.Minute), ResponseStatus: 503}
		if good {
			a.ResponseStatus = 200
		}
		rs = append(rs, &AttemptRecord{EndpointID: "e", Attempt: a})
	}
	return rs
}

// TestStreakStep_Apply folds batches of attempts into an endpoint's streak
// of failures: the streak after, the one that reached FailingAfter in the
// batch, and the one a 2xx ended, each counted from the batch's order and
// the streak before it.
func TestStreakStep_Apply(t *testing.T) {
	t0 := time.Date(2026, 9, 23, 10, 0, 0, 0, time.UTC)
	before := t0.Add(-time.Hour)
	const F, S = false, true
	for _, tc := range []struct {
		name                   string
		old                    int
		ok                     []bool
		after                  int
		since                  time.Time
		failing, recovered     int // lengths, 0 for none
		failingAt, recoveredAt time.Time
		failingFirst           bool
	}{
		{name: "healthy", ok: []bool{S, S}},
		{name: "three failures", ok: []bool{F, F, F}, after: 3, since: t0},
		{name: "the fourth in a row", old: 3, ok: []bool{F}, after: 4, since: before, failing: 4, failingAt: before},
		{name: "fourth and fifth in one batch", old: 2, ok: []bool{F, F, F}, after: 5, since: before, failing: 4, failingAt: before},
		{name: "past the fourth: no new episode", old: 4, ok: []bool{F, F}, after: 6, since: before},
		{name: "a 2xx ends a failing streak", old: 5, ok: []bool{S}, recovered: 5, recoveredAt: before},
		{name: "failing and recovered in one batch", old: 3, ok: []bool{F, S, F}, after: 1, since: t0.Add(2 * time.Minute),
			failing: 4, failingAt: before, recovered: 4, recoveredAt: before, failingFirst: true},
		// Each run is short: nothing fires, however many failures the
		// batch holds in all.
		{name: "flapping", ok: []bool{F, F, S, F, F, S, F}, after: 1, since: t0.Add(6 * time.Minute)},
		{name: "a new episode after a 2xx", old: 5, ok: []bool{S, F, F, F, F}, after: 4, since: t0.Add(time.Minute),
			failing: 4, failingAt: t0.Add(time.Minute), recovered: 5, recoveredAt: before},
		// The second episode's failing comes after the first's 2xx.
		{name: "two episodes in one batch", ok: []bool{F, F, F, F, S, F, F, F, F}, after: 4, since: t0.Add(5 * time.Minute),
			failing: 4, failingAt: t0.Add(5 * time.Minute), recovered: 4, recoveredAt: t0},
	} {
		steps := StreakSteps(batch(t0, tc.ok...))
		if len(steps) != 1 || steps[0].Last != len(tc.ok)-1 {
			t.Fatalf("%s: steps %+v", tc.name, steps)
		}
		h := steps[0].Apply(tc.old, before)
		if h.After != tc.after || !h.FailingSince.Equal(tc.since) {
			t.Errorf("%s: streak after %d since %v, want %d since %v", tc.name, h.After, h.FailingSince, tc.after, tc.since)
		}
		check := func(what string, got *Streak, n int, at time.Time) {
			if (got == nil) != (n == 0) || (got != nil && (got.Length != n || !got.Since.Equal(at))) {
				t.Errorf("%s: %s %+v, want length %d since %v", tc.name, what, got, n, at)
			}
		}
		check("failing", h.Failing, tc.failing, tc.failingAt)
		check("recovered", h.Recovered, tc.recovered, tc.recoveredAt)
		if h.FailingFirst != tc.failingFirst {
			t.Errorf("%s: FailingFirst %t, want %t", tc.name, h.FailingFirst, tc.failingFirst)
		}
		// What a store that adds in SQL computes agrees with the fold.
		n, first := steps[0].Trailing()
		want := tc.old + n
		if steps[0].Reset() {
			want = n
		}
		if want != h.After || (n > 0 && tc.old == 0 && !first.Equal(h.FailingSince)) {
			t.Errorf("%s: Reset %t Trailing %d since %v, disagree with the fold's %d since %v", tc.name, steps[0].Reset(), n, first, h.After, h.FailingSince)
		}
	}
}
