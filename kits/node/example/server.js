// The example receiver of the kit, used as a customer would use it; the
// cross-kit end-to-end test (kits/e2e) starts it against the real service.
//
//   PORT=9000 WEBHOOK_SECRETS=whsec_new,whsec_old DATABASE_URL=sqlite:/tmp/app.db node example/server.js
//
// PORT             listen on 127.0.0.1:$PORT
// WEBHOOK_SECRETS  the endpoint's secrets, comma-separated, new first
// WEBHOOK_SCHEME   any (default), factuarea or standard
// DATABASE_URL     sqlite:<absolute path> or postgres://…
//
// POST /webhooks records each event's effect once in webhook_effects, a
// table with no unique key so that a double effect would show. An event whose
// data.object.fail is true writes its row and then fails: the kit must roll
// the row back and answer 500.

import http from 'node:http';
import { isAbsolute } from 'node:path';
import { Receiver } from '@factuarea/webhooks-receiver';

const CREATE_EFFECTS = `CREATE TABLE IF NOT EXISTS webhook_effects (
  event_id             VARCHAR(64)  NOT NULL,
  type                 VARCHAR(200) NOT NULL,
  api_version          VARCHAR(20)  NOT NULL,
  account_relationship VARCHAR(10),
  object_id            VARCHAR(64)
)`;

function fatal(message) {
  console.error(`example: ${message}`);
  process.exit(2);
}

/** open returns the database of DATABASE_URL, how to write an effect in a transaction, and how to close it. */
async function open(url) {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length).replace(/^\/\/(?=\/)/, '');
    if (!isAbsolute(path)) fatal(`DATABASE_URL: sqlite: needs an absolute path, got ${JSON.stringify(path)}`);
    const { default: Database } = await import('better-sqlite3');
    // WAL lets others read the file while a delivery writes; the busy
    // timeout makes another process's writer wait rather than fail.
    const db = new Database(path, { timeout: 5000 });
    db.pragma('journal_mode = WAL');
    db.exec(CREATE_EFFECTS);
    const insert = db.prepare('INSERT INTO webhook_effects (event_id, type, api_version, account_relationship, object_id) VALUES (?, ?, ?, ?, ?)');
    return { db, write: (tx, row) => void insert.run(...row), close: () => db.close() };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const { default: pg } = await import('pg');
    const db = new pg.Pool({ connectionString: url });
    db.on('error', (err) => console.error('example: idle PostgreSQL client:', err.message));
    await db.query(CREATE_EFFECTS);
    return {
      db,
      write: (tx, row) =>
        tx.query('INSERT INTO webhook_effects (event_id, type, api_version, account_relationship, object_id) VALUES ($1, $2, $3, $4, $5)', row),
      close: () => db.end(),
    };
  }
  fatal(`DATABASE_URL must be sqlite:<absolute path> or postgres://…, got ${JSON.stringify(url)}`);
}

const port = Number(process.env.PORT);
if (!Number.isInteger(port) || port <= 0 || port > 65535) fatal(`PORT must be a port number, got ${JSON.stringify(process.env.PORT)}`);
const secrets = (process.env.WEBHOOK_SECRETS ?? '')
  .split(',')
  .map((s) => s.trim())
  .filter(Boolean);
if (secrets.length === 0) fatal('WEBHOOK_SECRETS is empty: give the endpoint secret (two during a rotation, new first)');
if (!process.env.DATABASE_URL) fatal('DATABASE_URL is required');

const store = await open(process.env.DATABASE_URL);

const receiver = new Receiver({
  db: store.db,
  secrets,
  scheme: process.env.WEBHOOK_SCHEME || 'any',
  // Runs once per event id, inside the transaction that records the id.
  async handle(event, tx) {
    const object = event.data?.object;
    await store.write(tx, [
      event.id,
      event.type,
      event.api_version ?? '',
      event.account_relationship ?? null,
      typeof object?.id === 'string' ? object.id : null,
    ]);
    if (object?.fail === true) throw new Error(`event ${event.id} asked to fail`);
  },
});
await receiver.createTable();

const server = http.createServer((req, res) => {
  if (new URL(req.url, 'http://x').pathname === '/webhooks') return receiver.handler(req, res);
  res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found\n');
});
server.on('error', (err) => fatal(err.message));
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`listening on 127.0.0.1:${port}\n`);
});

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  server.close();
  server.closeAllConnections();
  try {
    await store.close();
  } catch (err) {
    console.error('example: close the database:', err.message);
  }
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
