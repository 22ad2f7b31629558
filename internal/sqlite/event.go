package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

const eventCols = `id, type, api_version, livemode, test, correlation_id, account_id, company_id, object, created`

func scanEvent(r scanner) (*webhooks.Event, error) {
	var e webhooks.Event
	var livemode, test int
	var corr, company sql.NullString
	var object string
	var created sql.NullInt64
	if err := r.Scan(&e.ID, &e.Type, &e.APIVersion, &livemode, &test, &corr, &e.AccountID, &company, &object, &created); err != nil {
		return nil, err
	}
	e.Livemode, e.Test, e.CorrelationID, e.CompanyID = livemode == 1, test == 1, corr.String, company.String
	e.Object, e.Created = []byte(object), fromMS(created)
	return &e, nil
}

func findEvent(ctx context.Context, q querier, id string) (*webhooks.Event, error) {
	e, err := scanEvent(q.QueryRowContext(ctx, `SELECT `+eventCols+` FROM events WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("event")
	}
	return e, err
}

// FindEvent implements app.Store.
func (s *Store) FindEvent(ctx context.Context, id string) (*webhooks.Event, error) {
	return read(findEvent(ctx, s.read, id))
}

// ListEvents implements app.Store.
func (s *Store) ListEvents(ctx context.Context, f webhooks.EventFilter, p webhooks.Page) (*webhooks.List[*webhooks.Event], error) {
	q := listQuery{table: "events", cols: eventCols, where: []string{"test = 0"}}
	if f.CompanyID != "" {
		q.where, q.args = append(q.where, "company_id = ?"), append(q.args, f.CompanyID)
	} else {
		q.where, q.args = append(q.where, "account_id = ?"), append(q.args, f.AccountID)
	}
	if f.Type != "" {
		q.where, q.args = append(q.where, "type = ?"), append(q.args, f.Type)
	}
	if !f.CreatedGTE.IsZero() {
		q.where, q.args = append(q.where, "created >= ?"), append(q.args, ms(f.CreatedGTE))
	}
	if !f.CreatedLT.IsZero() {
		q.where, q.args = append(q.where, "created < ?"), append(q.args, ms(f.CreatedLT))
	}
	return read(list(ctx, s.read, q, p, scanEvent))
}

// RegisterEvent implements app.Store. Registrations are committed in
// groups: each durable commit waits for the disk, so concurrent
// registrations share one commit (group commit), each in its own savepoint
// so that one refused registration does not undo the others.
func (s *Store) RegisterEvent(ctx context.Context, ev *webhooks.Event, key *webhooks.IdempotencyKey) (*webhooks.Event, []*webhooks.Delivery, bool, error) {
	r := &registration{ctx: ctx, ev: ev, key: key}
	if err := s.registrations.Do(ctx, r); err != nil {
		return nil, nil, false, err
	}
	if r.err != nil {
		return nil, nil, false, r.err
	}
	if r.first != nil {
		return r.first, nil, false, nil
	}
	return ev, r.deliveries, true, nil
}

// registration is one RegisterEvent waiting for its group's commit.
type registration struct {
	ctx context.Context // the caller's: if it ends before the group begins, the registration is left out
	ev  *webhooks.Event
	key *webhooks.IdempotencyKey

	first      *webhooks.Event // the earlier event of a repeated key
	deliveries []*webhooks.Delivery
	err        error
}

// maxGroup bounds a group commit, so one transaction stays short.
const maxGroup = 128

// commitGroup registers group in one transaction, each registration in a
// savepoint of its own.
//
// The group's statements run with a context of the group's, not the
// callers': a caller that gives up while its registration is being written
// would interrupt SQLite, which then rolls back the whole transaction and
// fails every other registration of the group. (Its registration may then
// commit without its caller being told, as Committer.Do says.)
func (s *Store) commitGroup(group []*registration) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := s.inTx(ctx, func(tx *txn) error {
		for _, r := range group {
			if r.err = r.ctx.Err(); r.err != nil {
				continue
			}
			if _, err := tx.Exec(`SAVEPOINT registration`); err != nil {
				return err
			}
			r.first, r.deliveries, r.err = registerEvent(ctx, tx, r.ev, r.key)
			if r.err != nil {
				if _, err := tx.Exec(`ROLLBACK TO registration`); err != nil {
					return err
				}
			}
			if _, err := tx.Exec(`RELEASE registration`); err != nil {
				return err
			}
		}
		return nil
	})
	for _, r := range group {
		if err != nil && r.err == nil {
			r.err = err
		}
	}
}

// registerEvent registers one event in tx (see RegisterEvent). It returns
// the first event when key repeats a recent request.
func registerEvent(ctx context.Context, tx *txn, ev *webhooks.Event, key *webhooks.IdempotencyKey) (*webhooks.Event, []*webhooks.Delivery, error) {
	if key != nil {
		stored := &webhooks.IdempotencyKey{Key: key.Key}
		var eventID string
		var created int64
		err := tx.QueryRowContext(ctx, `SELECT request_hash, event_id, created FROM idempotency_keys WHERE key = ?`, key.Key).
			Scan(&stored.RequestHash, &eventID, &created)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return nil, nil, err
		default:
			stored.Created = time.UnixMilli(created)
			repeat, err := key.Repeats(stored)
			if err != nil {
				return nil, nil, err
			}
			if repeat {
				first, err := findEvent(ctx, tx, eventID)
				return first, nil, err
			}
			// Expired: the new event takes the key over.
			if _, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE key = ?`, key.Key); err != nil {
				return nil, nil, err
			}
		}
	}
	c, err := candidates(ctx, tx, ev)
	if err != nil {
		return nil, nil, err
	}
	deliveries, err := webhooks.Route(ev, c, ev.Created)
	if err != nil {
		return nil, nil, err
	}
	if err := insertEvent(ctx, tx, ev); err != nil {
		return nil, nil, err
	}
	if deliveries, err = insertDeliveries(ctx, tx, deliveries); err != nil {
		return nil, nil, err
	}
	if key != nil {
		if _, err := tx.ExecContext(ctx, `INSERT INTO idempotency_keys (key, request_hash, event_id, created) VALUES (?, ?, ?, ?)`,
			key.Key, key.RequestHash, ev.ID, ms(key.Created)); err != nil {
			return nil, nil, err
		}
	}
	return nil, deliveries, nil
}

