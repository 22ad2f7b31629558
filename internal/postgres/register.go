package postgres

import (
	"cmp"
	"context"
	"slices"
	"time"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/app"
)

// RegisterEvent implements app.Store. Registrations are committed in
// groups (see groupcommit): concurrent registrations share one transaction,
// its two round trips, its locks and its commit (see registerGroup), which
// is most of what a registration costs on a busy machine.
func (s *Store) RegisterEvent(ctx context.Context, ev *webhooks.Event, key *webhooks.IdempotencyKey) (*webhooks.Event, []*webhooks.Delivery, bool, error) {
	r := &registration{ev: ev, key: key}
	r.catalog, r.checked = app.CatalogVersion(ctx)
	if err := s.registrations.Do(ctx, r); err != nil {
		return nil, nil, false, err
	}
	if r.err != nil {
		return nil, nil, false, txError(r.err)
	}
	if r.first != nil {
		return r.first, nil, false, nil
	}
	return ev, r.deliveries, true, nil
}

// registration is one RegisterEvent waiting for its group's commit.
type registration struct {
	ev  *webhooks.Event
	key *webhooks.IdempotencyKey
	// catalog is the version of the catalog ev was checked against, if
	// checked: the group's transaction refuses it if the catalog has
	// another (app.ErrCatalogChanged).
	catalog int64
	checked bool

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
	// groupWindow is how long, under load, a registrar waits for its
	// group to grow: PostgreSQL's work per statement and per transaction
	// is most of a small group's, whatever its size.
	groupWindow = time.Millisecond
)

// commitGroup registers group and answers each registration.
//
// One Idempotency-Key twice in a group (a producer's retry racing its
// first try): the second is registered after the first commits, and finds
// its key. The rest take the keys' locks in one order, so that two groups
// cannot deadlock. When the database refuses a group as a whole, each of
// its registrations is registered alone, so that only the one at fault
// fails.
func (s *Store) commitGroup(group []*registration) {
	group, later := splitRepeatedKeys(group)
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
	if len(later) > 0 {
		s.commitGroup(later)
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
