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
)

// claimedSelect turns the queue rows of a statement's "claimed" CTE into
// claims with their deliveries and endpoints, oldest due first.
var claimedSelect = `SELECT ` + prefixed("d", deliveryCols) + `, ` + prefixed("e", endpointCols) + `
	FROM claimed c JOIN deliveries d ON d.id = c.delivery_id JOIN endpoints e ON e.id = d.endpoint_id
	ORDER BY c.due, c.delivery_id`

// claimedSelectTraced is claimedSelect with each event's traceparent, when
// tracing is on (ClaimRequest.Traceparents): off, a claim reads no event.
var claimedSelectTraced = `SELECT ` + prefixed("d", deliveryCols) + `, ` + prefixed("e", endpointCols) + `, ev.traceparent
	FROM claimed c JOIN deliveries d ON d.id = c.delivery_id JOIN endpoints e ON e.id = d.endpoint_id
	JOIN events ev ON ev.id = d.event_id
	ORDER BY c.due, c.delivery_id`

// Claim sizes.
const (
	// claimChunk is how many due deliveries a claim reads at a time past
	// the first chunk, which is twice what it wants.
	claimChunk = 200
)

// ClaimDeliveries implements delivery.Queue.
//
// FOR UPDATE SKIP LOCKED makes concurrent claimers, in this process or
// another, take disjoint rows without waiting for each other; a row whose
// claim committed after a claimer's snapshot is re-checked when it is
// locked, and no longer qualifies. So a delivery has one valid claim at a
// time.
//
// With a per-endpoint cap, a due delivery whose endpoint holds its cap of
// claims is parked (out of the due index) instead of being read again at
// every claim: a deep backlog on one endpoint is read once, and cannot keep
// other endpoints' due deliveries out of a batch. The parked deliveries are
// the endpoint's queue: each claim takes, oldest first, as many of an
// endpoint's parked deliveries as it has free slots (claims recorded,
// handed back or lapsed). The cap is strict across processes: before
// claiming for an endpoint a claimer takes the endpoint's advisory lock and
// counts its claims again, so claimers of one endpoint take turns, for the
// few statements that need it.
//
// A process's engine claims one transaction at a time, so the claim's
// latency is the engine's pace: it is two round trips. The first pipelined
// batch opens the transaction, stores the records of the attempts that
// ended since the last claim, and reads the candidates (the endpoints'
// queues and the due index); the second locks, claims within the caps,
// parks the rest, and commits.
func (s *Store) ClaimDeliveries(ctx context.Context, r webhooks.ClaimRequest) ([]*webhooks.Claim, error) {
	var claims []*webhooks.Claim
	err := s.pipelined(ctx, func(conn *pgx.Conn) (err error) {
		claims, err = claimDeliveries(ctx, conn, r)
		return err
	})
	// The commit was sent with the last claims, so Hold comes after it: a
	// registration here counts the endpoint's claims in the database, not
	// only in the engine.
	if err == nil && r.Hold != nil {
		for _, c := range claims {
			r.Hold(c.Endpoint.ID)
		}
	}
	return read(claims, err)
}

