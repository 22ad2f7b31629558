package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	webhooks "github.com/factuarea/webhooks"
)

// The relay's rows are a mailbox between processes, not data the API
// accepted: a crash that loses the last of them fails the attempts they
// carried, which the schedule retries. So they commit lazily.

// ConnectRelay implements driver.Relay.
func (s *Store) ConnectRelay(ctx context.Context, endpointID, session string, expires time.Time, lost webhooks.RelayAnswer) error {
	return s.inTxWith(ctx, lazy, func(tx *txn) error {
		if _, err := tx.ExecContext(ctx, `UPDATE relay_requests SET answer = ?
			WHERE endpoint_id = ? AND session_id IS NOT NULL AND session_id <> ? AND answer IS NULL`,
			jsonText(lost), dbID(endpointID), session); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO relay_sessions (endpoint_id, session_id, expires) VALUES (?, ?, ?)
			ON CONFLICT (endpoint_id) DO UPDATE SET session_id = excluded.session_id, expires = excluded.expires`,
			dbID(endpointID), session, ms(expires))
		return err
	})
}

// RenewRelay implements driver.Relay.
func (s *Store) RenewRelay(ctx context.Context, endpointID, session string, expires time.Time) (bool, error) {
	var held bool
	err := s.inTxWith(ctx, lazy, func(tx *txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE relay_sessions SET expires = ? WHERE endpoint_id = ? AND session_id = ?`,
			ms(expires), dbID(endpointID), session)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		held = n == 1
		return err
	})
	return held, err
}

// DisconnectRelay implements driver.Relay.
func (s *Store) DisconnectRelay(ctx context.Context, endpointID, session string, lost webhooks.RelayAnswer) error {
	return s.inTxWith(ctx, lazy, func(tx *txn) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM relay_sessions WHERE endpoint_id = ? AND session_id = ?`, dbID(endpointID), session); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE relay_requests SET answer = ? WHERE endpoint_id = ? AND session_id = ? AND answer IS NULL`,
			jsonText(lost), dbID(endpointID), session)
		return err
	})
}

// RelaySession implements driver.Relay.
func (s *Store) RelaySession(ctx context.Context, endpointID string, now time.Time) (string, error) {
	var session string
	err := s.read.QueryRowContext(ctx, `SELECT session_id FROM relay_sessions WHERE endpoint_id = ? AND expires > ?`,
		dbID(endpointID), ms(now)).Scan(&session)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return session, dbError(err)
}

// PutRelayRequest implements driver.Relay.
func (s *Store) PutRelayRequest(ctx context.Context, r *webhooks.RelayRequest) error {
	return s.inTxWith(ctx, lazy, func(tx *txn) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO relay_requests (id, endpoint_id, delivery_id, header, body, created) VALUES (?, ?, ?, ?, ?, ?)`,
			dbID(r.ID), dbID(r.EndpointID), dbID(r.DeliveryID), jsonText(r.Header), r.Body, ms(r.Created))
		return err
	})
}

// TakeRelayRequests implements driver.Relay.
func (s *Store) TakeRelayRequests(ctx context.Context, endpointID, session string, since time.Time, limit int) ([]*webhooks.RelayRequest, error) {
	// A connection asks often, and mostly finds nothing: a read on the
	// pool tells, without taking the one write connection.
	var some bool
	if err := s.read.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM relay_requests WHERE endpoint_id = ? AND (session_id IS NULL OR created <= ?))`,
		dbID(endpointID), ms(since)).Scan(&some); err != nil || !some {
		return nil, dbError(err)
	}
	var out []*webhooks.RelayRequest
	err := s.inTxWith(ctx, lazy, func(tx *txn) error {
		out = nil
		if _, err := tx.ExecContext(ctx, `DELETE FROM relay_requests WHERE endpoint_id = ? AND created <= ?`, dbID(endpointID), ms(since)); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `UPDATE relay_requests SET session_id = ?
			WHERE id IN (SELECT id FROM relay_requests WHERE endpoint_id = ? AND session_id IS NULL AND answer IS NULL ORDER BY created, id LIMIT ?)
			RETURNING id, endpoint_id, delivery_id, header, body, created`, session, dbID(endpointID), limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r := &webhooks.RelayRequest{}
			var header string
			var created sql.NullInt64
			if err := rows.Scan((*dbID)(&r.ID), (*dbID)(&r.EndpointID), (*dbID)(&r.DeliveryID), &header, &r.Body, &created); err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(header), &r.Header); err != nil {
				return err
			}
			r.Created = fromMS(created)
			out = append(out, r)
		}
		return rows.Err()
	})
	webhooks.SortRelayRequests(out)
	return out, err
}

// AnswerRelayRequest implements driver.Relay.
func (s *Store) AnswerRelayRequest(ctx context.Context, endpointID, id string, a webhooks.RelayAnswer) (bool, error) {
	var stored bool
	err := s.inTxWith(ctx, lazy, func(tx *txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE relay_requests SET answer = ? WHERE id = ? AND endpoint_id = ? AND answer IS NULL`,
			jsonText(a), dbID(id), dbID(endpointID))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		stored = n == 1
		return err
	})
	return stored, err
}

// RelayAnswer implements driver.Relay.
func (s *Store) RelayAnswer(ctx context.Context, id string) (*webhooks.RelayAnswer, error) {
	var answer sql.NullString
	err := s.read.QueryRowContext(ctx, `SELECT answer FROM relay_requests WHERE id = ?`, dbID(id)).Scan(&answer)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && !answer.Valid) {
		return nil, nil
	}
	if err != nil {
		return nil, dbError(err)
	}
	var a webhooks.RelayAnswer
	if err := json.Unmarshal([]byte(answer.String), &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// DeleteRelayRequest implements driver.Relay.
func (s *Store) DeleteRelayRequest(ctx context.Context, id string) error {
	return s.inTxWith(ctx, lazy, func(tx *txn) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM relay_requests WHERE id = ?`, dbID(id))
		return err
	})
}
