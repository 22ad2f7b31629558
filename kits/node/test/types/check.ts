// Compiled (not run) by types.test.js: index.d.ts describes the package as a
// TypeScript customer uses it, through the package's own name and exports.

import http from 'node:http';
import Database from 'better-sqlite3';
import express from 'express';
import pg from 'pg';
import {
  DEFAULT_RETENTION_MS,
  InvalidSignatureError,
  Receiver,
  purge,
  sign,
  verify,
  type Event,
  type ReceiverResponse,
} from '@factuarea/webhooks-receiver';

const pool = new pg.Pool();
const onPostgres = new Receiver({
  db: pool,
  secrets: [process.env.FACTUAREA_WEBHOOK_SECRET ?? ''],
  async handle(event, tx, delivery) {
    await tx.query('INSERT INTO sent_invoices (invoice_id) VALUES ($1)', [event.data?.object?.id]);
    const deliveryId: string | undefined = delivery.headers?.deliveryId;
    void deliveryId;
  },
});
http.createServer(onPostgres.handler);

const db = new Database(':memory:');
const onSqlite = new Receiver({
  db,
  secrets: 'whsec_x',
  scheme: 'standard',
  logger: false,
  handle(event: Event, tx) {
    tx.prepare('INSERT INTO effects (event_id) VALUES (?)').run(event.id);
  },
});
const app = express();
app.post('/webhooks', onSqlite.handler);

new Receiver({
  db,
  secrets: ['whsec_x'],
  handle(_event, tx) {
    // @ts-expect-error: on SQLite the transaction is the Database, which has no query()
    tx.query('SELECT 1');
  },
});

// @ts-expect-error: scheme is one of three words
new Receiver({ db, secrets: ['whsec_x'], handle() {}, scheme: 'svix' });

async function lowLevel(): Promise<ReceiverResponse> {
  const body = '{}';
  try {
    verify({ 'factuarea-signature': sign(body, ['whsec_x']) }, body, ['whsec_x']);
  } catch (err) {
    if (err instanceof InvalidSignatureError) console.log(err.reason, err.status);
  }
  const deleted: number = await purge(db, DEFAULT_RETENTION_MS);
  void deleted;
  const processed: boolean = await onSqlite.process({ id: 'x', type: 'ping', livemode: true, test: false });
  void processed;
  return onSqlite.respond({ method: 'POST', headers: new Headers(), body: Buffer.from(body) });
}
void lowLevel;
