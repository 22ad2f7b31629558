package postgres

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// RegisterEvent implements webhooks.Store. Registrations are committed in
// groups: concurrent registrations share one transaction, its two round
// trips, its locks and its commit (see registerGroup), which is most of
// what a registration costs on a busy machine. A few registrars run at
// once, each taking every registration that is waiting: a lone
// registration goes at once, and under load the groups grow instead of the
// transactions multiplying.
func (s *Store) RegisterEvent(ctx context.Context, ev *webhooks.Event, key *webhooks.IdempotencyKey) (*webhooks.Event, []*webhooks.Delivery, bool, error) {
	r := &registration{ctx: ctx, ev: ev, key: key, done: make(chan struct{})}
	select {
	case s.registrations <- r:
	case <-ctx.Done():
		return nil, nil, false, ctx.Err()
	case <-s.closed.Done():
		return nil, nil, false, errClosed
	}
	select {
	case <-r.done:
	case <-ctx.Done():
		// The registration may still commit; the caller was not told it
		// was accepted, and retries with its Idempotency-Key are safe.
		return nil, nil, false, ctx.Err()
	}
	if r.err != nil {
		return nil, nil, false, txError(r.err)
	}
	if r.first != nil {
		return r.first, nil, false, nil
	}
	return ev, r.deliveries, true, nil
}

var errClosed = errors.New("postgres: store is closed")

// registration is one RegisterEvent waiting for its group's commit.
type registration struct {
	ctx  context.Context // the caller's: one that ended before its group began is left out
	ev   *webhooks.Event
	key  *webhooks.IdempotencyKey
	done chan struct{}

	first      *webhooks.Event // the earlier event of a repeated key
	deliveries []*webhooks.Delivery
	err        error
}

// Group sizes.
const (
	// registrars is how many groups of registrations commit at once in one
	// process: enough that a commit waiting for the disk does not hold up
	// the next group, few enough that the groups stay large under load.
	registrars = 2
	// maxGroup bounds a group, so that one transaction stays short.
	maxGroup = 64
)

// registrar commits registrations in groups until the store closes.
func (s *Store) registrar() {
	defer s.registrarsDone.Done()
	var group, later []*registration
	for {
		if len(later) > 0 {
			group, later = later, nil
		} else {
			select {
			case r := <-s.registrations:
				group = append(group[:0], r)
			case <-s.closed.Done():
				return
			}
		}
	more:
		for len(group) < maxGroup {
			select {
			case r := <-s.registrations:
				group = append(group, r)
			default:
				break more
			}
		}
		// One Idempotency-Key twice in a group (a producer's retry racing
		// its first try): the second waits for a group of its own, where
		// it finds the first's key. The rest take the keys' locks in one
		// order, so that two groups cannot deadlock.
		group, later = splitRepeatedKeys(group)
		s.commitGroup(group)
	}
}

// splitRepeatedKeys returns the registrations of group sorted by key, but
// for those whose key an earlier one has, which it returns apart.
func splitRepeatedKeys(group []*registration) (first, later []*registration) {
	seen := map[string]bool{}
	for _, r := range group {
		if r.key != nil && seen[r.key.Key] {
			later = append(later, r)
			continue
		}
		if r.key != nil {
			seen[r.key.Key] = true
		}
		first = append(first, r)
	}
	slices.SortStableFunc(first, func(a, b *registration) int { return cmp.Compare(keyOf(a), keyOf(b)) })
	return first, later
}

func keyOf(r *registration) string {
	if r.key == nil {
		return ""
	}
	return r.key.Key
}

// commitGroup registers group and answers each registration. When the
// database refuses the group as a whole, each is registered alone, so that
// only a registration at fault fails.
func (s *Store) commitGroup(all []*registration) {
	defer func() {
		for _, r := range all {
			close(r.done)
		}
	}()
	group := slices.DeleteFunc(slices.Clone(all), func(r *registration) bool {
		r.err = r.ctx.Err()
		return r.err != nil
	})
	if len(group) == 0 {
		return
	}
	// The callers' contexts do not end a group that others share; a
	// database that stops answering does.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.closed), time.Minute)
	defer cancel()
	if err := s.registerGroup(ctx, group); err != nil {
		for _, r := range group {
			r.first, r.deliveries, r.err = nil, nil, nil
			if len(group) == 1 {
				r.err = err
			} else if err := s.registerGroup(ctx, []*registration{r}); err != nil {
				r.err = err
			}
		}
	}
}