// claimDeliveries is ClaimDeliveries on conn.
func claimDeliveries(ctx context.Context, conn *pgx.Conn, r webhooks.ClaimRequest) ([]*webhooks.Claim, error) {
	var claims []*webhooks.Claim
	cap := r.PerEndpoint
	if cap <= 0 {
		cap = math.MaxInt32 // no cap: every candidate fits
	}
	chunk := min(claimChunk, max(2*r.Limit, 20))
	var cands []candidate
	var last *candidate // the last row read from the due index: the next chunk's cursor
	scanned := 0        // rows read in the last chunk
	collect := func(due bool) func(pgx.Rows) error {
		return func(rows pgx.Rows) error {
			var c candidate
			_, err := pgx.ForEachRow(rows, []any{&c.id, &c.endpoint, &c.due}, func() error {
				cands = append(cands, c)
				if due {
					scanned++
					last = &cands[len(cands)-1]
				}
				return nil
			})
			return err
		}
	}
	queueScan := func(b *pgx.Batch) {
		scanned = 0
		var afterDue any
		var afterID *string
		if last != nil {
			afterDue, afterID = last.due, &last.id
		}
		b.Queue(`SELECT delivery_id, endpoint_id, due FROM queue
			WHERE due IS NOT NULL AND NOT parked AND due <= $1 AND (lease_expires IS NULL OR lease_expires <= $1)
			AND ($3::timestamptz IS NULL OR (due, delivery_id) > ($3, $4::uuid))
			ORDER BY due, delivery_id LIMIT $2
			FOR UPDATE SKIP LOCKED`, ts(r.Now), chunk, afterDue, afterID).Query(collect(true))
	}

	var b pgx.Batch
	b.Queue(`BEGIN`)
	queueEngineSettings(&b)
	queueRecords(&b, r.Records)
	if r.Limit > 0 {
		b.Queue(qParked, ts(r.Now), cap, r.Limit).Query(collect(false))
		queueScan(&b)
	}
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		return nil, err
	}
	// However the claim ends, at the last round or early when it is full,
	// the records' health follows its commit.
	commit := func(b *pgx.Batch) {
		b.Queue(`COMMIT`)
		queueHealth(b, r.Records)
	}
	// Rounds: claim the candidates within the caps and park what exceeds
	// them; while the batch has room and the due index has more (a chunk
	// all of endpoints at their cap, say), read on.
	for round := 0; ; round++ {
		more := scanned == chunk && round < maxClaimRounds
		b = pgx.Batch{}
		if len(cands) > 0 {
			queueClaim(&b, r, cap, r.Limit-len(claims), cands, &claims)
		}
		cands = nil
		if !more {
			commit(&b)
		}
		if err := conn.SendBatch(ctx, &b).Close(); err != nil {
			return nil, err
		}
		if !more {
			return claims, nil
		}
		if len(claims) >= r.Limit {
			b = pgx.Batch{}
			commit(&b)
			if err := conn.SendBatch(ctx, &b).Close(); err != nil {
				return nil, err
			}
			return claims, nil
		}
		// Past the first chunk, read whole chunks: this is a backlog.
		chunk = claimChunk
		b = pgx.Batch{}
		queueScan(&b)
		if err := conn.SendBatch(ctx, &b).Close(); err != nil {
			return nil, err
		}
	}
}

// maxClaimRounds bounds the chunks of the due index one claim reads past
// the first, so that one transaction stays short.
const maxClaimRounds = 10

// queueClaim queues in b the statements that claim cands (in any order)
// within the caps, limit at most, appending the claims to *claims, and park
// the candidates that exceed their endpoint's cap.
func queueClaim(b *pgx.Batch, r webhooks.ClaimRequest, cap, limit int, cands []candidate, claims *[]*webhooks.Claim) {
	// Oldest due first, wherever it waited: an endpoint's queue or the due
	// index.
	slices.SortFunc(cands, func(a, b candidate) int { return cmpCreated(a.due, a.id, b.due, b.id) })
	ids, endpoints := make([]string, len(cands)), make([]string, len(cands))
	for i, c := range cands {
		ids[i], endpoints[i] = c.id, c.endpoint
	}
	if r.PerEndpoint > 0 {
		// The endpoints' advisory locks (in id order, so claimers cannot
		// deadlock) are taken by one statement, and the next one, which
		// sees every claim committed before the locks, counts the claims
		// again and takes only what fits, up to the limit; what exceeds
		// the cap is parked.
		distinct := slices.Clone(endpoints)
		slices.Sort(distinct)
		distinct = slices.Compact(distinct)
		b.Queue(`SELECT pg_advisory_xact_lock($1, hashtext(e)) FROM unnest($2::text[]) AS e`, lockClaim, distinct)
	}
	selected := claimedSelect
	if r.Traceparents {
		selected = claimedSelectTraced
	}
	b.Queue(`WITH held AS (
			SELECT endpoint_id, count(*) AS n FROM queue
			WHERE endpoint_id = ANY ($2::uuid[]) AND lease_expires > $3 GROUP BY endpoint_id
		), ranked AS (
			SELECT c.id, c.ord, coalesce(held.n, 0) + row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.ord) AS nth
			FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS c(id, endpoint_id, ord)
			LEFT JOIN held USING (endpoint_id)
		), picked AS (
			SELECT id FROM ranked WHERE nth <= $4 ORDER BY ord LIMIT $7
		), parked AS (
			UPDATE queue q SET parked = true FROM ranked
			WHERE q.delivery_id = ranked.id AND ranked.nth > $4 AND NOT q.parked
		), claimed AS (
			UPDATE queue q SET lease_token = $5, lease_expires = $6, parked = false FROM picked
			WHERE q.delivery_id = picked.id
			RETURNING q.delivery_id, q.due
		) `+selected,
		uuids(ids), uuids(endpoints), ts(r.Now), cap, r.Token, ts(r.LeaseUntil), limit).
		Query(func(rows pgx.Rows) error {
			var err error
			*claims, err = collectClaims(rows, r.Token, r.Traceparents, *claims)
			return err
		})
}