// candidates resolves ev's account from its company and loads the endpoints
// it may reach.
func candidates(ctx context.Context, tx *txn, ev *webhooks.Event) (webhooks.Candidates, error) {
	var c webhooks.Candidates
	companyAccount := ""
	if ev.CompanyID != "" {
		company, err := findCompany(ctx, tx, ev.CompanyID)
		if err == nil {
			companyAccount = company.AccountID
		} else if webhooks.ErrorCode(err) != webhooks.ENOTFOUND {
			return c, err
		}
	}
	if err := ev.Attribute(companyAccount); err != nil {
		return c, err
	}
	account, err := findAccount(ctx, tx, ev.AccountID)
	if webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
		return c, webhooks.UnknownAccount(ev.AccountID)
	} else if err != nil {
		return c, err
	}
	if ev.CompanyID != "" && !ev.IsAccountEvent() {
		if c.Company, err = queryEndpoints(ctx, tx, `company_id = ?`, ev.CompanyID); err != nil {
			return c, err
		}
	}
	if c.Own, err = queryEndpoints(ctx, tx, `account_id = ?`, ev.AccountID); err != nil {
		return c, err
	}
	if account.Managed() {
		if c.Manager, err = queryEndpoints(ctx, tx, `account_id = ?`, account.ProvisionedBy); err != nil {
			return c, err
		}
	}
	return c, nil
}

func queryEndpoints(ctx context.Context, q querier, where string, args ...any) ([]*webhooks.Endpoint, error) {
	return queryAll(ctx, q, scanEndpoint, `SELECT `+endpointCols+` FROM endpoints WHERE deleted IS NULL AND `+where, args...)
}

func insertEvent(ctx context.Context, tx *txn, ev *webhooks.Event) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO events (`+eventCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		ev.ID, ev.Type, ev.APIVersion, boolInt(ev.Livemode), boolInt(ev.Test), nullString(ev.CorrelationID),
		ev.AccountID, nullString(ev.CompanyID), string(ev.Object), ms(ev.Created))
	return err
}

// InsertEvent implements app.Tx.
func (t *txn) InsertEvent(ctx context.Context, ev *webhooks.Event) error {
	return insertEvent(ctx, t, ev)
}

// FindEvent implements app.Tx.
func (t *txn) FindEvent(ctx context.Context, id string) (*webhooks.Event, error) {
	return findEvent(ctx, t, id)
}
