package sqlite

import (
	"context"
	"encoding/json"

	webhooks "github.com/factuarea/webhooks"
)

// InsertOutbox implements driver.Tx.
func (t *txn) InsertOutbox(ctx context.Context, entries []*webhooks.OutboxEntry) error {
	for _, e := range entries {
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if _, err := t.ExecContext(ctx, `INSERT INTO outbox (id, kind, endpoint_id, entry, created) VALUES (?, ?, ?, ?, ?)`,
			dbID(e.ID), e.Kind, dbID(e.EndpointID), string(b), ms(e.At)); err != nil {
			return err
		}
	}
	return nil
}

// Outbox implements driver.Tx. The write transaction holds every entry.
func (t *txn) Outbox(ctx context.Context, limit int) ([]*webhooks.OutboxEntry, error) {
	return queryAll(ctx, t, func(r scanner) (*webhooks.OutboxEntry, error) {
		var b string
		if err := r.Scan(&b); err != nil {
			return nil, err
		}
		var e webhooks.OutboxEntry
		return &e, json.Unmarshal([]byte(b), &e)
	}, `SELECT entry FROM outbox ORDER BY id LIMIT ?`, limit)
}

// DeleteOutbox implements driver.Tx.
func (t *txn) DeleteOutbox(ctx context.Context, ids []string) error {
	for _, id := range ids {
		if _, err := t.ExecContext(ctx, `DELETE FROM outbox WHERE id = ?`, dbID(id)); err != nil {
			return err
		}
	}
	return nil
}
