package postgres

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
)

// Claim implements driver.Queue in two round trips (and one more per
// chunk the core reads on): Begin's pipelined batch opens the transaction,
// locks the streaks, stores the records and reads the candidates; the
// writes (the streaks, the outbox, the parked and the claimed) go with the
// COMMIT.
//
// FOR UPDATE SKIP LOCKED makes concurrent claimers, in this process or
// another, take disjoint rows without waiting for each other; a row whose
// claim committed after a claimer's snapshot is re-checked when it is
// locked, and no longer qualifies. So a delivery has one valid claim at a
// time.
func (s *Store) Claim(ctx context.Context, fn func(tx driver.QueueTx) (*driver.QueueWrites, error)) ([]*webhooks.Claim, error) {
	var claims []*webhooks.Claim
	err := s.pipelined(ctx, func(conn *pgx.Conn) error {
		t := &queueTx{conn: conn}
		w, err := fn(t)
		if err != nil {
			return err
		}
		if !t.begun {
			return nil
		}
		claims, err = writeClaim(ctx, conn, w)
		return err
	})
	return read(claims, err)
}

// queueTx is a claim's transaction on its connection.
type queueTx struct {
	conn  *pgx.Conn
	begun bool
}

// Begin implements driver.QueueTx.
func (t *queueTx) Begin(ctx context.Context, r driver.QueueReads) (*driver.QueueFacts, error) {
	f := &driver.QueueFacts{Streaks: map[string]webhooks.Streak{}, Held: map[string]int{}}
	var b pgx.Batch
	b.Queue(`BEGIN`)
	queueEngineSettings(&b)
	t.begun = true
	ends := chainsOf(r.Records)
	if len(ends) > 0 {
		queueChainLocks(&b, ends)
	}
	if len(r.Streaks) > 0 {
		// FOR NO KEY UPDATE: the deliveries registered meanwhile, whose
		// foreign keys lock their endpoint FOR KEY SHARE, do not wait.
		b.Queue(`SELECT id, failure_streak, failing_since FROM endpoints
			WHERE id = ANY ($1::uuid[]) AND (failure_streak > 0 OR id = ANY ($2::uuid[]))
			ORDER BY id FOR NO KEY UPDATE`, uuids(r.Streaks), uuids(r.Failed)).Query(func(rows pgx.Rows) error {
			var id string
			var st webhooks.Streak
			var since pgtype.Timestamptz
			_, err := pgx.ForEachRow(rows, []any{&id, &st.Length, &since}, func() error {
				st.Since = fromTS(since)
				f.Streaks[id] = st
				return nil
			})
			return err
		})
	}
	queueRecords(&b, r.Records)
	if len(ends) > 0 {
		queueReleases(&b, r.Records)
	}
	if r.Limit > 0 {
		cap := r.Cap
		if cap <= 0 {
			cap = math.MaxInt32 // no cap: every candidate fits
		} else {
			b.Queue(`SELECT endpoint_id, count(*) FROM queue WHERE lease_expires > $1 GROUP BY endpoint_id`, ts(r.Now)).Query(func(rows pgx.Rows) error {
				var id string
				var n int
				_, err := pgx.ForEachRow(rows, []any{&id, &n}, func() error { f.Held[id] = n; return nil })
				return err
			})
		}
		b.Queue(qParked, ts(r.Now), cap, r.Limit).Query(collectCandidates(&f.Parked, true))
		queueScan(&b, r.Now, nil, r.Chunk, &f.Due)
	}
	if err := t.conn.SendBatch(ctx, &b).Close(); err != nil {
		return nil, err
	}
	f.More = len(f.Due) == r.Chunk && r.Limit > 0
	if len(f.Due) > 0 {
		f.Cursor = f.Due[len(f.Due)-1]
	}
	return f, nil
}

// Scan implements driver.QueueTx.
func (t *queueTx) Scan(ctx context.Context, now time.Time, after driver.Candidate, n int) ([]driver.Candidate, driver.Candidate, error) {
	var b pgx.Batch
	var cands []driver.Candidate
	queueScan(&b, now, &after, n, &cands)
	if err := t.conn.SendBatch(ctx, &b).Close(); err != nil {
		return nil, after, err
	}
	if len(cands) > 0 {
		after = cands[len(cands)-1]
	}
	return cands, after, nil
}

