package postgres

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/factuarea/webhooks"
)

// dueWhere selects the deliveries a claim may take at $1: pending, due, and
// not held by an unexpired claim. $2 lists endpoints to skip.
const dueWhere = `d.status = 'pending' AND d.next_attempt_at <= $1 AND (d.lease_expires IS NULL OR d.lease_expires <= $1)
	AND d.endpoint_id <> ALL ($2::uuid[])`

// claimedSelect turns the deliveries of a statement's "claimed" CTE into
// claims with their endpoints, oldest due first.
var claimedSelect = `SELECT ` + prefixed("c", deliveryCols) + `, ` + prefixed("e", endpointCols) + `
	FROM claimed c JOIN endpoints e ON e.id = c.endpoint_id
	ORDER BY c.next_attempt_at, c.id`

// ClaimDeliveries implements webhooks.Store.
//
// FOR UPDATE SKIP LOCKED makes concurrent claimers, in this process or
// another, take disjoint rows without waiting for each other; a row whose
// claim committed after a claimer's snapshot is re-checked when it is
// locked, and no longer qualifies. So a delivery has one valid claim at a
// time.
func (s *Store) ClaimDeliveries(ctx context.Context, r webhooks.ClaimRequest) ([]*webhooks.Claim, error) {
	var claims []*webhooks.Claim
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := recordAttempts(ctx, tx, r.Records); err != nil || r.Limit <= 0 {
			return err
		}
		var err error
		if r.PerEndpoint > 0 {
			claims, err = claimCapped(ctx, tx, r)
			return err
		}
		rows, err := tx.Query(ctx, `WITH picked AS (
				SELECT d.id FROM deliveries d WHERE `+dueWhere+`
				ORDER BY d.next_attempt_at, d.id LIMIT $3
				FOR UPDATE SKIP LOCKED
			), claimed AS (
				UPDATE deliveries d SET lease_token = $4, lease_expires = $5 FROM picked WHERE d.id = picked.id
				RETURNING d.*
			) `+claimedSelect,
			ts(r.Now), []string{}, r.Limit, r.Token, ts(r.LeaseUntil))
		if err != nil {
			return err
		}
		claims, err = collectClaims(rows, r.Token, nil)
		return err
	})
	return claims, err
}

// collectClaims reads the rows of claimedSelect into claims, appended to
// claims. Claims of one endpoint share its *Endpoint.
func collectClaims(rows pgx.Rows, token string, claims []*webhooks.Claim) ([]*webhooks.Claim, error) {
	endpoints := map[string]*webhooks.Endpoint{}
	for _, c := range claims {
		endpoints[c.Endpoint.ID] = c.Endpoint
	}
	return pgx.AppendRows(claims, rows, func(row pgx.CollectableRow) (*webhooks.Claim, error) {
		var ds deliveryScan
		var es endpointScan
		if err := row.Scan(append(ds.dest(), es.dest()...)...); err != nil {
			return nil, err
		}
		d := ds.delivery()
		e, ok := endpoints[d.EndpointID]
		if !ok {
			e = es.endpoint()
			endpoints[d.EndpointID] = e
		}
		return &webhooks.Claim{Delivery: d, Endpoint: e, Token: token}, nil
	})
}

