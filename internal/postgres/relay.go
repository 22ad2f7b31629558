package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	webhooks "github.com/factuarea/webhooks"
)

// The relay's rows are a mailbox between processes, not data the API
// accepted: a crash that loses the last of them fails the attempts they
// carried, which the schedule retries. So they commit lazily.

// relayTx runs fn in a lazily committed transaction.
func (s *Store) relayTx(ctx context.Context, fn func(t *txn) error) error {
	return s.inTx(ctx, func(t *txn) error {
		if err := lazyCommit(ctx, t); err != nil {
			return err
		}
		return fn(t)
	})
}

func answerJSON(a webhooks.RelayAnswer) []byte {
	b, _ := json.Marshal(a)
	return b
}

// ConnectRelay implements driver.Relay.
func (s *Store) ConnectRelay(ctx context.Context, endpointID, session string, expires time.Time, lost webhooks.RelayAnswer) error {
	return s.relayTx(ctx, func(t *txn) error {
		// The session row first: two connections of one endpoint take
		// turns on it, so each one's answers to the other's requests see
		// what the other sent.
		if _, err := t.Exec(ctx, `INSERT INTO relay_sessions (endpoint_id, session_id, expires) VALUES ($1, $2, $3)
			ON CONFLICT (endpoint_id) DO UPDATE SET session_id = excluded.session_id, expires = excluded.expires`,
			endpointID, session, ts(expires)); err != nil {
			return err
		}
		_, err := t.Exec(ctx, `UPDATE relay_requests SET answer = $1
			WHERE endpoint_id = $2 AND session_id IS NOT NULL AND session_id <> $3 AND answer IS NULL`,
			answerJSON(lost), endpointID, session)
		return err
	})
}

// RenewRelay implements driver.Relay.
func (s *Store) RenewRelay(ctx context.Context, endpointID, session string, expires time.Time) (bool, error) {
	var held bool
	err := s.relayTx(ctx, func(t *txn) error {
		tag, err := t.Exec(ctx, `UPDATE relay_sessions SET expires = $1 WHERE endpoint_id = $2 AND session_id = $3`,
			ts(expires), endpointID, session)
		held = tag.RowsAffected() == 1
		return err
	})
	return held, err
}

// DisconnectRelay implements driver.Relay.
func (s *Store) DisconnectRelay(ctx context.Context, endpointID, session string, lost webhooks.RelayAnswer) error {
	return s.relayTx(ctx, func(t *txn) error {
		if _, err := t.Exec(ctx, `DELETE FROM relay_sessions WHERE endpoint_id = $1 AND session_id = $2`, endpointID, session); err != nil {
			return err
		}
		_, err := t.Exec(ctx, `UPDATE relay_requests SET answer = $1 WHERE endpoint_id = $2 AND session_id = $3 AND answer IS NULL`,
			answerJSON(lost), endpointID, session)
		return err
	})
}

// RelaySession implements driver.Relay.
func (s *Store) RelaySession(ctx context.Context, endpointID string, now time.Time) (string, error) {
	if !webhooks.ValidID(endpointID) {
		return "", nil
	}
	var session string
	err := s.pool.QueryRow(ctx, `SELECT session_id::text FROM relay_sessions WHERE endpoint_id = $1 AND expires > $2`,
		endpointID, ts(now)).Scan(&session)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", nil
	}
	return read(session, err)
}

// PutRelayRequest implements driver.Relay.
func (s *Store) PutRelayRequest(ctx context.Context, r *webhooks.RelayRequest) error {
	header, err := json.Marshal(r.Header)
	if err != nil {
		return err
	}
	return s.relayTx(ctx, func(t *txn) error {
		_, err := t.Exec(ctx, `INSERT INTO relay_requests (id, endpoint_id, delivery_id, header, body, created) VALUES ($1, $2, $3, $4, $5, $6)`,
			r.ID, r.EndpointID, r.DeliveryID, header, r.Body, ts(r.Created))
		return err
	})
}

// TakeRelayRequests implements driver.Relay. SKIP LOCKED: two takes of
// one endpoint (a connection and the one taking it over) send each
// request once.
func (s *Store) TakeRelayRequests(ctx context.Context, endpointID, session string, since time.Time, limit int) ([]*webhooks.RelayRequest, error) {
	// A connection asks often, and mostly finds nothing: a read tells,
	// without a transaction that writes.
	var some bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM relay_requests WHERE endpoint_id = $1 AND (session_id IS NULL OR created <= $2))`,
		endpointID, ts(since)).Scan(&some); err != nil || !some {
		return read[[]*webhooks.RelayRequest](nil, err)
	}
	var out []*webhooks.RelayRequest
	err := s.relayTx(ctx, func(t *txn) error {
		out = nil
		if _, err := t.Exec(ctx, `DELETE FROM relay_requests WHERE endpoint_id = $1 AND created <= $2`, endpointID, ts(since)); err != nil {
			return err
		}
		rows, err := t.Query(ctx, `WITH taken AS (
				SELECT id FROM relay_requests WHERE endpoint_id = $2 AND session_id IS NULL AND answer IS NULL
				ORDER BY created, id LIMIT $3 FOR UPDATE SKIP LOCKED
			)
			UPDATE relay_requests r SET session_id = $1 FROM taken WHERE r.id = taken.id
			RETURNING r.id::text, r.endpoint_id::text, r.delivery_id::text, r.header, r.body, r.created`, session, endpointID, limit)
		if err != nil {
			return err
		}
		var header []byte
		var created pgtype.Timestamptz
		r := &webhooks.RelayRequest{}
		_, err = pgx.ForEachRow(rows, []any{&r.ID, &r.EndpointID, &r.DeliveryID, &header, &r.Body, &created}, func() error {
			c := *r
			if err := json.Unmarshal(header, &c.Header); err != nil {
				return err
			}
			c.Body = append([]byte(nil), r.Body...)
			c.Created = fromTS(created)
			out = append(out, &c)
			return nil
		})
		return err
	})
	webhooks.SortRelayRequests(out)
	return read(out, err)
}

// AnswerRelayRequest implements driver.Relay.
func (s *Store) AnswerRelayRequest(ctx context.Context, endpointID, id string, a webhooks.RelayAnswer) (bool, error) {
	if !webhooks.ValidID(id) {
		return false, nil
	}
	var stored bool
	err := s.relayTx(ctx, func(t *txn) error {
		tag, err := t.Exec(ctx, `UPDATE relay_requests SET answer = $1 WHERE id = $2 AND endpoint_id = $3 AND answer IS NULL`,
			answerJSON(a), id, endpointID)
		stored = tag.RowsAffected() == 1
		return err
	})
	return stored, err
}

// RelayAnswer implements driver.Relay.
func (s *Store) RelayAnswer(ctx context.Context, id string) (*webhooks.RelayAnswer, error) {
	var answer []byte
	err := s.pool.QueryRow(ctx, `SELECT answer FROM relay_requests WHERE id = $1`, id).Scan(&answer)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && answer == nil) {
		return nil, nil
	}
	if err != nil {
		return read[*webhooks.RelayAnswer](nil, err)
	}
	var a webhooks.RelayAnswer
	if err := json.Unmarshal(answer, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// DeleteRelayRequest implements driver.Relay.
func (s *Store) DeleteRelayRequest(ctx context.Context, id string) error {
	return s.relayTx(ctx, func(t *txn) error {
		_, err := t.Exec(ctx, `DELETE FROM relay_requests WHERE id = $1`, id)
		return err
	})
}