// queueScan queues in b the read of up to n due rows of the queue (those
// whose claim lapsed too), after the candidate after if set, locked.
func queueScan(b *pgx.Batch, now time.Time, after *driver.Candidate, n int, into *[]driver.Candidate) {
	var afterDue any
	var afterID *string
	if after != nil {
		afterDue, afterID = ts(after.Due), &after.ID
	}
	b.Queue(`SELECT delivery_id, endpoint_id, due FROM queue
		WHERE due IS NOT NULL AND NOT parked AND NOT waiting AND due <= $1 AND (lease_expires IS NULL OR lease_expires <= $1)
		AND ($3::timestamptz IS NULL OR (due, delivery_id) > ($3, $4::uuid))
		ORDER BY due, delivery_id LIMIT $2
		FOR UPDATE SKIP LOCKED`, ts(now), n, afterDue, afterID).Query(collectCandidates(into, false))
}

// collectCandidates reads rows of delivery_id, endpoint_id and due into
// *into.
func collectCandidates(into *[]driver.Candidate, parked bool) func(pgx.Rows) error {
	return func(rows pgx.Rows) error {
		var c driver.Candidate
		var due time.Time
		_, err := pgx.ForEachRow(rows, []any{&c.ID, &c.EndpointID, &due}, func() error {
			c.Due, c.Parked = due.UTC(), parked
			*into = append(*into, c)
			return nil
		})
		return err
	}
}

// writeClaim sends a claim's writes with the COMMIT, and returns the
// claims.
func writeClaim(ctx context.Context, conn *pgx.Conn, w *driver.QueueWrites) ([]*webhooks.Claim, error) {
	var b pgx.Batch
	if n := len(w.Streaks); n > 0 {
		ids, lengths, since := make([]string, n), make([]int32, n), make([]*time.Time, n)
		for i, u := range w.Streaks {
			ids[i], lengths[i], since[i] = u.EndpointID, int32(u.Length), timePtr(u.Since)
		}
		b.Queue(`UPDATE endpoints e SET failure_streak = s.length, failing_since = s.since
			FROM unnest($1::uuid[], $2::int[], $3::timestamptz[]) AS s(id, length, since) WHERE e.id = s.id`,
			uuids(ids), lengths, since)
	}
	if err := queueOutbox(&b, w.Outbox); err != nil {
		return nil, err
	}
	if len(w.Park) > 0 {
		b.Queue(`UPDATE queue SET parked = true WHERE delivery_id = ANY ($1::uuid[]) AND NOT parked`, uuids(w.Park))
	}
	var claims []*webhooks.Claim
	if len(w.Claim) > 0 {
		queueClaim(&b, w, &claims)
	}
	b.Queue(`COMMIT`)
	return claims, conn.SendBatch(ctx, &b).Close()
}

