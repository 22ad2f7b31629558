package receiver_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/factuarea/webhooks/receiver"
)

func TestRetention(t *testing.T) {
	// The longest automatic retry span: 8 attempts, the 7 waits of the
	// schedule each 10 % longer.
	var span time.Duration
	for _, w := range []time.Duration{time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 12 * time.Hour, 24 * time.Hour, 72 * time.Hour} {
		span += w + w/10
	}
	if want := 5*24*time.Hour + 2*time.Hour; span > want {
		t.Fatalf("retry span: got %v, want at most %v", span, want)
	}
	if receiver.DefaultRetention <= span {
		t.Errorf("DefaultRetention: got %v, want more than the retry span %v", receiver.DefaultRetention, span)
	}
	if got, want := receiver.ManualResendRetention, 90*24*time.Hour; got != want {
		t.Errorf("ManualResendRetention: got %v, want %v", got, want)
	}
}

// TestPurge records ids at several ages, through the Handler and its clock,
// then purges: only the ids older than the retention go. Some ids are
// recorded by a clock in another time zone, to show that received_at is
// stored in UTC.
func TestPurge(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		f := setup(t, b, func(context.Context, *sql.Tx, *receiver.Event) error { return nil })
		ctx := context.Background()
		now := time.Now()
		madrid := time.FixedZone("CEST", 2*60*60)
		auckland := time.FixedZone("NZST", 12*60*60)
		ages := []struct {
			name string
			at   time.Time
		}{
			{"8 days", now.Add(-8 * 24 * time.Hour).In(auckland)},
			{"7 days and a minute", now.Add(-7*24*time.Hour - time.Minute).In(madrid)},
			{"6 days 23 hours", now.Add(-7*24*time.Hour + time.Hour).In(auckland)},
			{"1 day", now.Add(-24 * time.Hour).In(madrid)},
			{"now", now},
			{"91 days", now.Add(-91 * 24 * time.Hour)},
		}
		ids := map[string]string{}
		for _, a := range ages {
			f.clock.Set(a.at)
			id := newID(t)
			ids[a.name] = id
			if w := f.deliver(t, eventBody(id)); w.Code != http.StatusOK {
				t.Fatalf("%s: got %d, want 200", a.name, w.Code)
			}
		}
		remaining := func() []string {
			t.Helper()
			var names []string
			for _, a := range ages {
				if f.count(t, "processed_webhook_events", ids[a.name]) == 1 {
					names = append(names, a.name)
				}
			}
			return names
		}

		if n, err := receiver.Purge(ctx, f.db, receiver.ManualResendRetention); err != nil || n != 1 {
			t.Errorf("Purge(90 days): got %d, %v; want 1, nil", n, err)
		}
		n, err := receiver.Purge(ctx, f.db, receiver.DefaultRetention)
		if err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Errorf("Purge(7 days): got %d deleted, want 2", n)
		}
		if got, want := remaining(), []string{"6 days 23 hours", "1 day", "now"}; !slices.Equal(got, want) {
			t.Errorf("after Purge(7 days): got %q, want %q", got, want)
		}

		// Handler.Purge goes by the Handler's clock: two days on, the
		// 6-days-23-hours id is past 7 days.
		f.clock.Set(now.Add(2 * 24 * time.Hour))
		if n, err := f.h.Purge(ctx, receiver.DefaultRetention); err != nil || n != 1 {
			t.Errorf("Handler.Purge two days on: got %d, %v; want 1, nil", n, err)
		}
		if got, want := remaining(), []string{"1 day", "now"}; !slices.Equal(got, want) {
			t.Errorf("after Handler.Purge: got %q, want %q", got, want)
		}
	})
}