// claimCapped claims under the per-endpoint cap, counted over every
// claimer on the database. It scans due deliveries in order, a chunk at a
// time, and for each chunk:
//
//  1. Locks candidates with SKIP LOCKED, skipping endpoints already at their
//     cap, and scanning more rows than the batch needs, since endpoints may
//     reach their cap within it.
//  2. Takes a lock per candidate endpoint, held to commit, so that claimers
//     of one endpoint take turns. The first chunk waits for them, in
//     endpoint id order, so claimers cannot deadlock (and the wait is one
//     claim transaction, milliseconds). Later chunks, which would take
//     locks out of that order, only try, and skip an endpoint another
//     claimer holds, as SKIP LOCKED skips its rows.
//  3. Counts the endpoints' claims again, now that no one else can add to
//     them, and claims the oldest candidates each endpoint has room for.
//     This statement starts after the locks are held, so at READ COMMITTED
//     it sees every claim committed before them.
//
// While the batch has room, the next chunk continues after this one and
// skips the endpoints that left candidates behind (at their cap, or held by
// another claimer): so a deep backlog on one endpoint costs a chunk, and
// cannot keep other endpoints' due deliveries out of a batch with room for
// them. Each such chunk leaves out at least one more endpoint, so there are
// no more chunks than endpoints with due work. Candidates left out stay
// locked until commit, and other claimers skip them for that long.
//
// Claimers of the same endpoints thus run one at a time; a strict cap needs
// that, and a claim is short next to the attempts it feeds.
func claimCapped(ctx context.Context, tx pgx.Tx, r webhooks.ClaimRequest) ([]*webhooks.Claim, error) {
	exclude := []string{} // endpoints that left candidates behind (never NULL: <> ALL (NULL) is never true)
	var claims []*webhooks.Claim
	var afterDue any // the chunk cursor: (next_attempt_at, id) of the last row scanned
	var afterID string
	for chunk := 0; len(claims) < r.Limit; chunk++ {
		want := r.Limit - len(claims)
		scan := want * 4
		rows, err := tx.Query(ctx, `SELECT d.id, d.endpoint_id, d.next_attempt_at FROM deliveries d
			WHERE `+dueWhere+`
			AND d.endpoint_id NOT IN (
				SELECT endpoint_id FROM deliveries WHERE lease_expires > $1 GROUP BY endpoint_id HAVING count(*) >= $4)
			AND ($5::timestamptz IS NULL OR (d.next_attempt_at, d.id) > ($5, $6::uuid))
			ORDER BY d.next_attempt_at, d.id LIMIT $3
			FOR UPDATE OF d SKIP LOCKED`,
			ts(r.Now), exclude, scan, r.PerEndpoint, afterDue, textPtr(afterID))
		if err != nil {
			return nil, err
		}
		var ids, candEndpoints []string
		for rows.Next() {
			var id, endpointID string
			var due time.Time
			if err := rows.Scan(&id, &endpointID, &due); err != nil {
				rows.Close()
				return nil, err
			}
			ids, candEndpoints = append(ids, id), append(candEndpoints, endpointID)
			afterDue, afterID = due, id
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(ids) == 0 {
			return claims, err
		}
		endpoints := slices.Clone(candEndpoints)
		slices.Sort(endpoints)
		endpoints = slices.Compact(endpoints)
		// Advisory locks stack: one this transaction took in an earlier
		// chunk is simply taken again.
		lock := `SELECT e FROM unnest($2::text[]) AS e, pg_advisory_xact_lock($1, hashtext(e))`
		if chunk > 0 {
			lock = `SELECT e FROM unnest($2::text[]) AS e WHERE pg_try_advisory_xact_lock($1, hashtext(e))`
		}
		rows, err = tx.Query(ctx, lock, lockClaim, endpoints)
		if err != nil {
			return nil, err
		}
		locked, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, err
		}
		var lockedIDs, lockedEndpoints []string
		for i, id := range ids {
			if slices.Contains(locked, candEndpoints[i]) {
				lockedIDs, lockedEndpoints = append(lockedIDs, id), append(lockedEndpoints, candEndpoints[i])
			}
		}
		before := len(claims)
		if len(lockedIDs) > 0 {
			rows, err = tx.Query(ctx, `WITH held AS (
					SELECT endpoint_id, count(*) AS n FROM deliveries
					WHERE endpoint_id = ANY ($3::uuid[]) AND lease_expires > $4 GROUP BY endpoint_id
				), cand AS (
					SELECT * FROM unnest($1::uuid[], $2::uuid[]) WITH ORDINALITY AS c(id, endpoint_id, ord)
				), ranked AS (
					SELECT cand.id, cand.ord,
						coalesce(held.n, 0) + row_number() OVER (PARTITION BY cand.endpoint_id ORDER BY cand.ord) AS nth
					FROM cand LEFT JOIN held USING (endpoint_id)
				), picked AS (
					SELECT id FROM ranked WHERE nth <= $5 ORDER BY ord LIMIT $6
				), claimed AS (
					UPDATE deliveries d SET lease_token = $7, lease_expires = $8 FROM picked WHERE d.id = picked.id
					RETURNING d.*
				) `+claimedSelect,
				lockedIDs, lockedEndpoints, locked, ts(r.Now), r.PerEndpoint, want, r.Token, ts(r.LeaseUntil))
			if err != nil {
				return nil, err
			}
			if claims, err = collectClaims(rows, r.Token, claims); err != nil {
				return nil, err
			}
		}
		if len(ids) < scan {
			break // the scan reached the end of what is due
		}
		// Skip, from now on, the endpoints that left candidates behind.
		picked := map[string]bool{}
		for _, c := range claims[before:] {
			picked[c.Delivery.ID] = true
		}
		for i, id := range ids {
			if !picked[id] && !slices.Contains(exclude, candEndpoints[i]) {
				exclude = append(exclude, candEndpoints[i])
			}
		}
	}
	return claims, nil
}

// RecordAttempts implements webhooks.Store.
//
// One statement records the whole batch. The deliveries are locked in id
// order first, the order every statement that changes several deliveries
// uses. A record counts only if its token still holds the claim (fencing: a
// claim that lapsed and was taken by another worker records nothing), and
// for a delivery listed twice only the first such record counts, since it
// clears the claim (as the SQLite store's record-by-record loop does).
// While the delivery is pending the attempt decides its state; if its
// endpoint was disabled or deleted during the attempt, the delivery already
// ended failed, and only a success still changes that.
func (s *Store) RecordAttempts(ctx context.Context, records []*webhooks.AttemptRecord) error {
	if len(records) == 0 {
		return nil
	}
	return s.inTx(ctx, func(tx pgx.Tx) error { return recordAttempts(ctx, tx, records) })
}

