package postgres

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/factuarea/webhooks"
)

const eventCols = `id, type, api_version, livemode, test, correlation_id, account_id, company_id, object, created`

func scanEvent(r scanner) (*webhooks.Event, error) {
	var e webhooks.Event
	var corr, company pgtype.Text
	var object []byte
	var created pgtype.Timestamptz
	if err := r.Scan(&e.ID, &e.Type, &e.APIVersion, &e.Livemode, &e.Test, &corr, &e.AccountID, &company, &object, &created); err != nil {
		return nil, err
	}
	e.CorrelationID, e.CompanyID = corr.String, company.String
	e.Object, e.Created = object, fromTS(created)
	return &e, nil
}

func findEvent(ctx context.Context, q querier, id string) (*webhooks.Event, error) {
	if !webhooks.ValidID(id) {
		return nil, notFound("event")
	}
	e, err := scanEvent(q.QueryRow(ctx, `SELECT `+eventCols+` FROM events WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound("event")
	}
	return e, err
}

// FindEvent implements webhooks.Store.
func (s *Store) FindEvent(ctx context.Context, id string) (*webhooks.Event, error) {
	return read(findEvent(ctx, s.pool, id))
}

// ListEvents implements webhooks.Store.
func (s *Store) ListEvents(ctx context.Context, f webhooks.EventFilter, p webhooks.Page) (*webhooks.List[*webhooks.Event], error) {
	q := listQuery{table: "events", cols: eventCols, conds: []string{"NOT test"}}
	if f.CompanyID != "" {
		q.whereID("company_id", f.CompanyID)
	} else {
		q.whereID("account_id", f.AccountID)
	}
	if f.Type != "" {
		q.where("type = $%d", f.Type)
	}
	if !f.CreatedGTE.IsZero() {
		q.where("created >= $%d", ts(f.CreatedGTE))
	}
	if !f.CreatedLT.IsZero() {
		q.where("created < $%d", ts(f.CreatedLT))
	}
	return read(list(ctx, s.pool, q, p, scanEvent))
}

// RegisterEvent implements webhooks.Store.
func (s *Store) RegisterEvent(ctx context.Context, ev *webhooks.Event, key *webhooks.IdempotencyKey) (*webhooks.Event, []*webhooks.Delivery, bool, error) {
	var (
		first      *webhooks.Event
		deliveries []*webhooks.Delivery
	)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if key != nil {
			// Producers retry: two requests with one new key may arrive at
			// once. The lock makes the second wait for the first to commit
			// and then find its key, instead of registering a second event
			// or failing on the primary key.
			if err := lockExclusive(ctx, tx, lockIdempotency, key.Key); err != nil {
				return err
			}
			var hash []byte
			var eventID string
			var created pgtype.Timestamptz
			err := tx.QueryRow(ctx, `SELECT request_hash, event_id, created FROM idempotency_keys WHERE key = $1`, key.Key).
				Scan(&hash, &eventID, &created)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
			case err != nil:
				return err
			case key.Created.Sub(fromTS(created)) < webhooks.IdempotencyWindow:
				if !bytes.Equal(hash, key.RequestHash) {
					return webhooks.Errorf(webhooks.EIDEMPOTENCYREUSED, "Idempotency-Key %q was used in the last 24 hours with a different request.", key.Key)
				}
				first, err = findEvent(ctx, tx, eventID)
				return err
			default: // an expired key is forgotten
				if _, err := tx.Exec(ctx, `DELETE FROM idempotency_keys WHERE key = $1`, key.Key); err != nil {
					return err
				}
			}
		}
		c, err := candidates(ctx, tx, ev)
		if err != nil {
			return err
		}
		if deliveries, err = webhooks.Route(ev, c, ev.Created); err != nil {
			return err
		}
		if err := insertEvent(ctx, tx, ev); err != nil {
			return err
		}
		if deliveries, err = insertDeliveries(ctx, tx, deliveries); err != nil {
			return err
		}
		if key != nil {
			if _, err := tx.Exec(ctx, `INSERT INTO idempotency_keys (key, request_hash, event_id, created) VALUES ($1, $2, $3, $4)`,
				key.Key, key.RequestHash, ev.ID, ts(key.Created)); err != nil {
				return err
			}
		}
		if slices.ContainsFunc(deliveries, func(d *webhooks.Delivery) bool { return d.Status == webhooks.DeliveryPending }) {
			return notify(ctx, tx)
		}
		return nil
	})
	if err != nil {
		return nil, nil, false, err
	}
	if first != nil {
		return first, nil, false, nil
	}
	return ev, deliveries, true, nil
}

// candidates resolves ev's account from its company and loads the endpoints
// it may reach.
func candidates(ctx context.Context, tx pgx.Tx, ev *webhooks.Event) (webhooks.Candidates, error) {
	var c webhooks.Candidates
	if ev.CompanyID != "" {
		company, err := findCompany(ctx, tx, ev.CompanyID)
		if webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
			return c, webhooks.Errorf(webhooks.EUNKNOWNCOMPANY, "company_id %s is not a company.", ev.CompanyID)
		} else if err != nil {
			return c, err
		}
		if ev.AccountID != "" && ev.AccountID != company.AccountID {
			return c, webhooks.Errorf(webhooks.EUNPROCESSABLE, "company %s does not belong to account %s.", ev.CompanyID, ev.AccountID)
		}
		ev.AccountID = company.AccountID
	}
	account, err := findAccount(ctx, tx, ev.AccountID)
	if webhooks.ErrorCode(err) == webhooks.ENOTFOUND {
		return c, webhooks.Errorf(webhooks.EUNKNOWNACCOUNT, "account_id %s is not an account.", ev.AccountID)
	} else if err != nil {
		return c, err
	}
	var companyID any // NULL: no company endpoints
	owners := []string{ev.AccountID}
	if ev.CompanyID != "" && !ev.IsAccountEvent() {
		companyID = ev.CompanyID
		owners = append(owners, ev.CompanyID)
	}
	var managerID any
	if account.Managed() {
		managerID = account.ProvisionedBy
		owners = append(owners, account.ProvisionedBy)
	}
	// Shared locks on the owners of every endpoint the event may reach,
	// taken before they are read: a change to one of those endpoints (which
	// takes its owner's lock exclusive) either commits before the read, and
	// is seen, or waits for this event's deliveries, and then ends those a
	// disable must end. Advisory locks live in memory, so the hot path
	// writes nothing for them, unlike FOR SHARE on the endpoint rows.
	slices.Sort(owners)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared($1, hashtext(o)) FROM unnest($2::text[]) AS o`, lockOwner, owners); err != nil {
		return c, err
	}
	rows, err := tx.Query(ctx, `SELECT `+endpointCols+` FROM endpoints
		WHERE deleted IS NULL AND (company_id = $1 OR account_id = $2 OR account_id = $3)
		ORDER BY created, id`,
		companyID, ev.AccountID, managerID)
	if err != nil {
		return c, err
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanEndpoint(rows)
		if err != nil {
			return c, err
		}
		switch {
		case e.Scope == webhooks.ScopeCompany:
			c.Company = append(c.Company, e)
		case e.AccountID == ev.AccountID:
			c.Own = append(c.Own, e)
		default:
			c.Manager = append(c.Manager, e)
		}
	}
	return c, rows.Err()
}

func insertEvent(ctx context.Context, tx pgx.Tx, ev *webhooks.Event) error {
	_, err := tx.Exec(ctx, `INSERT INTO events (`+eventCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		ev.ID, ev.Type, ev.APIVersion, ev.Livemode, ev.Test, nullString(ev.CorrelationID),
		ev.AccountID, nullString(ev.CompanyID), []byte(ev.Object), ts(ev.Created))
	return err
}

// SendTestEvent implements webhooks.Store.
func (s *Store) SendTestEvent(ctx context.Context, endpointID string, now time.Time, audit *webhooks.AuditEntry) (*webhooks.Delivery, error) {
	var out *webhooks.Delivery
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		ep, err := findEndpoint(ctx, tx, endpointID, forShare)
		if err != nil {
			return err
		}
		if !ep.Enabled() {
			return webhooks.Errorf(webhooks.EENDPOINTDISABLED, "the endpoint is disabled: enable it before sending a test event.")
		}
		accountID, err := endpointAccount(ctx, tx, ep)
		if err != nil {
			return err
		}
		ev := webhooks.NewTestEvent(ep, accountID, now)
		d, err := webhooks.NewDelivery(ev, ep, now)
		if err != nil {
			return err
		}
		if err := insertEvent(ctx, tx, ev); err != nil {
			return err
		}
		if _, err := insertDeliveries(ctx, tx, []*webhooks.Delivery{d}); err != nil {
			return err
		}
		out = d
		if err := insertAudit(ctx, tx, audit, accountID, webhooks.AuditEndpointTestSent, webhooks.TargetEndpoint, endpointID, now); err != nil {
			return err
		}
		return notify(ctx, tx)
	})
	return out, err
}
