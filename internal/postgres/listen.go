package postgres

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
)

// Backoff between reconnections of Listen.
const (
	listenMinBackoff = 100 * time.Millisecond
	listenMaxBackoff = 10 * time.Second
)

// Notify implements driver.Cluster: it notifies NotifyChannel, outside any
// transaction. PostgreSQL serializes committing transactions that
// notified on one lock held through their WAL flush, which capped
// registration at one commit per fsync; the caller coalesces the
// notifications of many commits into one.
func (s *Store) Notify(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, NotifyChannel, s.schema)
	return err
}

// Listen implements driver.Cluster. It listens to NotifyChannel on a
// connection of its own, outside the pool, and calls wake on every
// notification from a store on this store's schema. It also calls wake
// once the channel is listened to, and again after every reconnection:
// what was notified while no connection listened is lost, so the caller
// should look for work. The connection also holds the lock by which the
// processes on the schema count each other (CountProcesses).
//
// A lost connection is reopened, with a backoff from 100 ms up to 10 s.
// Listen returns when ctx ends or the store is closed. wake runs on
// Listen's goroutine and should not block (signal a channel with a buffer
// of one, say).
func (s *Store) Listen(ctx context.Context, wake func()) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.closed, cancel)
	defer stop()
	backoff := listenMinBackoff
	for {
		err := s.listen(ctx, wake, func() { backoff = listenMinBackoff })
		if ctx.Err() != nil {
			return
		}
		// Up to 50 % less, so that processes that lost the database
		// together do not reconnect together.
		wait := backoff - time.Duration(rand.Int64N(int64(backoff/2)+1))
		s.log.Warn("postgres: listen connection lost, reconnecting", "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		backoff = min(backoff*2, listenMaxBackoff)
	}
}

// listen runs one connection until it fails or ctx ends.
func (s *Store) listen(ctx context.Context, wake, connected func()) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(closeCtx)
	}()
	// The session holds it until the connection ends (see CountProcesses).
	// It goes first, so that the connection shows LISTEN as its query.
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock_shared($1, hashtext(current_schema()))`, lockProcess); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{NotifyChannel}.Sanitize()); err != nil {
		return err
	}
	connected()
	wake()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if n.Payload == s.schema {
			wake()
		}
	}
}