// queueClaim queues in b the statement that claims w.Claim within the
// cap, and parks what exceeds it.
//
// The endpoints' advisory locks (in id order, so claimers cannot deadlock)
// are taken by one statement, and the next one, which sees every claim
// committed before the locks, counts the claims again and takes only what
// fits: claimers of one endpoint take turns, for these two statements.
func queueClaim(b *pgx.Batch, w *driver.QueueWrites, claims *[]*webhooks.Claim) {
	selected := claimedSelect
	if w.Traceparents {
		selected = claimedSelectTraced
	}
	ids := uuids(w.Claim)
	if w.Cap <= 0 {
		b.Queue(`WITH claimed AS (
				UPDATE queue q SET lease_token = $2, lease_expires = $3, parked = false
				WHERE q.delivery_id = ANY ($1::uuid[])
				RETURNING q.delivery_id, q.due
			) `+selected, ids, w.Token, ts(w.LeaseUntil)).Query(collectInto(claims, w))
		return
	}
	b.Queue(`SELECT count(pg_advisory_xact_lock($1, hashtext(e::text))) FROM (
			SELECT DISTINCT endpoint_id AS e FROM queue WHERE delivery_id = ANY ($2::uuid[]) ORDER BY 1) l`, lockClaim, ids)
	b.Queue(`WITH c AS (
			SELECT q.delivery_id AS id, q.endpoint_id, w.ord FROM unnest($1::uuid[]) WITH ORDINALITY AS w(id, ord)
			JOIN queue q ON q.delivery_id = w.id
		), held AS (
			SELECT endpoint_id, count(*) AS n FROM queue
			WHERE endpoint_id IN (SELECT endpoint_id FROM c) AND lease_expires > $4 GROUP BY endpoint_id
		), ranked AS (
			SELECT c.id, coalesce(held.n, 0) + row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.ord) AS nth
			FROM c LEFT JOIN held USING (endpoint_id)
		), parked AS (
			UPDATE queue q SET parked = true FROM ranked
			WHERE q.delivery_id = ranked.id AND ranked.nth > $5 AND NOT q.parked
		), claimed AS (
			UPDATE queue q SET lease_token = $2, lease_expires = $3, parked = false FROM ranked
			WHERE q.delivery_id = ranked.id AND ranked.nth <= $5
			RETURNING q.delivery_id, q.due
		) `+selected, ids, w.Token, ts(w.LeaseUntil), ts(w.Now), w.Cap).Query(collectInto(claims, w))
}

func collectInto(claims *[]*webhooks.Claim, w *driver.QueueWrites) func(pgx.Rows) error {
	return func(rows pgx.Rows) error {
		var err error
		*claims, err = collectClaims(rows, w.Token, w.Traceparents)
		return err
	}
}

// claimedSelect turns the queue rows of a statement's "claimed" CTE into
// claims with their deliveries and endpoints, oldest due first.
var claimedSelect = `SELECT ` + deliveryColsOf("d") + `, ` + prefixed("e", endpointCols) + `
	FROM claimed c JOIN deliveries d ON d.id = c.delivery_id JOIN endpoints e ON e.id = d.endpoint_id
	ORDER BY c.due, c.delivery_id`

// claimedSelectTraced is claimedSelect with each event's traceparent, when
// tracing is on: off, a claim reads no event.
var claimedSelectTraced = `SELECT ` + deliveryColsOf("d") + `, ` + prefixed("e", endpointCols) + `, ev.traceparent
	FROM claimed c JOIN deliveries d ON d.id = c.delivery_id JOIN endpoints e ON e.id = d.endpoint_id
	JOIN events ev ON ev.id = d.event_id
	ORDER BY c.due, c.delivery_id`

// qParked takes, for each endpoint with parked deliveries, as many of them,
// oldest due first, as the endpoint has free slots under the cap ($2) at $1,
// locking them; $3 bounds the total. The endpoints are found with a loose
// index scan: one probe each, however deep its queue.
const qParked = `WITH RECURSIVE ep(id) AS (
		SELECT (SELECT endpoint_id FROM queue WHERE parked ORDER BY endpoint_id LIMIT 1)
		UNION ALL
		SELECT (SELECT endpoint_id FROM queue WHERE parked AND endpoint_id > ep.id ORDER BY endpoint_id LIMIT 1)
		FROM ep WHERE ep.id IS NOT NULL
	), free AS (
		SELECT ep.id, $2 - (SELECT count(*) FROM queue h WHERE h.endpoint_id = ep.id AND h.lease_expires > $1) AS n
		FROM ep WHERE ep.id IS NOT NULL
	)
	SELECT x.delivery_id, x.endpoint_id, x.due FROM free, LATERAL (
		SELECT delivery_id, endpoint_id, due FROM queue
		WHERE endpoint_id = free.id AND parked
		ORDER BY due, delivery_id LIMIT greatest(free.n, 0) FOR UPDATE SKIP LOCKED) x
	WHERE free.n > 0
	ORDER BY x.due, x.delivery_id LIMIT $3`

