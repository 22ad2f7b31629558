package sqlite

import (
	"context"
	"database/sql"
	"sync"
)

// txn is a write transaction whose statements are prepared once: SQLite
// takes about as long to parse a statement as to run a small one, and the
// engine runs the same few statements thousands of times a second.
//
// Its statements do not watch their context: the driver starts a goroutine
// per statement to interrupt it if the context ends, which cost more than
// a small statement, and a write transaction's statements are short. The
// transaction still ends with its context (database/sql rolls it back,
// and its commit fails).
type txn struct {
	*sql.Tx
	cache *stmtCache
	// bodies are the events' bodies this transaction read or stored (see
	// insertBody).
	bodies map[string][]storedBody
}

func (t *txn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = context.WithoutCancel(ctx)
	if st := t.cache.get(query); st != nil {
		return t.Tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

func (t *txn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = context.WithoutCancel(ctx)
	if st := t.cache.get(query); st != nil {
		return t.Tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

func (t *txn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = context.WithoutCancel(ctx)
	if st := t.cache.get(query); st != nil {
		return t.Tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}

// stmtCache holds statements prepared on the write pool. A statement is
// prepared after the transaction that first ran it, because the pool's one
// connection is busy during it.
type stmtCache struct {
	mu     sync.Mutex
	stmts  map[string]*sql.Stmt
	missed map[string]bool
}

// maxCached bounds the cache: queries with IN lists of varying lengths
// would otherwise fill it.
const maxCached = 256

func newStmtCache() *stmtCache {
	return &stmtCache{stmts: map[string]*sql.Stmt{}, missed: map[string]bool{}}
}

func (c *stmtCache) get(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.stmts[query]
	if st == nil && len(c.stmts)+len(c.missed) < maxCached {
		c.missed[query] = true
	}
	return st
}

// prepareMissed prepares the statements run unprepared since the last call.
func (c *stmtCache) prepareMissed(ctx context.Context, db *sql.DB) {
	c.mu.Lock()
	var queries []string
	for q := range c.missed {
		queries = append(queries, q)
	}
	clear(c.missed)
	c.mu.Unlock()
	for _, q := range queries {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			continue // it runs unprepared; the error shows where it runs
		}
		c.mu.Lock()
		c.stmts[q] = st
		c.mu.Unlock()
	}
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, st := range c.stmts {
		st.Close()
	}
	clear(c.stmts)
}
