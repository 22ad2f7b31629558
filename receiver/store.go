package receiver

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// DefaultRetention is how long to keep processed event ids when nobody
// resends deliveries by hand. Automatic retries of one delivery span at most
// 5 days 2 hours (8 attempts, waits of 1 min to 3 days adding up to 4 days 14
// hours, each varied by up to 10 %), so 7 days covers every automatic retry
// with margin.
const DefaultRetention = 7 * 24 * time.Hour

// ManualResendRetention is how long to keep processed event ids when you or
// your team resend deliveries by hand: a replay may send an event up to 90
// days old, the longest resend window, and it carries the same id. An id is
// 36 characters, so 90 days of them is cheap.
const ManualResendRetention = 90 * 24 * time.Hour

// CreateTable creates processed_webhook_events and its received_at index if
// they do not exist, in the dialect detected from db's driver:
//
//	CREATE TABLE processed_webhook_events (
//	  event_id    CHAR(36)  NOT NULL PRIMARY KEY,
//	  received_at TIMESTAMP NOT NULL
//	);
//	CREATE INDEX processed_webhook_events_received_at ON processed_webhook_events (received_at);
//
// On MySQL, received_at is DATETIME(6) (see the package documentation). Use
// Handler.CreateTable when the dialect cannot be detected.
func CreateTable(ctx context.Context, db *sql.DB) error {
	d, err := DetectDialect(db)
	if err != nil {
		return err
	}
	return createTableIn(ctx, db, d)
}

// Purge deletes the ids received more than olderThan ago (by the database
// rows' received_at and the local clock) and returns how many it deleted.
// Run it on a schedule with DefaultRetention, or ManualResendRetention if you
// resend deliveries by hand. An id purged too early lets a late copy of its
// event run the handler again.
//
// Use Handler.Purge when the dialect cannot be detected.
func Purge(ctx context.Context, db *sql.DB, olderThan time.Duration) (int64, error) {
	d, err := DetectDialect(db)
	if err != nil {
		return 0, err
	}
	return purgeIn(ctx, db, d, time.Now().Add(-olderThan))
}

func createTableIn(ctx context.Context, db *sql.DB, d Dialect) error {
	for _, q := range d.createStatements() {
		if _, err := db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("receiver: create table: %w", err)
		}
	}
	return nil
}

func purgeIn(ctx context.Context, db *sql.DB, d Dialect, before time.Time) (int64, error) {
	res, err := db.ExecContext(ctx, d.purgeSQL(), d.timeArg(before))
	if err != nil {
		return 0, fmt.Errorf("receiver: purge: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("receiver: purge: %w", err)
	}
	return n, nil
}

// record inserts the event id in tx and reports whether it is new: false
// means a copy of the event was already processed (or is being processed by a
// transaction that has committed since this one waited for it).
func record(ctx context.Context, tx *sql.Tx, d Dialect, eventID string, now time.Time) (bool, error) {
	res, err := tx.ExecContext(ctx, d.insertSQL(), eventID, d.timeArg(now))
	if err != nil {
		if d == MySQL && recorded(ctx, tx, eventID) {
			return false, nil
		}
		return false, fmt.Errorf("receiver: record event id: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("receiver: record event id: %w", err)
	}
	return n == 1, nil
}

// recorded reports whether eventID is recorded, after MySQL refused to
// insert it. InnoDB reports a duplicate key only once the transaction that
// inserted the id has committed (the insert waits for it), and this read is
// the transaction's first, so it sees that commit. A duplicate key rolls
// back the statement only, so the transaction goes on and commits nothing;
// a deadlock rolls back the transaction, and the read then sees the latest
// commit too. When the id is not found, the insert's error stands.
func recorded(ctx context.Context, tx *sql.Tx, eventID string) bool {
	var n int
	err := tx.QueryRowContext(ctx, recordedSQL, eventID).Scan(&n)
	return err == nil && n == 1
}