// collectClaims reads the rows of claimedSelect (claimedSelectTraced, if
// traced) into claims. Claims of one endpoint share its *Endpoint.
func collectClaims(rows pgx.Rows, token string, traced bool) ([]*webhooks.Claim, error) {
	endpoints := map[string]*webhooks.Endpoint{}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*webhooks.Claim, error) {
		var ds deliveryScan
		var es endpointScan
		dest := append(ds.dest(), es.dest()...)
		tp := ""
		if traced {
			var traceparent pgtype.Text // declared here: untraced claims do not allocate it
			if err := row.Scan(append(dest, &traceparent)...); err != nil {
				return nil, err
			}
			tp = traceparent.String
		} else if err := row.Scan(dest...); err != nil {
			return nil, err
		}
		d := ds.delivery()
		e, ok := endpoints[d.EndpointID]
		if !ok {
			e = es.endpoint()
			endpoints[d.EndpointID] = e
		}
		return &webhooks.Claim{Delivery: d, Endpoint: e, Token: token, Traceparent: tp}, nil
	})
}

// queueEngineSettings queues in b the settings of the engine's
// transactions (claims, attempt records), in one statement: they commit
// without waiting for the WAL flush (see qLazyCommit), and their plans are
// the hot path's (see hotPathSettings).
func queueEngineSettings(b *pgx.Batch) {
	b.Queue(`SELECT set_config('synchronous_commit', 'off', true), ` + hotPathSettings)
}

// qLazyCommit makes the rest of a transaction commit without waiting for
// the WAL flush. Only transactions whose last commits a database crash may
// lose at no cost commit so: the engine's bookkeeping (claims, attempt
// records and the streaks they make, deferrals, releases), where a lost
// one repeats an attempt, leaves a streak a batch behind or a claim to
// lapse, and
// never loses an event, and the purge, which a lost one makes again. They
// then no longer wait for the disk.
const qLazyCommit = `SELECT set_config('synchronous_commit', 'off', true)`

// lazyCommit runs qLazyCommit in tx.
func lazyCommit(ctx context.Context, tx pgx.Tx) error {
	_, err := tx.Exec(ctx, qLazyCommit)
	return err
}

// queueRecords queues in b the statements that record records.

