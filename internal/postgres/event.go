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
//
// It makes two round trips whatever the event: one pipelined batch opens
// the transaction and reads (the Idempotency-Key, the event's company and
// account, the locks, the candidate endpoints); the other writes (the
// event, its deliveries, the key) and commits. Round trips, not
// statements, are what registration costs on a busy machine.
func (s *Store) RegisterEvent(ctx context.Context, ev *webhooks.Event, key *webhooks.IdempotencyKey) (first *webhooks.Event, deliveries []*webhooks.Delivery, created bool, err error) {
	defer func() { err = txError(err) }()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, nil, false, err
	}
	defer conn.Release()
	open := true
	defer func() {
		if open {
			// The transaction may be open, or aborted by a failed
			// statement: end it before the connection goes back.
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			conn.Exec(rctx, `ROLLBACK`)
		}
	}()
	var b pgx.Batch
	b.Queue(`BEGIN`)
	var eventID string
	candidates := queueCandidates(&b, ev, key, &eventID)
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		return nil, nil, false, err
	}
	c, err := candidates()
	if err != nil {
		return nil, nil, false, err
	}
	if eventID != "" {
		// A repeat: the first event, read in the still-open transaction,
		// which the deferred ROLLBACK ends (it wrote nothing).
		first, err = findEvent(ctx, conn, eventID)
		return first, nil, false, err
	}
	if deliveries, err = webhooks.Route(ev, c, ev.Created); err != nil {
		return nil, nil, false, err
	}
	// Queued statements run in order: the event first, since the key and
	// the deliveries refer to it.
	b = pgx.Batch{}
	b.Queue(`INSERT INTO events (`+eventCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		ev.ID, ev.Type, ev.APIVersion, ev.Livemode, ev.Test, nullString(ev.CorrelationID),
		ev.AccountID, nullString(ev.CompanyID), []byte(ev.Object), ts(ev.Created))
	if key != nil {
		// An expired key is forgotten: the new event takes it over.
		b.Queue(`INSERT INTO idempotency_keys (key, request_hash, event_id, created) VALUES ($1, $2, $3, $4)
			ON CONFLICT (key) DO UPDATE SET request_hash = excluded.request_hash, event_id = excluded.event_id, created = excluded.created`,
			key.Key, key.RequestHash, ev.ID, ts(key.Created))
	}
	inserted := queueDeliveries(&b, deliveries)
	// A failed statement skips the rest of the batch, COMMIT included; the
	// deferred ROLLBACK then ends the aborted transaction.
	b.Queue(`COMMIT`)
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		return nil, nil, false, err
	}
	open = false
	deliveries = inserted()
	if slices.ContainsFunc(deliveries, func(d *webhooks.Delivery) bool { return d.Status == webhooks.DeliveryPending }) {
		s.notifyCommitted()
	}
	return ev, deliveries, true, nil
}