// recordAttempts is RecordAttempts in tx.
func recordAttempts(ctx context.Context, tx pgx.Tx, records []*webhooks.AttemptRecord) error {
	// A record that names no delivery cannot match one.
	records = slices.DeleteFunc(slices.Clone(records), func(r *webhooks.AttemptRecord) bool { return !webhooks.ValidID(r.Attempt.DeliveryID) })
	if len(records) == 0 {
		return nil
	}
	n := len(records)
	var (
		ids, tokens, statuses = make([]string, n), make([]string, n), make([]string, n)
		numbers, respStatus   = make([]int32, n), make([]*int32, n)
		reasons, errs         = make([]*string, n), make([]*string, n)
		next, updated, start  = make([]*time.Time, n), make([]*time.Time, n), make([]*time.Time, n)
		durations             = make([]int64, n)
		bodies                = make([][]byte, n)
		manual                = make([]bool, n)
	)
	for i, r := range records {
		a, t := r.Attempt, r.Transition
		ids[i], tokens[i], statuses[i] = a.DeliveryID, r.Token, t.Status
		numbers[i], respStatus[i] = int32(a.Number), int4Ptr(a.ResponseStatus)
		reasons[i], errs[i] = textPtr(t.Reason), textPtr(validText(a.Error))
		next[i], updated[i], start[i] = timePtr(t.NextAttemptAt), timePtr(a.StartedAt.Add(a.Duration)), timePtr(a.StartedAt)
		durations[i], bodies[i], manual[i] = a.Duration.Milliseconds(), []byte(a.ResponseBody), a.Manual
		if bodies[i] == nil {
			bodies[i] = []byte{}
		}
	}
	_, err := tx.Exec(ctx, `WITH r AS (
				SELECT * FROM unnest($1::uuid[], $2::text[], $3::int[], $4::int[], $5::text[], $6::text[], $7::timestamptz[],
					$8::timestamptz[], $9::timestamptz[], $10::bigint[], $11::bytea[], $12::text[], $13::bool[])
					WITH ORDINALITY AS r(delivery_id, token, number, response_status, status, reason, next_attempt_at,
						updated, started_at, duration_ms, response_body, error, manual, ord)
			), l AS (
				SELECT id, lease_token FROM deliveries WHERE id IN (SELECT delivery_id FROM r) ORDER BY id FOR UPDATE
			), m AS (
				SELECT DISTINCT ON (r.delivery_id) r.* FROM r JOIN l ON l.id = r.delivery_id AND l.lease_token = r.token
				ORDER BY r.delivery_id, r.ord
			), u AS (
				UPDATE deliveries d SET
					attempt_count = greatest(d.attempt_count, m.number),
					last_response_status = m.response_status,
					status = CASE WHEN d.status = 'pending' OR m.status = 'delivered' THEN m.status ELSE d.status END,
					reason = CASE WHEN d.status = 'pending' OR m.status = 'delivered' THEN m.reason ELSE d.reason END,
					next_attempt_at = CASE WHEN d.status = 'pending' OR m.status = 'delivered' THEN m.next_attempt_at ELSE d.next_attempt_at END,
					manual = false, lease_token = NULL, lease_expires = NULL, updated = m.updated
				FROM m WHERE d.id = m.delivery_id AND d.lease_token = m.token
				RETURNING d.id
			)
			INSERT INTO attempts (delivery_id, number, started_at, duration_ms, response_status, response_body, error, manual)
			SELECT m.delivery_id, m.number, m.started_at, m.duration_ms, m.response_status, m.response_body, m.error, m.manual
			FROM m JOIN u ON u.id = m.delivery_id
			ON CONFLICT DO NOTHING`,
		ids, tokens, numbers, respStatus, statuses, reasons, next, updated, start, durations, bodies, errs, manual)
	return err
}

// validText makes s storable as text: an attempt's error may quote what a
// server sent, and an attempt that cannot be recorded would be made again.
func validText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// ReleaseClaims implements webhooks.Store.
func (s *Store) ReleaseClaims(ctx context.Context, token string, ids []string) error {
	ids = validIDs(ids)
	if len(ids) == 0 {
		return nil
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE deliveries d SET lease_token = NULL, lease_expires = NULL
			FROM (SELECT id FROM deliveries WHERE lease_token = $1 AND id = ANY ($2::uuid[]) ORDER BY id FOR UPDATE) l
			WHERE d.id = l.id AND d.lease_token = $1`, token, ids)
		return err
	})
}

// NextScheduled implements webhooks.Store.
func (s *Store) NextScheduled(ctx context.Context, now time.Time) (time.Time, error) {
	var next *time.Time
	err := s.pool.QueryRow(ctx, `SELECT min(next_attempt_at) FROM deliveries WHERE status = 'pending' AND next_attempt_at > $1`, ts(now)).Scan(&next)
	if err != nil || next == nil {
		return read(time.Time{}, err)
	}
	return next.UTC(), nil
}