// queueRecords queues in b the statements that store records, and sets
// each record's Lapsed and Exhausted once b has run.
//
// The first statement locks the deliveries in id order, then their queue
// rows: the order every statement that changes several deliveries uses. A
// record counts only if its token still holds the claim, and for a
// delivery listed twice only the first such record counts, since it
// clears the claim. The queue row goes when the delivery is no longer
// pending, and otherwise waits for the next attempt.
func queueRecords(b *pgx.Batch, records []*webhooks.AttemptRecord) {
	for _, r := range records {
		r.Lapsed = true // until the statement says it counted
	}
	// A record that names no delivery cannot match one.
	valid := slices.DeleteFunc(slices.Clone(records), func(r *webhooks.AttemptRecord) bool { return !webhooks.ValidID(r.Attempt.DeliveryID) })
	if len(valid) == 0 {
		return
	}
	n := len(valid)
	var (
		ids, tokens, statuses = make([]string, n), make([]string, n), make([]string, n)
		numbers, respStatus   = make([]int32, n), make([]*int32, n)
		reasons, errs         = make([]*string, n), make([]*string, n)
		next, start           = make([]*time.Time, n), make([]*time.Time, n)
		durations             = make([]int64, n)
		bodies                = make([][]byte, n)
		manual, overrides     = make([]bool, n), make([]bool, n)
	)
	for i, r := range valid {
		a, t := r.Attempt, r.Transition
		ids[i], tokens[i], statuses[i] = a.DeliveryID, r.Token, t.Status
		numbers[i], respStatus[i] = int32(a.Number), int4Ptr(a.ResponseStatus)
		reasons[i], errs[i] = textPtr(t.Reason), textPtr(validText(a.Error))
		next[i], start[i] = timePtr(t.NextAttemptAt), timePtr(a.StartedAt)
		durations[i], bodies[i], manual[i] = a.Duration.Milliseconds(), []byte(a.ResponseBody), a.Manual
		overrides[i] = t.OverridesEnd()
		if bodies[i] == nil {
			bodies[i] = []byte{}
		}
	}
	deliveries := uuids(ids)
	b.Queue(`WITH l AS (SELECT id FROM deliveries WHERE id = ANY ($1::uuid[]) ORDER BY id FOR UPDATE)
		SELECT q.delivery_id FROM queue q JOIN l ON q.delivery_id = l.id ORDER BY q.delivery_id FOR UPDATE OF q`, deliveries)
	// While the delivery is pending the attempt decides its state; if it
	// ended meanwhile, only a transition that overrides an end does
	// (webhooks.Transition.OverridesEnd).
	b.Queue(`WITH r AS (
				SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[], $5::text[]::delivery_status[], $6::text[], $7::timestamptz[],
					$8::timestamptz[], $9::bigint[], $10::bytea[], $11::text[], $12::bool[], $13::bool[])
					WITH ORDINALITY AS r(delivery_id, token, number, response_status, status, reason, next_attempt_at,
						started_at, duration_ms, response_body, error, manual, overrides, ord)
			), m AS (
				SELECT DISTINCT ON (r.delivery_id) r.* FROM r JOIN queue q ON q.delivery_id = r.delivery_id AND q.lease_token = r.token
				ORDER BY r.delivery_id, r.ord
			), u AS (
				UPDATE deliveries d SET
					attempt_count = greatest(d.attempt_count, m.number),
					last_response_status = m.response_status,
					status = CASE WHEN d.status = 'pending' OR m.overrides THEN m.status ELSE d.status END,
					reason = CASE WHEN d.status = 'pending' OR m.overrides THEN m.reason ELSE d.reason END,
					next_attempt_at = CASE WHEN d.status = 'pending' OR m.overrides THEN m.next_attempt_at ELSE d.next_attempt_at END,
					manual = false
				FROM m WHERE d.id = m.delivery_id
				RETURNING d.id, d.status, d.next_attempt_at, d.body_n IS NULL AS erased
			), ended AS (
				DELETE FROM queue q USING u WHERE q.delivery_id = u.id AND u.status <> 'pending'
			), rescheduled AS (
				UPDATE queue q SET due = u.next_attempt_at, since = u.next_attempt_at, parked = false, lease_token = NULL, lease_expires = NULL
				FROM u WHERE q.delivery_id = u.id AND u.status = 'pending'
			), attempted AS (
				INSERT INTO attempts (delivery_id, number, started_at, duration_ms, response_status, response_body, error, manual)
				SELECT m.delivery_id, m.number, m.started_at, m.duration_ms, m.response_status,
					CASE WHEN u.erased THEN ''::bytea ELSE m.response_body END, m.error, m.manual
				FROM m JOIN u ON u.id = m.delivery_id
				ON CONFLICT DO NOTHING
			)
			SELECT m.ord, u.status FROM m JOIN u ON u.id = m.delivery_id`,
		deliveries, tokens, numbers, respStatus, statuses, reasons, next, start, durations, bodies, errs, manual, overrides).
		Query(func(rows pgx.Rows) error {
			var ord int
			var status string
			_, err := pgx.ForEachRow(rows, []any{&ord, &status}, func() error {
				r := valid[ord-1]
				r.Lapsed = false
				r.Exhausted = r.Transition.Status == webhooks.DeliveryFailedPermanently && status == webhooks.DeliveryFailedPermanently
				return nil
			})
			return err
		})
}

// chainsOf returns the chains of the records' deliveries.
func chainsOf(records []*webhooks.AttemptRecord) []webhooks.OrderKey {
	var ds []*webhooks.Delivery
	for _, r := range records {
		if r.Delivery != nil {
			ds = append(ds, r.Delivery)
		}
	}
	return webhooks.Chains(ds)
}

