package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/factuarea/webhooks"
	"github.com/factuarea/webhooks/internal/driver"
)

// GroupCommit implements driver.Registrar: one registrar, which waits
// 2 ms under load for its group to grow, since PostgreSQL's work per
// statement and per transaction is most of a small group's, whatever its
// size. A window that followed the commits (as long as the last took,
// 5 ms at most) cost one process flat out a fifth of its deliveries per
// second, its producers waiting on longer groups.
//
// The engine's records of ended attempts wait up to 20 ms for more, for
// the same reason. Nothing waits for them but the API's view of the
// attempts, and a chain's next delivery, whose record goes at once.
//
// Both windows are times the processes that share the schema (Processes):
// each of three processes sees a third of the load, and with one
// process's windows made groups a third the size, and three times the
// transactions per event, each costing about as much.
func (s *Store) GroupCommit() driver.GroupCommit {
	return driver.GroupCommit{Registrars: 1, MaxGroup: 64, Window: 2 * time.Millisecond, RecordWindow: 20 * time.Millisecond,
		Processes: s.Processes}
}

// RegisterGroup implements driver.Registrar, in two round trips whatever
// the group's size: Begin's pipelined batch opens the transaction and
// reads, and the writes go in another, one statement each, with the
// COMMIT.
func (s *Store) RegisterGroup(ctx context.Context, fn func(tx driver.RegisterTx) (*driver.GroupWrites, error)) (*driver.GroupWritten, error) {
	var out *driver.GroupWritten
	err := s.pipelined(ctx, func(conn *pgx.Conn) error {
		w, err := fn(&registerTx{conn: conn})
		if err != nil {
			return err
		}
		out, err = writeGroup(ctx, conn, w)
		return err
	})
	return out, txError(err)
}

// registerTx is a registration group's transaction on its connection.
type registerTx struct{ conn *pgx.Conn }

// Begin implements driver.RegisterTx.
func (t *registerTx) Begin(ctx context.Context, r driver.GroupReads) (*driver.GroupFacts, error) {
	f := &driver.GroupFacts{Keys: map[string]*driver.StoredKey{}}
	var b pgx.Batch
	b.Queue(`BEGIN`)
	b.Queue(qRegistrationStart, lockCatalog)
	for _, key := range r.Keys {
		queueKey(&b, key, f.Keys)
	}
	if len(r.Locks) > 0 {
		b.Queue(`SELECT count(pg_advisory_xact_lock_shared($1, hashtext(o))) FROM unnest($2::text[]) AS o`, lockOwner, r.Locks)
	}
	b.Queue(qVersions).QueryRow(func(row pgx.Row) error { return row.Scan(&f.RoutingVersion, &f.CatalogVersion) })
	f.Owners = queueOwners(&b, r.Owners)
	return f, t.conn.SendBatch(ctx, &b).Close()
}

// ReadOwners implements driver.RegisterTx.
func (t *registerTx) ReadOwners(ctx context.Context, keys []webhooks.OwnersKey) ([]*webhooks.Owners, error) {
	var b pgx.Batch
	out := queueOwners(&b, keys)
	return out, t.conn.SendBatch(ctx, &b).Close()
}

// ReadOwners implements driver.Tx.
func (t *txn) ReadOwners(ctx context.Context, keys []webhooks.OwnersKey) ([]*webhooks.Owners, error) {
	var b pgx.Batch
	out := queueOwners(&b, keys)
	return out, t.SendBatch(ctx, &b).Close()
}

// qVersions reads the versions of routing and of the catalog.
const qVersions = `SELECT (SELECT version FROM routing_version WHERE id = 1), (SELECT version FROM catalog_version WHERE id = 1)`

// queueKey queues in b the reads of an Idempotency-Key; once b is sent,
// keys holds it if it is stored.
//
// Producers retry: two requests with one new key may arrive at once. The
// lock makes the second wait for the first to commit and then find its
// key, instead of registering a second event.
func queueKey(b *pgx.Batch, key string, keys map[string]*driver.StoredKey) {
	b.Queue(`SELECT pg_advisory_xact_lock($1, hashtext($2))`, lockIdempotency, key)
	b.Queue(`SELECT request_hash, event_id, created FROM idempotency_keys WHERE key = $1`, key).
		QueryRow(func(row pgx.Row) error {
			k := &driver.StoredKey{IdempotencyKey: webhooks.IdempotencyKey{Key: key}}
			var created pgtype.Timestamptz
			err := row.Scan(&k.RequestHash, &k.EventID, &created)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			k.Created = fromTS(created)
			keys[key] = k
			return err
		})
}

// writeGroup sends a group's writes, in order (the events first, since the
// keys and the deliveries refer to them), with the COMMIT.
func writeGroup(ctx context.Context, conn *pgx.Conn, w *driver.GroupWrites) (*driver.GroupWritten, error) {
	out := &driver.GroupWritten{Firsts: map[string]*webhooks.Event{}}
	var b pgx.Batch
	if len(w.Firsts) > 0 {
		b.Queue(`SELECT `+eventReadCols+` FROM events e WHERE id = ANY ($1::uuid[])`, uuids(w.Firsts)).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				e, err := scanEvent(rows)
				if err != nil {
					return err
				}
				out.Firsts[e.ID] = e
			}
			return rows.Err()
		})
	}
	queueEvents(&b, w.Events, w.Keys)
	inserted := queueDeliveries(&b, w.Deliveries, w.Leases)
	b.Queue(`COMMIT`)
	if err := conn.SendBatch(ctx, &b).Close(); err != nil {
		return nil, err
	}
	out.Inserted = inserted()
	return out, nil
}
