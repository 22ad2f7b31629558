package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	webhooks "github.com/factuarea/webhooks"
)

// InsertOutbox implements driver.Tx.
func (t *txn) InsertOutbox(ctx context.Context, entries []*webhooks.OutboxEntry) error {
	var b pgx.Batch
	if err := queueOutbox(&b, entries); err != nil {
		return err
	}
	return t.SendBatch(ctx, &b).Close()
}

// queueOutbox queues in b the statement that stores entries.
func queueOutbox(b *pgx.Batch, entries []*webhooks.OutboxEntry) error {
	if len(entries) == 0 {
		return nil
	}
	n := len(entries)
	ids, kinds, endpoints, bodies, created := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]*time.Time, n)
	for i, e := range entries {
		body, err := json.Marshal(e)
		if err != nil {
			return err
		}
		ids[i], kinds[i], endpoints[i], bodies[i], created[i] = e.ID, e.Kind, e.EndpointID, string(body), timePtr(e.At)
	}
	b.Queue(`INSERT INTO outbox (id, kind, endpoint_id, entry, created)
		SELECT * FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::jsonb[], $5::timestamptz[])`,
		uuids(ids), kinds, uuids(endpoints), bodies, created)
	return nil
}

// Outbox implements driver.Tx: entries another process is draining are
// skipped.
func (t *txn) Outbox(ctx context.Context, limit int) ([]*webhooks.OutboxEntry, error) {
	rows, err := t.Query(ctx, `SELECT entry FROM outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*webhooks.OutboxEntry, error) {
		var b []byte
		if err := r.Scan(&b); err != nil {
			return nil, err
		}
		var e webhooks.OutboxEntry
		return &e, json.Unmarshal(b, &e)
	})
}

// DeleteOutbox implements driver.Tx.
func (t *txn) DeleteOutbox(ctx context.Context, ids []string) error {
	_, err := t.Exec(ctx, `DELETE FROM outbox WHERE id = ANY ($1::uuid[])`, uuids(ids))
	return err
}