// queueReleases queues in b, after the records' statement, the one that
// releases the delivery waiting behind each delivery of a chain that the
// records ended: it is due then.
func queueReleases(b *pgx.Batch, records []*webhooks.AttemptRecord) {
	var ids []string
	var at []*time.Time
	for _, r := range records {
		if r.Chained() {
			ids, at = append(ids, r.Delivery.ID), append(at, timePtr(r.Attempt.StartedAt.Add(r.Attempt.Duration)))
		}
	}
	b.Queue(`WITH ended AS (
			SELECT d.id, r.at FROM deliveries d JOIN unnest($1::uuid[], $2::timestamptz[]) AS r(id, at) ON r.id = d.id
			WHERE d.status <> 'pending'
		), released AS (
			UPDATE deliveries d SET waiting_for = NULL FROM ended
			WHERE d.waiting_for = ended.id AND d.status = 'pending'
			RETURNING d.id, ended.at
		)
		UPDATE queue q SET waiting = false, since = released.at FROM released WHERE q.delivery_id = released.id`, uuids(ids), at)
}

// validText makes s storable as text: an attempt's error may quote what a
// server sent, and an attempt that cannot be recorded would be made again.
func validText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// ReleaseClaims implements driver.Queue. A released delivery is due
// again at once; one that ended during the attempt (its endpoint was
// disabled or deleted) leaves the queue.
func (s *Store) ReleaseClaims(ctx context.Context, token string, ids []string) error {
	ids = validIDs(ids)
	if len(ids) == 0 {
		return nil
	}
	return s.inTx(ctx, func(tx *txn) error {
		if err := lazyCommit(ctx, tx); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `WITH l AS (
				SELECT delivery_id, due FROM queue WHERE lease_token = $1 AND delivery_id = ANY ($2::uuid[]) ORDER BY delivery_id FOR UPDATE
			), ended AS (
				DELETE FROM queue q USING l WHERE q.delivery_id = l.delivery_id AND l.due IS NULL
			)
			UPDATE queue q SET lease_token = NULL, lease_expires = NULL
			FROM l WHERE q.delivery_id = l.delivery_id AND l.due IS NOT NULL`, token, uuids(ids))
		return err
	})
}

// DeferClaims implements driver.Queue: each queue row the token still
// holds is due again at its time, and so is its delivery's next attempt; a
// delivery that ended meanwhile leaves the queue (as ReleaseClaims).
func (s *Store) DeferClaims(ctx context.Context, deferrals []webhooks.Deferral) error {
	n := len(deferrals)
	ids, tokens, until := make([]string, 0, n), make([]string, 0, n), make([]*time.Time, 0, n)
	for _, d := range deferrals {
		if webhooks.ValidID(d.DeliveryID) {
			ids, tokens, until = append(ids, d.DeliveryID), append(tokens, d.Token), append(until, timePtr(d.Until))
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return s.inTx(ctx, func(tx *txn) error {
		if err := lazyCommit(ctx, tx); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `WITH r AS (
				SELECT * FROM unnest($1::uuid[], $2::text[], $3::timestamptz[]) AS r(id, token, until)
			), d AS (
				SELECT d.id, d.status = 'pending' AS pending FROM deliveries d JOIN r ON r.id = d.id ORDER BY d.id FOR UPDATE OF d
			), l AS (
				SELECT q.delivery_id, r.until, d.pending FROM queue q JOIN r ON r.id = q.delivery_id AND q.lease_token = r.token
				JOIN d ON d.id = q.delivery_id ORDER BY q.delivery_id FOR UPDATE OF q
			), moved AS (
				UPDATE deliveries x SET next_attempt_at = l.until FROM l WHERE x.id = l.delivery_id AND l.pending
			), ended AS (
				DELETE FROM queue q USING l WHERE q.delivery_id = l.delivery_id AND NOT l.pending
			)
			UPDATE queue q SET due = l.until, parked = false, lease_token = NULL, lease_expires = NULL
			FROM l WHERE q.delivery_id = l.delivery_id AND l.pending`, uuids(ids), tokens, until)
		return err
	})
}

// NextScheduled implements driver.Queue.
func (s *Store) NextScheduled(ctx context.Context, now time.Time) (time.Time, error) {
	var next *time.Time
	err := s.pool.QueryRow(ctx, `SELECT min(due) FROM queue
		WHERE due IS NOT NULL AND NOT parked AND NOT waiting AND due > $1`, ts(now)).Scan(&next)
	if err != nil || next == nil {
		return read(time.Time{}, err)
	}
	return next.UTC(), nil
}