// TestCreateTable_Schema checks the table's columns by using them, and that
// CreateTable can run again.
func TestCreateTable_Schema(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		db := b.open(t)
		ctx := context.Background()
		for range 3 {
			if err := receiver.CreateTable(ctx, db); err != nil {
				t.Fatal(err)
			}
		}
		q := `INSERT INTO processed_webhook_events (event_id, received_at) VALUES (` + b.ph(1) + `, ` + b.ph(2) + `)`
		if _, err := db.Exec(q, "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31", time.Now().UTC()); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(q, "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31", time.Now().UTC()); err == nil {
			t.Error("a second row with the same event_id: got no error, want a primary key violation")
		}
		if _, err := db.Exec(`INSERT INTO processed_webhook_events (event_id) VALUES ('01a0e783-aae8-7c2d-9f15-2b7d4e6a8c32')`); err == nil {
			t.Error("a row without received_at: got no error, want a NOT NULL violation")
		}
		var index string
		switch b.dialect {
		case receiver.Postgres:
			err := db.QueryRow(`SELECT indexname FROM pg_indexes WHERE tablename = 'processed_webhook_events' AND indexname = 'processed_webhook_events_received_at' AND schemaname = current_schema()`).Scan(&index)
			if err != nil {
				t.Fatal(err)
			}
		case receiver.SQLite:
			err := db.QueryRow(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'processed_webhook_events' AND name = 'processed_webhook_events_received_at'`).Scan(&index)
			if err != nil {
				t.Fatal(err)
			}
		case receiver.MySQL:
			err := db.QueryRow(`SELECT DISTINCT index_name FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'processed_webhook_events' AND index_name = 'processed_webhook_events_received_at'`).Scan(&index)
			if err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestReceivedAt_UTC checks how received_at is stored: the wall clock of the
// UTC time, whatever the zone of the clock.
func TestReceivedAt_UTC(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		f := setup(t, b, func(context.Context, *sql.Tx, *receiver.Event) error { return nil })
		at := time.Date(2026, 9, 28, 1, 30, 0, 123456789, time.FixedZone("CEST", 2*60*60))
		f.clock.Set(at)
		id := newID(t)
		if w := f.deliver(t, eventBody(id)); w.Code != http.StatusOK {
			t.Fatalf("got %d, want 200", w.Code)
		}
		q := `SELECT received_at FROM processed_webhook_events WHERE event_id = ` + b.ph(1)
		switch b.dialect {
		case receiver.Postgres:
			var got time.Time
			if err := f.db.QueryRow(q, id).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if want := time.Date(2026, 9, 27, 23, 30, 0, 123456000, time.UTC); !got.Equal(want) {
				t.Errorf("got %v, want %v", got, want)
			}
		case receiver.SQLite, receiver.MySQL:
			// As text, so that neither the driver's location nor the
			// session's time zone converts it on the way out.
			q := `SELECT CAST(received_at AS TEXT) FROM processed_webhook_events WHERE event_id = ?`
			if b.dialect == receiver.MySQL {
				q = `SELECT CAST(received_at AS CHAR) FROM processed_webhook_events WHERE event_id = ?`
			}
			var got string
			if err := f.db.QueryRow(q, id).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if want := "2026-09-27 23:30:00.123456"; got != want {
				t.Errorf("got %q, want %q", got, want)
			}
		}
	})
}

// TestPurge_Boundary records ids a microsecond before, at and a microsecond
// after the purge's cutoff, which falls inside a second: only the one before
// goes. A column that kept whole seconds would hold all three at the same
// second and purge them together.
func TestPurge_Boundary(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		f := setup(t, b, func(context.Context, *sql.Tx, *receiver.Event) error { return nil })
		cutoff := time.Date(2026, 9, 20, 10, 0, 0, 500_000_000, time.UTC)
		ids := map[time.Duration]string{}
		for _, d := range []time.Duration{-time.Microsecond, 0, time.Microsecond} {
			f.clock.Set(cutoff.Add(d))
			ids[d] = newID(t)
			if w := f.deliver(t, eventBody(ids[d])); w.Code != http.StatusOK {
				t.Fatalf("cutoff%+v: got %d %q, want 200", d, w.Code, bodyOf(w))
			}
		}
		f.clock.Set(cutoff.Add(receiver.DefaultRetention))
		n, err := f.h.Purge(context.Background(), receiver.DefaultRetention)
		if err != nil || n != 1 {
			t.Errorf("Purge: got %d, %v; want 1, nil", n, err)
		}
		for d, id := range ids {
			want := 1
			if d < 0 {
				want = 0
			}
			if got := f.count(t, "processed_webhook_events", id); got != want {
				t.Errorf("id received at cutoff%+v: got %d rows, want %d", d, got, want)
			}
		}
	})
}

// TestReceivedAt_After2038: an id received after January 2038, where a
// 32-bit TIMESTAMP (MySQL's) ends, is kept like any other and is still a
// repeat when its event comes back.
func TestReceivedAt_After2038(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		var runs atomic.Int64
		f := setup(t, b, func(context.Context, *sql.Tx, *receiver.Event) error {
			runs.Add(1)
			return nil
		})
		f.clock.Set(time.Date(2040, 3, 1, 12, 0, 0, 0, time.UTC))
		id := newID(t)
		if w := f.deliver(t, eventBody(id)); w.Code != http.StatusOK {
			t.Fatalf("got %d %q, want 200", w.Code, bodyOf(w))
		}
		f.clock.Add(24 * time.Hour)
		if n, err := f.h.Purge(context.Background(), receiver.DefaultRetention); err != nil || n != 0 {
			t.Errorf("Purge a day later: got %d, %v; want 0, nil", n, err)
		}
		if w := f.deliver(t, eventBody(id)); w.Code != http.StatusOK || bodyOf(w) != "already processed" {
			t.Errorf("repeat: got %d %q, want 200 %q", w.Code, bodyOf(w), "already processed")
		}
		if got := runs.Load(); got != 1 {
			t.Errorf("handler runs: got %d, want 1", got)
		}
	})
}

// TestMySQL_TimestampTable runs the Handler on a table made by an earlier
// version of the kit, whose received_at was a TIMESTAMP: it keeps working,
// and an id it cannot store (past 2038) is an error that the sender retries,
// not a row silently stored with a zero date, which the next purge would
// delete, letting the event run again.
func TestMySQL_TimestampTable(t *testing.T) {
	for _, b := range backends {
		if b.dialect != receiver.MySQL {
			continue
		}
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			var runs atomic.Int64
			f := &fixture{b: b, db: b.open(t), clock: newClock(time.Now())}
			for _, q := range []string{
				`CREATE TABLE processed_webhook_events (
  event_id    CHAR(36)  NOT NULL PRIMARY KEY,
  received_at TIMESTAMP NOT NULL,
  INDEX processed_webhook_events_received_at (received_at)
)`,
				`CREATE TABLE effects (event_id CHAR(36) NOT NULL)`,
			} {
				if _, err := f.db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			h, err := receiver.New(receiver.Config{
				DB:      f.db,
				Secrets: []string{testSecret},
				Handle: func(ctx context.Context, tx *sql.Tx, ev *receiver.Event) error {
					runs.Add(1)
					return f.recordEffect(ctx, tx, ev)
				},
				Now:    f.clock.Now,
				Logger: slog.New(slog.DiscardHandler),
			})
			if err != nil {
				t.Fatal(err)
			}
			f.h = h
			if err := h.CreateTable(context.Background()); err != nil {
				t.Fatal(err)
			}
			id := newID(t)
			for i, want := range []string{"processed", "already processed"} {
				if w := f.deliver(t, eventBody(id)); w.Code != http.StatusOK || bodyOf(w) != want {
					t.Errorf("delivery %d: got %d %q, want 200 %q", i+1, w.Code, bodyOf(w), want)
				}
			}
			f.clock.Set(time.Date(2040, 3, 1, 12, 0, 0, 0, time.UTC))
			late := newID(t)
			if w := f.deliver(t, eventBody(late)); w.Code != http.StatusInternalServerError {
				t.Errorf("past 2038: got %d %q, want 500", w.Code, bodyOf(w))
			}
			if got := f.count(t, "processed_webhook_events", late); got != 0 {
				t.Errorf("past 2038: got %d rows, want 0", got)
			}
			if got := f.count(t, "effects", late); got != 0 {
				t.Errorf("past 2038: got %d effects, want 0", got)
			}
			if got := runs.Load(); got != 1 {
				t.Errorf("handler runs: got %d, want 1", got)
			}
		})
	}
}

func TestDetectDialect(t *testing.T) {
	for _, tc := range []struct {
		driver string
		want   receiver.Dialect
	}{
		{"sqlite", receiver.SQLite},
		{"pgx", receiver.Postgres},
		{"mysql", receiver.MySQL},
	} {
		db, err := sql.Open(tc.driver, "")
		if err != nil {
			t.Fatal(err)
		}
		got, err := receiver.DetectDialect(db)
		if got != tc.want || err != nil {
			t.Errorf("%s: got %v, %v; want %v", tc.driver, got, err, tc.want)
		}
		db.Close()
	}
	db := sql.OpenDB(fakeConnector{})
	if _, err := receiver.DetectDialect(db); !errors.Is(err, receiver.ErrUnknownDialect) {
		t.Errorf("unknown driver: got %v, want ErrUnknownDialect", err)
	}
	if err := receiver.CreateTable(context.Background(), db); !errors.Is(err, receiver.ErrUnknownDialect) {
		t.Errorf("CreateTable with an unknown driver: got %v, want ErrUnknownDialect", err)
	}
	handle := func(context.Context, *sql.Tx, *receiver.Event) error { return nil }
	if _, err := receiver.New(receiver.Config{DB: db, Secrets: []string{testSecret}, Handle: handle}); !errors.Is(err, receiver.ErrUnknownDialect) {
		t.Errorf("New with an unknown driver: got %v, want ErrUnknownDialect", err)
	}
	h, err := receiver.New(receiver.Config{DB: db, Secrets: []string{testSecret}, Handle: handle, Dialect: receiver.MySQL})
	if err != nil || h.Dialect() != receiver.MySQL {
		t.Errorf("New with Dialect: MySQL: got %v, want a MySQL handler", err)
	}
}

func TestNew_Config(t *testing.T) {
	db := openSQLite(t)
	handle := func(context.Context, *sql.Tx, *receiver.Event) error { return nil }
	for _, tc := range []struct {
		name string
		cfg  receiver.Config
	}{
		{"no DB", receiver.Config{Secrets: []string{testSecret}, Handle: handle}},
		{"no Handle", receiver.Config{DB: db, Secrets: []string{testSecret}}},
		{"no Secrets", receiver.Config{DB: db, Handle: handle}},
		{"empty secret", receiver.Config{DB: db, Secrets: []string{testSecret, ""}, Handle: handle}},
		{"negative MaxBodyBytes", receiver.Config{DB: db, Secrets: []string{testSecret}, Handle: handle, MaxBodyBytes: -1}},
		{"bad Dialect", receiver.Config{DB: db, Secrets: []string{testSecret}, Handle: handle, Dialect: 99}},
	} {
		if h, err := receiver.New(tc.cfg); err == nil {
			t.Errorf("%s: got %v, nil; want an error", tc.name, h)
		}
	}
}

// fakeConnector opens a driver the kit does not know.
type fakeConnector struct{}

func (fakeConnector) Connect(context.Context) (driver.Conn, error) {
	return nil, errors.New("fake driver: no connections")
}
func (fakeConnector) Driver() driver.Driver { return fakeDriver{} }

type fakeDriver struct{}

func (fakeDriver) Open(string) (driver.Conn, error) {
	return nil, errors.New("fake driver: no connections")
}
