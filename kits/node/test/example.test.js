// The example receiver (example/server.js) as the end-to-end test starts it:
// a process reading PORT, WEBHOOK_SECRETS, WEBHOOK_SCHEME and DATABASE_URL,
// on SQLite and on PostgreSQL.

import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Clock, OTHER_SECRET, SECRET, backends, eventBody, newID, signedHeaders } from './support.js';

const SERVER = fileURLToPath(new URL('../example/server.js', import.meta.url));
const all = await backends();
const dir = mkdtempSync(join(tmpdir(), 'webhooks-node-example-'));
after(async () => {
  for (const b of all) await b.close();
  rmSync(dir, { recursive: true, force: true });
});

async function freePort() {
  const s = net.createServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const { port } = s.address();
  s.close();
  return port;
}

/** start runs the example and resolves once it has printed its one line. */
async function start(env) {
  const port = await freePort();
  const child = spawn(process.execPath, [SERVER], {
    env: { ...process.env, PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (c) => {
      stdout += c;
      if (stdout.includes('\n')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`the example exited with ${code} before listening:\n${stderr}`)));
  });
  assert.equal(stdout, `listening on 127.0.0.1:${port}\n`);
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    stderr: () => stderr,
    async stop() {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = await exited;
      assert.equal(code, 0, `exit status after SIGTERM; stderr:\n${stderr}`);
    },
  };
}

for (const b of all) {
  describe(`example on ${b.name}`, () => {
    const databaseURL = () => (b.name === 'sqlite' ? `sqlite:${join(dir, 'example.db')}` : b.url);

    async function effects(id) {
      if (b.name === 'sqlite') {
        const db = new Database(join(dir, 'example.db'), { readonly: true });
        try {
          return db.prepare('SELECT event_id, type, api_version, account_relationship, object_id FROM webhook_effects WHERE event_id = ?').all(id);
        } finally {
          db.close();
        }
      }
      const c = new pg.Client({ connectionString: b.url });
      await c.connect();
      try {
        return (await c.query('SELECT event_id, type, api_version, account_relationship, object_id FROM webhook_effects WHERE event_id = $1', [id])).rows;
      } finally {
        await c.end();
      }
    }

    it('records each event once, rolls back a failing one, and stops on SIGTERM', async () => {
      // Mid-rotation: the example knows both secrets; the sender signs with both.
      const ex = await start({ WEBHOOK_SECRETS: `${OTHER_SECRET},${SECRET}`, DATABASE_URL: databaseURL() });
      const clock = new Clock(Date.now());
      const post = (body, opts) => fetch(ex.url, { method: 'POST', headers: signedHeaders(body, clock, opts), body });
      try {
        const id = newID();
        const body = eventBody(id);
        const answers = await Promise.all(Array.from({ length: 10 }, () => post(body, { secrets: [OTHER_SECRET, SECRET] })));
        assert.deepEqual(answers.map((r) => r.status), Array(10).fill(200));
        assert.deepEqual(await effects(id), [
          { event_id: id, type: 'invoice.sent', api_version: '2026-09-23', account_relationship: null, object_id: '01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42' },
        ]);
        // Signed with the old secret only: still accepted, still a repeat.
        const r = await post(body);
        assert.deepEqual([r.status, await r.text()], [200, 'already processed\n']);

        const failing = newID();
        const f = await post(eventBody(failing, { fail: true }));
        assert.equal(f.status, 500);
        assert.deepEqual(await effects(failing), [], 'the failing event left a row');

        assert.equal((await post('not json')).status, 400);
        assert.equal((await fetch(ex.url, { method: 'POST', body })).status, 401);
        assert.equal((await fetch(ex.url)).status, 405);
      } finally {
        await ex.stop();
      }
    });

    it('verifies only Standard Webhooks headers with WEBHOOK_SCHEME=standard', async () => {
      const ex = await start({ WEBHOOK_SECRETS: SECRET, WEBHOOK_SCHEME: 'standard', DATABASE_URL: databaseURL() });
      const clock = new Clock(Date.now());
      try {
        const id = newID();
        const body = eventBody(id);
        let r = await fetch(ex.url, { method: 'POST', headers: signedHeaders(body, clock), body });
        assert.equal(r.status, 401, 'Factuarea-Signature alone');
        r = await fetch(ex.url, { method: 'POST', headers: signedHeaders(body, clock, { scheme: 'standard' }), body });
        assert.deepEqual([r.status, await r.text()], [200, 'processed\n']);
        assert.equal((await effects(id)).length, 1);
      } finally {
        await ex.stop();
      }
    });
  });
}

it('refuses to start without its settings', async () => {
  const child = spawn(process.execPath, [SERVER], { env: { ...process.env, PORT: '1', WEBHOOK_SECRETS: '', DATABASE_URL: 'sqlite:/x' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const [code] = await once(child, 'exit');
  assert.equal(code, 2);
  assert.match(stderr, /WEBHOOK_SECRETS is empty/);
});
