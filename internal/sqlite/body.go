package sqlite

import (
	"bytes"
	"context"
	"database/sql"

	"github.com/factuarea/webhooks/internal/bodycodec"
)

// qNotDelivered is the condition of the partial index
// deliveries_endpoint_status, which a query must state in these words for
// SQLite to use the index (it does not infer it from "status = ?").
const qNotDelivered = `status <> 'd'`

// storedBody is one of an event's bodies: its number and bytes.
type storedBody struct {
	n    int64
	body []byte
}

// insertBody returns the number of the event's body with these bytes,
// storing them first if the event has none equal: the deliveries of an
// event to endpoints of one payload version and envelope, and replays,
// share one row. The event's bodies are read once per transaction; an event
// inserted in it has none, and reads nothing (insertEvent says so).
// An empty body (an erased event's replay) is stored as none.
func (t *txn) insertBody(ctx context.Context, eventID string, body []byte) (sql.NullInt64, error) {
	if len(body) == 0 {
		return sql.NullInt64{}, nil
	}
	known, ok := t.bodies[eventID]
	if !ok {
		rows, err := t.QueryContext(ctx, `SELECT n, body FROM bodies WHERE event_id = ? ORDER BY n`, dbID(eventID))
		if err != nil {
			return sql.NullInt64{}, err
		}
		for rows.Next() {
			var b storedBody
			if err := rows.Scan(&b.n, (*bodycodec.Column)(&b.body)); err != nil {
				rows.Close()
				return sql.NullInt64{}, err
			}
			known = append(known, b)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return sql.NullInt64{}, err
		}
	}
	for _, b := range known {
		if bytes.Equal(b.body, body) {
			return sql.NullInt64{Int64: b.n, Valid: true}, nil
		}
	}
	n := int64(1)
	if len(known) > 0 {
		n = known[len(known)-1].n + 1
	}
	if _, err := t.ExecContext(ctx, `INSERT INTO bodies (event_id, n, body) VALUES (?, ?, ?)`, dbID(eventID), n, bodycodec.Encode(body)); err != nil {
		return sql.NullInt64{}, err
	}
	if t.bodies == nil {
		t.bodies = map[string][]storedBody{}
	}
	t.bodies[eventID] = append(known, storedBody{n: n, body: body})
	return sql.NullInt64{Int64: n, Valid: true}, nil
}