// candidate is a delivery a claim may take.
type candidate struct {
	id, endpoint string
	due          time.Time
}

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
// traced) into claims, appended to claims. Claims of one endpoint share
// its *Endpoint.
func collectClaims(rows pgx.Rows, token string, traced bool, claims []*webhooks.Claim) ([]*webhooks.Claim, error) {
	endpoints := map[string]*webhooks.Endpoint{}
	for _, c := range claims {
		endpoints[c.Endpoint.ID] = c.Endpoint
	}
	return pgx.AppendRows(claims, rows, func(row pgx.CollectableRow) (*webhooks.Claim, error) {
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

// RecordAttempts implements delivery.Queue.
//
// Two statements record the whole batch. The first locks the deliveries in
// id order, then their queue rows: the order every statement that changes
// several deliveries uses. A record counts only if its token still holds
// the claim (fencing: a claim that lapsed and was taken by another worker
// records nothing), and for a delivery listed twice only the first such
// record counts, since it clears the claim (as the SQLite store's
// record-by-record loop does). While the delivery is pending the attempt
// decides its state; if it ended during the attempt (its endpoint was
// disabled or deleted), only a transition that overrides an end does
// (webhooks.Transition.OverridesEnd). The queue row goes when the delivery
// is no longer pending, and otherwise waits for the next attempt.
func (s *Store) RecordAttempts(ctx context.Context, records []*webhooks.AttemptRecord) error {
	if len(records) == 0 {
		return nil
	}
	var b pgx.Batch
	b.Queue(`BEGIN`)
	queueEngineSettings(&b)
	queueRecords(&b, records)
	b.Queue(`COMMIT`)
	queueHealth(&b, records)
	return txError(s.pipelined(ctx, func(conn *pgx.Conn) error {
		return conn.SendBatch(ctx, &b).Close()
	}))
}

// queueEngineSettings queues in b the settings of the engine's
// transactions (claims, attempt records): they commit without waiting for
// the WAL flush (see qLazyCommit), and use indexes only (see qIndexOnly).
func queueEngineSettings(b *pgx.Batch) {
	b.Queue(qLazyCommit)
	b.Queue(qIndexOnly)
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
func queueRecords(b *pgx.Batch, records []*webhooks.AttemptRecord) {
	// A record that names no delivery cannot match one.
	records = slices.DeleteFunc(slices.Clone(records), func(r *webhooks.AttemptRecord) bool { return !webhooks.ValidID(r.Attempt.DeliveryID) })
	if len(records) == 0 {
		return
	}
	n := len(records)
	var (
		ids, tokens, statuses = make([]string, n), make([]string, n), make([]string, n)
		numbers, respStatus   = make([]int32, n), make([]*int32, n)
		reasons, errs         = make([]*string, n), make([]*string, n)
		next, updated, start  = make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
		durations             = make([]int64, n)
		bodies                = make([][]byte, n)
		manual, overrides     = make([]bool, n), make([]bool, n)
	)
	for i, r := range records {
		a, t := r.Attempt, r.Transition
		ids[i], tokens[i], statuses[i] = a.DeliveryID, r.Token, t.Status
		numbers[i], respStatus[i] = int32(a.Number), int4Ptr(a.ResponseStatus)
		reasons[i], errs[i] = textPtr(t.Reason), textPtr(validText(a.Error))
		next[i], updated[i], start[i] = timePtr(t.NextAttemptAt), timePtr(a.StartedAt.Add(a.Duration)), timePtr(a.StartedAt)
		durations[i], bodies[i], manual[i] = a.Duration.Milliseconds(), []byte(a.ResponseBody), a.Manual
		overrides[i] = t.OverridesEnd()
		if bodies[i] == nil {
			bodies[i] = []byte{}
		}
	}
	deliveries := uuids(ids)
	b.Queue(`WITH l AS (SELECT id FROM deliveries WHERE id = ANY ($1::uuid[]) ORDER BY id FOR UPDATE)
		SELECT q.delivery_id FROM queue q JOIN l ON q.delivery_id = l.id ORDER BY q.delivery_id FOR UPDATE OF q`, deliveries)
	b.Queue(`WITH r AS (
				SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[], $5::text[], $6::text[], $7::timestamptz[],
					$8::timestamptz[], $9::timestamptz[], $10::bigint[], $11::bytea[], $12::text[], $13::bool[], $14::bool[])
					WITH ORDINALITY AS r(delivery_id, token, number, response_status, status, reason, next_attempt_at,
						updated, started_at, duration_ms, response_body, error, manual, overrides, ord)
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
					manual = false, updated = m.updated
				FROM m WHERE d.id = m.delivery_id
				RETURNING d.id, d.status, d.next_attempt_at
			), ended AS (
				DELETE FROM queue q USING u WHERE q.delivery_id = u.id AND u.status <> 'pending'
			), rescheduled AS (
				UPDATE queue q SET due = u.next_attempt_at, parked = false, lease_token = NULL, lease_expires = NULL
				FROM u WHERE q.delivery_id = u.id AND u.status = 'pending'
			)
			INSERT INTO attempts (delivery_id, number, started_at, duration_ms, response_status, response_body, error, manual)
			SELECT m.delivery_id, m.number, m.started_at, m.duration_ms, m.response_status, m.response_body, m.error, m.manual
			FROM m JOIN u ON u.id = m.delivery_id
			ON CONFLICT DO NOTHING`,
		deliveries, tokens, numbers, respStatus, statuses, reasons, next, updated, start, durations, bodies, errs, manual, overrides)
}

// queueHealth queues in b, after the transaction that records records,
// the transaction that applies them to their endpoints' streaks of
// failures and gives each endpoint's last record its Health (SPEC 14). It
// is a transaction of its own: it locks endpoint rows, which a change to an
// endpoint locks before its deliveries, the reverse of the record's order.
// It has the engine's settings, queued in the same batch: a statement
// queued after a COMMIT alone runs as an implicit transaction with
// synchronous_commit on (qLazyCommit's setting ends with its transaction),
// and during an outage every claim and record waited for a WAL flush.
// Only the endpoints that fail or were failing are locked and written; a
// healthy endpoint's 2xx changes nothing. (A record whose claim lapsed
// counts too: its attempt reached the endpoint.)
func queueHealth(b *pgx.Batch, records []*webhooks.AttemptRecord) {
	valid := slices.DeleteFunc(slices.Clone(records), func(r *webhooks.AttemptRecord) bool { return !webhooks.ValidID(r.EndpointID) })
	steps := webhooks.StreakSteps(valid)
	if len(steps) == 0 {
		return
	}
	n := len(steps)
	ids, reset, trailing, since := make([]string, n), make([]bool, n), make([]int32, n), make([]*time.Time, n)
	byID := make(map[string]webhooks.StreakStep, n)
	for i, st := range steps {
		tail, first := st.Trailing()
		ids[i], reset[i], trailing[i], since[i] = st.EndpointID, st.Reset(), int32(tail), timePtr(first)
		byID[st.EndpointID] = st
	}
	b.Queue(`BEGIN`)
	queueEngineSettings(b)
	b.Queue(`WITH s AS (
			SELECT * FROM unnest($1::uuid[], $2::bool[], $3::int[], $4::timestamptz[]) AS s(id, is_reset, tail, since)
		), old AS (
			SELECT e.id, e.failure_streak, e.failing_since FROM endpoints e JOIN s ON s.id = e.id
			WHERE e.failure_streak > 0 OR s.tail > 0
			ORDER BY e.id FOR UPDATE OF e
		)
		UPDATE endpoints e SET
			failure_streak = CASE WHEN s.is_reset THEN s.tail ELSE old.failure_streak + s.tail END,
			failing_since = CASE WHEN s.is_reset THEN s.since
				WHEN old.failure_streak = 0 THEN s.since ELSE coalesce(old.failing_since, s.since) END
		FROM s, old WHERE e.id = s.id AND old.id = s.id
		RETURNING e.id, old.failure_streak, old.failing_since`,
		uuids(ids), reset, trailing, since).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var id string
			var old int
			var oldSince pgtype.Timestamptz
			if err := rows.Scan(&id, &old, &oldSince); err != nil {
				return err
			}
			st := byID[id]
			h := st.Apply(old, fromTS(oldSince))
			valid[st.Last].Health = &h
		}
		return rows.Err()
	})
	b.Queue(`COMMIT`)
}

// validText makes s storable as text: an attempt's error may quote what a
// server sent, and an attempt that cannot be recorded would be made again.
func validText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// ReleaseClaims implements delivery.Queue. A released delivery is due
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

// DeferClaims implements delivery.Queue: each queue row the token still
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

// NextScheduled implements delivery.Queue.
func (s *Store) NextScheduled(ctx context.Context, now time.Time) (time.Time, error) {
	var next *time.Time
	err := s.pool.QueryRow(ctx, `SELECT min(due) FROM queue
		WHERE due IS NOT NULL AND NOT parked AND due > $1`, ts(now)).Scan(&next)
	if err != nil || next == nil {
		return read(time.Time{}, err)
	}
	return next.UTC(), nil
}

func cmpCreated(at time.Time, aID string, bt time.Time, bID string) int {
	if c := at.Compare(bt); c != 0 {
		return c
	}
	return strings.Compare(aID, bID)
}