// queueCandidates queues in b the reads of what registering ev needs: the
// Idempotency-Key, ev's account (filled from its company), and the
// endpoints it may reach. Once b is sent, the returned function checks them
// and sorts the endpoints, or sets *repeat to the first event's id when the
// key repeats a recent request.
func queueCandidates(b *pgx.Batch, ev *webhooks.Event, key *webhooks.IdempotencyKey, repeat *string) func() (webhooks.Candidates, error) {
	var c webhooks.Candidates
	var hash []byte
	var keyEvent string
	var keyCreated pgtype.Timestamptz
	keyFound := false
	if key != nil {
		// Producers retry: two requests with one new key may arrive at
		// once. The lock makes the second wait for the first to commit and
		// then find its key, instead of registering a second event.
		b.Queue(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, lockIdempotency, key.Key)
		b.Queue(`SELECT request_hash, event_id, created FROM idempotency_keys WHERE key = $1`, key.Key).
			QueryRow(func(row pgx.Row) error {
				err := row.Scan(&hash, &keyEvent, &keyCreated)
				if errors.Is(err, pgx.ErrNoRows) {
					return nil
				}
				keyFound = err == nil
				return err
			})
	}
	companyID, accountID := optionalID(ev.CompanyID), optionalID(ev.AccountID)
	var companyAccount, account, manager pgtype.Text
	// The owners of every endpoint the event may reach are locked shared
	// before the endpoints are read (by the next statement, which sees what
	// committed before it): a change to one of those endpoints, which takes
	// its owner's lock exclusive, either commits first and is seen, or
	// waits for this event's deliveries, and then ends those a disable must
	// end. Advisory locks live in memory: the hot path writes nothing for
	// them, unlike FOR SHARE on the endpoint rows.
	b.Queue(`WITH q AS (
			SELECT c.account_id AS company_account, a.id AS account_id, a.provisioned_by
			FROM (SELECT 1) one
			LEFT JOIN companies c ON c.id = $1::uuid
			LEFT JOIN accounts a ON a.id = coalesce(c.account_id, $2::uuid))
		SELECT company_account, account_id, provisioned_by,
			(SELECT count(pg_advisory_xact_lock_shared($3, hashtext(o))) FROM unnest(ARRAY[account_id::text, $4::text, provisioned_by::text]) AS o WHERE o IS NOT NULL)
		FROM q`,
		companyID, accountID, lockOwner, companyEndpointsOf(ev)).
		QueryRow(func(row pgx.Row) error {
			var locks int64
			return row.Scan(&companyAccount, &account, &manager, &locks)
		})
	var endpoints []*webhooks.Endpoint
	b.Queue(`SELECT `+endpointCols+` FROM endpoints
		WHERE deleted IS NULL AND (company_id = $1::uuid OR account_id = (
			SELECT a.id FROM accounts a LEFT JOIN companies c ON c.id = $2::uuid WHERE a.id = coalesce(c.account_id, $3::uuid))
			OR account_id = (
			SELECT a.provisioned_by FROM accounts a LEFT JOIN companies c ON c.id = $2::uuid WHERE a.id = coalesce(c.account_id, $3::uuid)))
		ORDER BY created, id`,
		companyEndpointsOf(ev), companyID, accountID).
		Query(func(rows pgx.Rows) error {
			var err error
			endpoints, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (*webhooks.Endpoint, error) { return scanEndpoint(r) })
			return err
		})
	return func() (webhooks.Candidates, error) {
		if keyFound && key.Created.Sub(fromTS(keyCreated)) < webhooks.IdempotencyWindow {
			if !bytes.Equal(hash, key.RequestHash) {
				return c, webhooks.Errorf(webhooks.EIDEMPOTENCYREUSED, "Idempotency-Key %q was used in the last 24 hours with a different request.", key.Key)
			}
			*repeat = keyEvent
			return c, nil
		}
		if ev.CompanyID != "" {
			if !companyAccount.Valid {
				return c, webhooks.Errorf(webhooks.EUNKNOWNCOMPANY, "company_id %s is not a company.", ev.CompanyID)
			}
			if ev.AccountID != "" && ev.AccountID != companyAccount.String {
				return c, webhooks.Errorf(webhooks.EUNPROCESSABLE, "company %s does not belong to account %s.", ev.CompanyID, ev.AccountID)
			}
		}
		if !account.Valid {
			return c, webhooks.Errorf(webhooks.EUNKNOWNACCOUNT, "account_id %s is not an account.", ev.AccountID)
		}
		ev.AccountID = account.String
		for _, e := range endpoints {
			switch {
			case e.Scope == webhooks.ScopeCompany:
				c.Company = append(c.Company, e)
			case e.AccountID == ev.AccountID:
				c.Own = append(c.Own, e)
			default:
				c.Manager = append(c.Manager, e)
			}
		}
		return c, nil
	}
}

// companyEndpointsOf is the company whose endpoints ev may reach: its
// company, unless it is an account.* event (NULL then).
func companyEndpointsOf(ev *webhooks.Event) any {
	if ev.CompanyID == "" || ev.IsAccountEvent() {
		return nil
	}
	return ev.CompanyID
}

// optionalID is id, or NULL when it is empty or not an id (which then
// matches nothing, as an unknown id does).
func optionalID(id string) any {
	if id == "" || !webhooks.ValidID(id) {
		return nil
	}
	return id
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
		notifyOnCommit(tx)
		return nil
	})
	return out, err
}
