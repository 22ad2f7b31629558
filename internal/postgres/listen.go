package postgres

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
)

// Backoff between reconnections of Listen.
const (
	listenMinBackoff = 100 * time.Millisecond
	listenMaxBackoff = 10 * time.Second
)

// Listen listens to channel (NotifyChannel for the store's own
// notifications) on a connection of its own, outside the pool, and calls
// wake on every notification, but for NotifyChannel's from stores on
// another schema. It also calls wake once the channel is
// listened to, and again after every reconnection: what was notified while
// no connection listened is lost, so the caller should look for work.
//
// A lost connection is reopened, with a backoff from 100 ms up to 10 s.
// Listen returns nil when ctx ends or the store is closed, and an error
// only for an empty channel. wake runs on Listen's goroutine and should not
// block (signal a channel with a buffer of one, say).
func (s *Store) Listen(ctx context.Context, channel string, wake func()) error {
	if channel == "" {
		return errors.New("postgres: listen: empty channel name")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.closed, cancel)
	defer stop()
	backoff := listenMinBackoff
	for {
		err := s.listen(ctx, channel, wake, func() { backoff = listenMinBackoff })
		if ctx.Err() != nil {
			return nil
		}
		// Up to 50 % less, so that processes that lost the database
		// together do not reconnect together.
		wait := backoff - time.Duration(rand.Int64N(int64(backoff/2)+1))
		s.log.Warn("postgres: listen connection lost, reconnecting", "channel", channel, "err", err, "retry_in", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		backoff = min(backoff*2, listenMaxBackoff)
	}
}

// listen runs one connection until it fails or ctx ends.
func (s *Store) listen(ctx context.Context, channel string, wake, connected func()) error {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig.Copy())
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		conn.Close(closeCtx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return err
	}
	connected()
	wake()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if channel != NotifyChannel || n.Payload == s.schema {
			wake()
		}
	}
}
