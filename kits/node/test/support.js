// Shared by the tests: the two databases, signed requests and a clock.

import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { sign, signStandard } from '../index.js';

export const SECRET = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';
export const OTHER_SECRET = 'whsec_//jx6uPc1c7HwLmyq6Sdlo+IgXpzbGVeV1BJQjs0LSY=';

/** ADMIN_URL is where the PostgreSQL tests create their database. */
export const ADMIN_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/** newID returns a fresh event id in the canonical lowercase form (a v7 UUID, as the sender's). */
export function newID() {
  const b = randomBytes(16);
  const ms = BigInt(Date.now());
  for (let i = 0; i < 6; i++) b[i] = Number((ms >> BigInt(8 * (5 - i))) & 0xffn);
  b[6] = (b[6] & 0x0f) | 0x70;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** eventBody returns a company endpoint's body for event id, as the sender writes it. */
export function eventBody(id, object = {}) {
  return JSON.stringify({
    id,
    type: 'invoice.sent',
    api_version: '2026-09-23',
    created: 1790590561,
    livemode: true,
    test: false,
    correlation_id: '01a0e783-aa84-7b48-8c63-1a5e9d2f4b70',
    data: {
      type: 'invoice.sent',
      object: { object: 'invoice', id: '01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42', number: 'FAC-2026-00042', total: '1210.00', ...object },
    },
  });
}

/** Clock is a settable clock in milliseconds, for the receiver and the signer. */
export class Clock {
  constructor(ms = Date.UTC(2026, 8, 23, 10, 0, 0)) {
    this.ms = ms;
    this.now = () => this.ms;
  }
  add(ms) {
    this.ms += ms;
  }
  get seconds() {
    return Math.floor(this.ms / 1000);
  }
}

/** signed returns the headers the sender sends with body, signed at clock's time. */
export function signedHeaders(body, clock, { secrets = [SECRET], scheme = 'factuarea', id } = {}) {
  const headers = { 'content-type': 'application/json', 'factuarea-delivery-id': randomUUID() };
  if (scheme === 'factuarea' || scheme === 'both') headers['factuarea-signature'] = sign(body, secrets, clock.seconds);
  if (scheme === 'standard' || scheme === 'both') {
    const webhookId = id ?? JSON.parse(body).id;
    headers['webhook-id'] = webhookId;
    headers['webhook-timestamp'] = String(clock.seconds);
    headers['webhook-signature'] = signStandard(webhookId, body, secrets, clock.seconds);
  }
  return headers;
}

/**
 * sqliteBackend opens a fresh SQLite file for each fresh() and deletes the
 * folder at close().
 */
function sqliteBackend() {
  const dir = mkdtempSync(join(tmpdir(), 'webhooks-node-test-'));
  const open = [];
  let n = 0;
  return {
    name: 'sqlite',
    async fresh() {
      const db = new Database(join(dir, `t${++n}.db`));
      open.push(db);
      db.exec('CREATE TABLE effects (event_id TEXT NOT NULL, note TEXT)');
      return {
        db,
        ph: () => '?',
        exec: async (sql) => void db.exec(sql),
        count: async (table, id) =>
          id === undefined
            ? db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get().n
            : db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE event_id = ?`).get(id).n,
        insertEffect: (tx, id, note = null) => void tx.prepare('INSERT INTO effects (event_id, note) VALUES (?, ?)').run(id, note),
      };
    },
    async close() {
      for (const db of open) db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * postgresBackend creates a database of its own with a random name, a
 * schema in it for each fresh(), and drops the database at close(). It
 * fails, never skips, when PostgreSQL is down.
 */
async function postgresBackend() {
  const name = `webhooks_node_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 5000 });
  try {
    await admin.connect();
  } catch (err) {
    throw new Error(
      `PostgreSQL is not reachable at ${ADMIN_URL} (${err.message}): these tests need it; start it, or set TEST_DATABASE_URL`,
    );
  }
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const pools = [];
  let n = 0;
  return {
    name: 'postgres',
    url: url.toString(),
    async fresh({ max = 10 } = {}) {
      const schema = `t${++n}`;
      const setup = new pg.Client({ connectionString: url.toString() });
      await setup.connect();
      await setup.query(`CREATE SCHEMA ${schema}`);
      await setup.end();
      const db = new pg.Pool({ connectionString: url.toString(), options: `-c search_path=${schema}`, max });
      pools.push(db);
      await db.query('CREATE TABLE effects (event_id TEXT NOT NULL, note TEXT)');
      return {
        db,
        ph: (i) => `$${i}`,
        exec: async (sql) => void (await db.query(sql)),
        count: async (table, id) => {
          const r =
            id === undefined
              ? await db.query(`SELECT COUNT(*)::int AS n FROM ${table}`)
              : await db.query(`SELECT COUNT(*)::int AS n FROM ${table} WHERE event_id = $1`, [id]);
          return r.rows[0].n;
        },
        insertEffect: (tx, id, note = null) => tx.query('INSERT INTO effects (event_id, note) VALUES ($1, $2)', [id, note]),
      };
    },
    async close() {
      await Promise.all(pools.map((p) => p.end()));
      // A pool's end() resolves before its clients' sockets have closed;
      // forcing the drop would kill them mid-close. Wait for them instead.
      for (let i = 0; ; i++) {
        try {
          await admin.query(`DROP DATABASE IF EXISTS ${name}`);
          break;
        } catch (err) {
          if (err.code !== '55006' || i === 100) throw err; // object_in_use
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      await admin.end();
    },
  };
}

/** backends opens both databases; close each when done. */
export async function backends() {
  return [sqliteBackend(), await postgresBackend()];
}
