// The handler on node:http and in Express: the raw body read from the
// stream or taken from express.raw(), and a clear failure after
// express.json().

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import express from 'express';
import { Receiver } from '../index.js';
import { Clock, SECRET, eventBody, newID, signedHeaders } from './support.js';

const dir = mkdtempSync(join(tmpdir(), 'webhooks-node-http-'));
const db = new Database(join(dir, 'app.db'));
db.exec('CREATE TABLE effects (event_id TEXT NOT NULL)');
const clock = new Clock(Date.now());
const logged = [];
let runs = 0;
const receiver = new Receiver({
  db,
  secrets: [SECRET],
  maxBodyBytes: 4096,
  now: clock.now,
  logger: { warn: (msg, fields) => logged.push(['warn', msg, fields]), error: (msg, fields) => logged.push(['error', msg, fields]) },
  async handle(ev, tx) {
    runs++;
    tx.prepare('INSERT INTO effects (event_id) VALUES (?)').run(ev.id);
  },
});
await receiver.createTable();
after(() => {
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

async function listen(handler) {
  const server = http.createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${server.address().port}` };
}

function post(url, body, headers = signedHeaders(body, clock)) {
  return fetch(url, { method: 'POST', headers, body });
}

const effects = (id) => db.prepare('SELECT COUNT(*) AS n FROM effects WHERE event_id = ?').get(id).n;

describe('node:http', () => {
  let s;
  before(async () => {
    s = await listen(receiver.handler);
  });
  after(() => s.server.close());

  it('answers a delivery and its repeat', async () => {
    const id = newID();
    const body = eventBody(id);
    let r = await post(s.url, body);
    assert.deepEqual([r.status, await r.text()], [200, 'processed\n']);
    assert.equal(r.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    r = await post(s.url, body);
    assert.deepEqual([r.status, await r.text()], [200, 'already processed\n']);
    assert.equal(effects(id), 1);
  });

  it('runs the handler once for concurrent copies over HTTP', async () => {
    const id = newID();
    const body = eventBody(id);
    const before = runs;
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(s.url, body)));
    assert.deepEqual(answers.map((r) => r.status), Array(20).fill(200));
    assert.equal(runs - before, 1, 'handler runs');
    assert.equal(effects(id), 1);
  });

  it('answers 405 with Allow to other methods, without reading the body', async () => {
    const r = await fetch(s.url, { method: 'GET' });
    assert.equal(r.status, 405);
    assert.equal(r.headers.get('allow'), 'POST');
    assert.match(await r.text(), /method GET not allowed/);
  });

  it('answers 401 and logs a warning for an unsigned delivery', async () => {
    logged.length = 0;
    const r = await post(s.url, eventBody(newID()), { 'content-type': 'application/json' });
    assert.equal(r.status, 401);
    assert.equal(await r.text(), 'receiver: invalid signature: signature: header is missing\n');
    assert.deepEqual(logged.map(([level, , f]) => [level, f.status]), [['warn', 401]]);
  });

  it('answers 400 for a correctly signed body that is not JSON, and keeps serving', async () => {
    const r = await post(s.url, 'this is not JSON');
    assert.equal(r.status, 400);
    assert.match(await r.text(), /^receiver: invalid event: /);
    assert.equal((await post(s.url, eventBody(newID()))).status, 200);
  });

  it('answers 413 to a body over the limit, declared or streamed', async () => {
    const big = eventBody(newID(), { pad: 'x'.repeat(5000) });
    let r = await post(s.url, big);
    assert.equal(r.status, 413);
    assert.equal(await r.text(), 'receiver: body too large: over 4096 bytes\n');
    // Chunked, without a Content-Length: the limit applies while reading.
    const { status, text } = await new Promise((resolve, reject) => {
      const req = http.request(s.url, { method: 'POST', headers: signedHeaders(big, clock) }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode, text }));
      });
      req.on('error', reject);
      for (let i = 0; i < big.length; i += 1000) req.write(big.slice(i, i + 1000));
      req.end();
    });
    assert.equal(status, 413);
    assert.equal(text, 'receiver: body too large: over 4096 bytes\n');
    r = await post(s.url, eventBody(newID()));
    assert.equal(r.status, 200, 'the server still serves');
  });

  it('answers 500 without the handler error when the handler fails', async () => {
    const failing = new Receiver({
      db,
      secrets: [SECRET],
      now: clock.now,
      logger: { warn() {}, error: (msg, fields) => logged.push(['error', msg, fields]) },
      handle() {
        throw new Error('the ledger is locked');
      },
    });
    const f = await listen(failing.handler);
    try {
      logged.length = 0;
      const r = await post(f.url, eventBody(newID()));
      assert.deepEqual([r.status, await r.text()], [500, 'internal error\n']);
      assert.equal(logged.length, 1);
      assert.match(logged[0][2].error.message, /the ledger is locked/, 'the log has the handler error');
    } finally {
      f.server.close();
    }
  });
});

describe('Express', () => {
  let s;
  before(async () => {
    const app = express();
    app.post('/raw', express.raw({ type: '*/*' }), receiver.handler);
    app.post('/plain', receiver.handler);
    app.post('/text', express.text({ type: '*/*' }), receiver.handler);
    app.use(express.json());
    app.post('/json', receiver.handler);
    s = await listen(app);
  });
  after(() => s.server.close());

  it('takes the Buffer of express.raw()', async () => {
    const id = newID();
    const r = await post(`${s.url}/raw`, eventBody(id));
    assert.deepEqual([r.status, await r.text()], [200, 'processed\n']);
    assert.equal(effects(id), 1);
  });

  it('reads the stream when no body parser ran', async () => {
    const id = newID();
    const r = await post(`${s.url}/plain`, eventBody(id));
    assert.deepEqual([r.status, await r.text()], [200, 'processed\n']);
    const bad = await post(`${s.url}/plain`, '{"id":');
    assert.equal(bad.status, 400);
  });

  for (const [route, what] of [
    ['/json', 'req.body is an object'],
    ['/text', 'req.body is a string'],
  ]) {
    it(`fails clearly after a body parser (${route})`, async () => {
      logged.length = 0;
      const id = newID();
      const r = await post(`${s.url}${route}`, eventBody(id));
      const text = await r.text();
      assert.equal(r.status, 500);
      assert.ok(text.includes(what), `got ${JSON.stringify(text)}`);
      assert.ok(text.includes('mount the webhook handler before express.json()'), `got ${JSON.stringify(text)}`);
      assert.equal(logged[0]?.[0], 'error', 'logged as an error');
      assert.equal(effects(id), 0);
    });
  }
});
