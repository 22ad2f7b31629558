// processed_webhook_events on the two databases the kit supports (SPEC 10):
// a pg Pool (PostgreSQL) and a better-sqlite3 Database (SQLite). The kit
// imports neither: it recognises the object it is given by its shape, so that
// installing the kit brings in no database client.

import { DatabaseError, UnsupportedDatabaseError } from './errors.js';

/**
 * How long to keep processed event ids when nobody resends deliveries by
 * hand, in milliseconds: 7 days. Automatic retries of one delivery span at
 * most 5 days 2 hours (8 attempts, waits of 1 min to 3 days adding up to 4
 * days 14 hours, each varied by up to 10 %), so 7 days covers them with
 * margin.
 */
export const DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
/**
 * How long to keep them when you resend deliveries by hand, in
 * milliseconds: 90 days, the longest resend window. A replay carries the same
 * id, and an id is 36 characters, so 90 days of them is cheap.
 */
export const MANUAL_RESEND_RETENTION_MS = 90 * 24 * 60 * 60 * 1000;

// The table exactly as the specification gives it; both databases read it.
const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS processed_webhook_events (
  event_id    CHAR(36)  NOT NULL PRIMARY KEY,
  received_at TIMESTAMP NOT NULL
)`;
const CREATE_INDEX =
  'CREATE INDEX IF NOT EXISTS processed_webhook_events_received_at ON processed_webhook_events (received_at)';

/**
 * timeArg writes received_at: UTC, fixed width, microseconds, no zone (the Go
 * kit's layout). On SQLite, which compares a TIMESTAMP holding text as text,
 * the fixed width orders values in time. PostgreSQL reads the same text as
 * a TIMESTAMP without time zone; a JavaScript Date would instead be sent in
 * the process's local zone, whose offset such a column drops.
 */
export function timeArg(ms) {
  return `${new Date(ms).toISOString().slice(0, 23).replace('T', ' ')}000`;
}

function isPgPool(db) {
  return typeof db.connect === 'function' && typeof db.query === 'function' && typeof db.totalCount === 'number';
}

function isPgClient(db) {
  return typeof db.connect === 'function' && typeof db.query === 'function' && !isPgPool(db);
}

function isSqlite(db) {
  return typeof db.prepare === 'function' && typeof db.exec === 'function' && typeof db.inTransaction === 'boolean';
}

/** The store of each database object, so that every Receiver on it shares the SQLite queue. */
const stores = new WeakMap();

/**
 * storeFor returns the store of db, a pg Pool or a better-sqlite3
 * Database, or throws an UnsupportedDatabaseError that says what to pass.
 */
export function storeFor(db) {
  if (db === null || typeof db !== 'object') {
    throw new UnsupportedDatabaseError('receiver: db is required: a pg Pool or a better-sqlite3 Database');
  }
  let store = stores.get(db);
  if (store) return store;
  if (isSqlite(db)) {
    store = new SqliteStore(db);
  } else if (isPgPool(db)) {
    store = new PgStore(db);
  } else if (isPgClient(db)) {
    throw new UnsupportedDatabaseError(
      'receiver: db is a single pg Client, which would share one transaction between concurrent deliveries: pass a pg Pool',
    );
  } else {
    throw new UnsupportedDatabaseError('receiver: db must be a pg Pool or a better-sqlite3 Database');
  }
  stores.set(db, store);
  return store;
}

/**
 * PgStore runs each delivery on its own client, checked out of the pool for
 * the transaction and released after it. Two concurrent deliveries of one id
 * are kept apart by the primary key: the second insert waits for the first
 * transaction and then finds the row (or inserts it, if the first rolled
 * back).
 */
class PgStore {
  dialect = 'postgres';

  constructor(pool) {
    this.pool = pool;
  }

  async createTable() {
    try {
      await this.pool.query(CREATE_TABLE);
      await this.pool.query(CREATE_INDEX);
    } catch (err) {
      throw new DatabaseError('create table', err);
    }
  }

  async purge(beforeMs) {
    try {
      const r = await this.pool.query('DELETE FROM processed_webhook_events WHERE received_at < $1', [timeArg(beforeMs)]);
      return r.rowCount ?? 0;
    } catch (err) {
      throw new DatabaseError('purge', err);
    }
  }

  /**
   * transact records eventId in a new transaction and, if it is new, calls
   * run(client); then it commits. It returns whether the id was new. Any
   * failure rolls back and rejects; nothing is committed.
   */
  async transact(eventId, receivedAtMs, run) {
    let client;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw new DatabaseError('begin', err);
    }
    let committed = false;
    let broken;
    try {
      await step('begin', () => client.query('BEGIN'));
      const r = await step('record event id', () =>
        client.query(
          'INSERT INTO processed_webhook_events (event_id, received_at) VALUES ($1, $2) ON CONFLICT (event_id) DO NOTHING',
          [eventId, timeArg(receivedAtMs)],
        ),
      );
      const isNew = r.rowCount === 1;
      if (isNew) await run(client);
      await step('commit', () => client.query('COMMIT'));
      committed = true;
      return isNew;
    } finally {
      if (!committed) {
        try {
          await client.query('ROLLBACK');
        } catch (err) {
          // A client that cannot roll back must not go back to the pool
          // with a transaction open.
          broken = err;
        }
      }
      client.release(broken);
    }
  }
}

/**
 * SqliteStore runs one transaction at a time on its Database. better-sqlite3
 * is synchronous and a connection holds one transaction: while an async
 * handler awaits, another delivery's BEGIN on the same connection would fail
 * or, worse, its statements would join the first transaction. So the
 * deliveries on one Database queue here, in arrival order; across processes,
 * BEGIN IMMEDIATE takes SQLite's write lock at once (waiting up to the
 * Database's busy timeout), so that no transaction reads and then fails to
 * upgrade.
 */
class SqliteStore {
  dialect = 'sqlite';
  #tail = Promise.resolve();

  constructor(db) {
    this.db = db;
  }

  /** exclusive runs fn after every earlier one on this Database has finished. */
  exclusive(fn) {
    const run = this.#tail.then(fn);
    this.#tail = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  createTable() {
    return this.exclusive(() => {
      try {
        this.db.exec(CREATE_TABLE);
        this.db.exec(CREATE_INDEX);
      } catch (err) {
        throw new DatabaseError('create table', err);
      }
    });
  }

  purge(beforeMs) {
    return this.exclusive(() => {
      try {
        return this.db.prepare('DELETE FROM processed_webhook_events WHERE received_at < ?').run(timeArg(beforeMs)).changes;
      } catch (err) {
        throw new DatabaseError('purge', err);
      }
    });
  }

  transact(eventId, receivedAtMs, run) {
    return this.exclusive(async () => {
      const db = this.db;
      try {
        db.exec('BEGIN IMMEDIATE');
      } catch (err) {
        throw new DatabaseError('begin', err);
      }
      let committed = false;
      try {
        let isNew;
        try {
          const r = db
            .prepare('INSERT INTO processed_webhook_events (event_id, received_at) VALUES (?, ?) ON CONFLICT (event_id) DO NOTHING')
            .run(eventId, timeArg(receivedAtMs));
          isNew = r.changes === 1;
        } catch (err) {
          throw new DatabaseError('record event id', err);
        }
        if (isNew) await run(db);
        try {
          db.exec('COMMIT');
        } catch (err) {
          throw new DatabaseError('commit', err);
        }
        committed = true;
        return isNew;
      } finally {
        // A failed COMMIT (a deferred foreign key, say) leaves SQLite's
        // transaction open: roll it back too.
        if (!committed && db.inTransaction) {
          try {
            db.exec('ROLLBACK');
          } catch {
            // The error that brought us here is the one to report; SQLite
            // ends the transaction itself when a rollback cannot run.
          }
        }
      }
    });
  }
}

async function step(name, fn) {
  try {
    return await fn();
  } catch (err) {
    throw new DatabaseError(name, err);
  }
}

/** checkRetention throws a RangeError unless olderThanMs is a number of milliseconds, 0 or more. */
export function checkRetention(olderThanMs) {
  if (typeof olderThanMs !== 'number' || !Number.isFinite(olderThanMs) || olderThanMs < 0) {
    throw new RangeError('receiver: olderThanMs must be a number of milliseconds, 0 or more (DEFAULT_RETENTION_MS, say)');
  }
}

/**
 * createTable creates processed_webhook_events and its received_at index if
 * they do not exist:
 *
 *   CREATE TABLE processed_webhook_events (
 *     event_id    CHAR(36)  NOT NULL PRIMARY KEY,
 *     received_at TIMESTAMP NOT NULL
 *   );
 *   CREATE INDEX processed_webhook_events_received_at ON processed_webhook_events (received_at);
 *
 * @param db a pg Pool or a better-sqlite3 Database
 */
export async function createTable(db) {
  await storeFor(db).createTable();
}

/**
 * purge deletes the ids received more than olderThanMs ago and resolves to
 * how many it deleted. Run it on a schedule with DEFAULT_RETENTION_MS, or
 * MANUAL_RESEND_RETENTION_MS if you resend deliveries by hand: an id purged
 * too early lets a late copy of its event run the handler again.
 *
 * @param db a pg Pool or a better-sqlite3 Database
 * @param {number} olderThanMs
 * @param {Date|number} [now]
 */
export async function purge(db, olderThanMs, now = Date.now()) {
  checkRetention(olderThanMs);
  const store = storeFor(db);
  return store.purge(+now - olderThanMs);
}
