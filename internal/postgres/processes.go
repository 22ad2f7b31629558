package postgres

import (
	"context"
	"time"
)

// ProcessesInterval is how often a process counts the processes on its
// schema (CountProcesses).
const ProcessesInterval = 5 * time.Second

// Processes returns how many processes listened on this store's schema
// when CountProcesses last counted them: at least 1, this one.
func (s *Store) Processes() int { return max(int(s.processes.Load()), 1) }

// CountProcesses counts the processes that share this store's schema, for
// Processes: each holds the advisory lock lockProcess, shared, on its
// listen connection (see Listen), which PostgreSQL releases the moment the
// process or its connection dies. pg_locks is readable by every role.
func (s *Store) CountProcesses(ctx context.Context) error {
	var n int32
	err := s.pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND objsubid = 2
		  AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND classid = $1::int4::oid AND objid = hashtext(current_schema())::oid`, lockProcess).Scan(&n)
	if err != nil {
		return err
	}
	s.processes.Store(n)
	return nil
}
