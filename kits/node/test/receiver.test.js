// The recipe on both databases: the answer table, one effect per event id
// under concurrent copies, rollback on a handler error or a failed commit,
// and the purge.

import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_RETENTION_MS,
  MANUAL_RESEND_RETENTION_MS,
  Receiver,
  purge,
  sign,
} from '../index.js';
import { Clock, OTHER_SECRET, SECRET, backends, eventBody, newID, signedHeaders } from './support.js';

const all = await backends();
after(async () => {
  for (const b of all) await b.close();
});

const DAY = 24 * 60 * 60 * 1000;

/** setup returns a receiver on a fresh database of backend b, with a clock. */
async function setup(b, handle, options = {}) {
  const f = await b.fresh(options.pool);
  const clock = new Clock();
  const receiver = new Receiver({ db: f.db, secrets: [SECRET], handle, now: clock.now, logger: false, ...options.receiver });
  await receiver.createTable();
  const deliver = (body, opts) =>
    receiver.respond({ method: 'POST', headers: signedHeaders(body, clock, opts), body: Buffer.from(body) });
  return { ...f, clock, receiver, deliver };
}

for (const b of all) {
  describe(b.name, () => {
    // One event delivered 50 times at once, each copy signed and with its own
    // delivery id, as when a retry overlaps a slow first attempt or two
    // endpoints share a URL: all answer 200 and the handler runs once.
    it('runs the handler once for concurrent copies of one event', async () => {
      let runs = 0;
      const f = await setup(b, async (ev, tx) => {
        runs++;
        // Hold the transaction open so that the other copies arrive while
        // the first is uncommitted.
        await sleep(20);
        await f.insertEffect(tx, ev.id);
      });
      const id = newID();
      const body = eventBody(id);
      const answers = await Promise.all(Array.from({ length: 50 }, () => f.deliver(body)));
      for (const [i, a] of answers.entries()) assert.equal(a.status, 200, `copy ${i}: got ${a.status} ${a.body}`);
      assert.equal(answers.filter((a) => a.body === 'processed\n').length, 1, 'copies answered "processed"');
      assert.equal(runs, 1, 'handler runs');
      assert.equal(await f.count('effects', id), 1, 'effects');
      assert.equal(await f.count('processed_webhook_events', id), 1, 'processed ids');
    });

    it('answers a repeat 200 without running the handler', async () => {
      let runs = 0;
      const f = await setup(b, async (ev, tx) => {
        runs++;
        await f.insertEffect(tx, ev.id);
      });
      const id = newID();
      let a = await f.deliver(eventBody(id));
      assert.deepEqual([a.status, a.body], [200, 'processed\n']);
      assert.equal(a.headers['content-type'], 'text/plain; charset=utf-8');
      f.clock.add(60 * 60 * 1000);
      a = await f.deliver(eventBody(id));
      assert.deepEqual([a.status, a.body], [200, 'already processed\n']);
      assert.equal(runs, 1, 'handler runs');
      // Another event about the same invoice has its own id: not a repeat.
      a = await f.deliver(eventBody(newID()));
      assert.deepEqual([a.status, a.body, runs], [200, 'processed\n', 2]);
    });

    // A handler that fails once and then succeeds produces one effect after
    // the sender's retry. The first attempt answers 500 and leaves nothing
    // behind, not even the id, so that the retry runs the handler again.
    for (const mode of ['throw', 'reject']) {
      it(`rolls back when the handler fails (${mode})`, async () => {
        let runs = 0;
        const f = await setup(b, (ev, tx) => {
          // The effect is written before the failure, so the test shows that
          // the rollback removes it.
          const written = f.insertEffect(tx, ev.id);
          if (++runs === 1) {
            if (mode === 'throw' && b.name === 'sqlite') throw new Error('the ledger is locked');
            return Promise.resolve(written).then(() => {
              throw new Error('the ledger is locked');
            });
          }
          return written;
        });
        const id = newID();
        const body = eventBody(id);
        let a = await f.deliver(body);
        assert.equal(a.status, 500, `first attempt: got ${a.status} ${a.body}`);
        assert.ok(!a.body.includes('ledger'), `first attempt: got body ${JSON.stringify(a.body)}, which reveals the handler's error`);
        assert.equal(await f.count('effects', id), 0, 'effects after the failed attempt');
        assert.equal(await f.count('processed_webhook_events', id), 0, 'processed ids after the failed attempt');

        f.clock.add(60 * 1000); // the first wait of the schedule
        a = await f.deliver(body);
        assert.deepEqual([a.status, a.body], [200, 'processed\n'], 'retry');
        f.clock.add(60 * 1000);
        a = await f.deliver(body);
        assert.deepEqual([a.status, a.body], [200, 'already processed\n'], 'repeat after success');
        assert.equal(runs, 2, 'handler runs: the failure and the retry');
        assert.equal(await f.count('effects', id), 1, 'effects');
      });
    }

    // A foreign key checked only at commit makes the commit itself fail: the
    // answer is 500 and the id is not recorded.
    it('answers 500 and records nothing when the commit fails', async () => {
      let runs = 0;
      const f = await setup(b, async (ev, tx) => {
        runs++;
        if (b.name === 'sqlite') tx.prepare('INSERT INTO children (parent_id) VALUES (42)').run();
        else await tx.query('INSERT INTO children (parent_id) VALUES (42)');
      });
      if (b.name === 'sqlite') f.db.pragma('foreign_keys = ON');
      await f.exec('CREATE TABLE parents (id INTEGER PRIMARY KEY)');
      await f.exec('CREATE TABLE children (parent_id INTEGER REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)');
      const id = newID();
      const a = await f.deliver(eventBody(id));
      assert.equal(a.status, 500, `got ${a.status} ${a.body}`);
      assert.equal(runs, 1, 'handler runs');
      assert.equal(await f.count('processed_webhook_events', id), 0, 'processed ids');
      if (b.name === 'sqlite') assert.equal(f.db.inTransaction, false, 'the failed commit left a transaction open');
      // The connection is usable again: another event goes through.
      await f.exec('DROP TABLE children');
      await f.exec('CREATE TABLE children (parent_id INTEGER)');
      assert.equal((await f.deliver(eventBody(newID()))).status, 200);
    });

    // Every refusal: the status, the text that says which check failed, that
    // the handler did not run and that no id was recorded.
    it('refuses what is not a correctly signed event', async () => {
      let runs = 0;
      const f = await setup(b, () => {
        runs++;
      });
      const now = f.clock.seconds;
      const id = newID();
      const good = eventBody(id);
      const signed = (body) => ({ body, sig: sign(body, SECRET, now) });
      const big = `{"id":"${id}","type":"invoice.sent","pad":"${'x'.repeat(DEFAULT_MAX_BODY_BYTES)}"}`;
      const cases = [
        ['no signature', 'POST', { body: good, sig: undefined }, 401, 'header is missing'],
        ['wrong secret', 'POST', { body: good, sig: sign(good, 'whsec_other', now) }, 401, 'no v1 signature matches'],
        ['body changed after signing', 'POST', { body: `${good} `, sig: sign(good, SECRET, now) }, 401, 'no v1 signature matches'],
        ['an hour old', 'POST', { body: good, sig: sign(good, SECRET, now - 3600) }, 401, 'outside the tolerance'],
        ['from the future', 'POST', { body: good, sig: sign(good, SECRET, now + 600) }, 401, 'outside the tolerance'],
        ['garbage header', 'POST', { body: good, sig: 't=abc,v1=zz' }, 401, 'no valid timestamp'],
        ['not JSON', 'POST', signed(`{"id":"${id}","type":`), 400, 'invalid event'],
        ['not JSON at all', 'POST', signed('hello'), 400, 'invalid event'],
        ['empty body', 'POST', signed(''), 400, 'invalid event'],
        ['array', 'POST', signed('[]'), 400, 'invalid event'],
        ['null', 'POST', signed('null'), 400, 'invalid event'],
        ['no id', 'POST', signed('{"type":"invoice.sent"}'), 400, 'no id'],
        ['id not a UUID', 'POST', signed('{"id":"evt_123","type":"invoice.sent"}'), 400, 'not a canonical lowercase UUID'],
        ['uppercase id', 'POST', signed(`{"id":"${id.toUpperCase()}","type":"invoice.sent"}`), 400, 'not a canonical lowercase UUID'],
        ['numeric id', 'POST', signed('{"id":42,"type":"invoice.sent"}'), 400, 'id is not a string'],
        ['no type', 'POST', signed(`{"id":"${id}"}`), 400, 'no type'],
        ['data not an object', 'POST', signed(`{"id":"${id}","type":"invoice.sent","data":"x"}`), 400, 'data is not an object'],
        ['GET', 'GET', { body: '', sig: undefined }, 405, 'not allowed'],
        ['PUT', 'PUT', { body: good, sig: sign(good, SECRET, now) }, 405, 'not allowed'],
        ['too large', 'POST', signed(big), 413, 'too large'],
      ];
      for (const [name, method, { body, sig }, want, inBody] of cases) {
        const headers = { 'content-type': 'application/json' };
        if (sig !== undefined) headers['Factuarea-Signature'] = sig;
        const a = await f.receiver.respond({ method, headers, body: Buffer.from(body) });
        assert.equal(a.status, want, `${name}: got ${a.status} ${JSON.stringify(a.body)}, want ${want}`);
        assert.ok(a.body.includes(inBody), `${name}: got body ${JSON.stringify(a.body)}, want it to contain ${JSON.stringify(inBody)}`);
        assert.equal(a.headers['content-type'], 'text/plain; charset=utf-8', name);
        if (want === 405) assert.equal(a.headers.allow, 'POST', `${name}: Allow`);
      }
      assert.equal(runs, 0, 'handler runs');
      assert.equal(await f.count('processed_webhook_events'), 0, 'processed ids');
    });

    // What the handler receives: the parsed account envelope, the headers,
    // and a transaction in which the id is already recorded. The endpoint is
    // mid-rotation: the receiver knows the new and the old secret, and the
    // sender still signs with the old one.
    it('gives the handler the event, the headers and its transaction', async () => {
      let got;
      let inTx;
      const f = await setup(
        b,
        async (ev, tx, delivery) => {
          got = { ev, delivery };
          const q = 'SELECT COUNT(*) AS n FROM processed_webhook_events WHERE event_id = ';
          inTx = b.name === 'sqlite' ? tx.prepare(`${q}?`).get(ev.id).n : Number((await tx.query(`${q}$1`, [ev.id])).rows[0].n);
        },
        { receiver: { secrets: [OTHER_SECRET, SECRET] } },
      );
      const body = JSON.stringify({
        id: '01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31',
        type: 'invoice.sent',
        api_version: '2026-09-23',
        created: 1790590561,
        test: false,
        correlation_id: null,
        account: { id: '01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a00' },
        account_relationship: 'managed',
        company_id: '01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a11',
        data: { type: 'invoice.sent', object: { object: 'invoice', id: '01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42' } },
        some_future_field: [1, 2],
      });
      const headers = {
        'Factuarea-Signature': sign(body, SECRET, f.clock.seconds),
        'Factuarea-Event-Id': '01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31',
        'Factuarea-Event-Type': 'invoice.sent',
        'Factuarea-Delivery-Id': '01a0e783-abe2-7a3f-b5d8-4e9a6c1b7d23',
        'Idempotency-Key': '01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31',
        'Factuarea-Account-Relationship': 'managed',
      };
      const a = await f.receiver.respond({ method: 'POST', headers, body: Buffer.from(body) });
      assert.equal(a.status, 200, a.body);
      assert.equal(inTx, 1, 'id rows seen in the handler transaction');
      assert.deepEqual(got.delivery.headers, {
        eventId: '01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31',
        eventType: 'invoice.sent',
        deliveryId: '01a0e783-abe2-7a3f-b5d8-4e9a6c1b7d23',
        accountRelationship: 'managed',
        idempotencyKey: '01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31',
      });
      assert.equal(got.delivery.scheme, 'factuarea');
      assert.equal(got.delivery.raw.toString(), body, 'raw: the body as received');
      assert.equal(got.ev.id, '01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31');
      assert.equal(got.ev.account.id, '01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a00');
      assert.equal(got.ev.account_relationship, 'managed');
      assert.equal(got.ev.data.object.id, '01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42');
      assert.equal(got.ev.livemode, true, 'livemode defaults to true when omitted');
      assert.deepEqual(got.ev.some_future_field, [1, 2], 'unknown fields are kept');
    });

    it('accepts Standard Webhooks headers, and keeps the event id as the key', async () => {
      let runs = 0;
      const f = await setup(b, () => {
        runs++;
      });
      const id = newID();
      const body = eventBody(id);
      let a = await f.deliver(body, { scheme: 'standard' });
      assert.deepEqual([a.status, a.body], [200, 'processed\n']);
      // The same event signed the other way is the same event.
      a = await f.deliver(body, { scheme: 'factuarea' });
      assert.deepEqual([a.status, a.body], [200, 'already processed\n']);
      assert.equal(runs, 1);
    });

    // webhook-id is signed and is the event id: a delivery where it is
    // another id would give the event two deduplication keys, so it is
    // refused as an invalid event (400), as the other kits refuse it.
    it('refuses Standard Webhooks headers whose webhook-id is not the body id', async () => {
      let runs = 0;
      const f = await setup(b, () => {
        runs++;
      });
      const id = newID();
      const other = newID();
      const a = await f.deliver(eventBody(id), { scheme: 'standard', id: other });
      assert.equal(a.status, 400, `got ${a.status} ${JSON.stringify(a.body)}`);
      assert.equal(a.body, `receiver: invalid event: webhook-id ${JSON.stringify(other)} is not the body's id ${id}\n`);
      assert.equal(runs, 0, 'handler runs');
      assert.equal(await f.count('processed_webhook_events'), 0, 'processed ids');
      // With Factuarea-Signature beside it, scheme "any" verifies that one
      // and webhook-id is not what was checked.
      const both = await f.deliver(eventBody(id), { scheme: 'both', id: other });
      assert.deepEqual([both.status, both.body], [200, 'processed\n']);
    });

    // Two different events at once whose handlers await: on SQLite each must
    // get a transaction of its own, so one's failure undoes only its rows.
    it('keeps concurrent transactions apart when the handler awaits', async () => {
      const f = await setup(b, async (ev, tx) => {
        await f.insertEffect(tx, ev.id, 'before');
        await sleep(10);
        await f.insertEffect(tx, ev.id, 'after');
        if (ev.data.object.fail) throw new Error('refused');
      });
      const ids = Array.from({ length: 8 }, newID);
      const answers = await Promise.all(ids.map((id, i) => f.deliver(eventBody(id, { fail: i % 2 === 1 }))));
      for (const [i, id] of ids.entries()) {
        const fail = i % 2 === 1;
        assert.equal(answers[i].status, fail ? 500 : 200, `event ${i}: ${answers[i].body}`);
        assert.equal(await f.count('effects', id), fail ? 0 : 2, `effects of event ${i}`);
        assert.equal(await f.count('processed_webhook_events', id), fail ? 0 : 1, `processed ids of event ${i}`);
      }
    });

    it('purges the ids older than the retention', async () => {
      const f = await setup(b, () => {});
      const old = newID();
      const recent = newID();
      assert.equal((await f.deliver(eventBody(old))).status, 200);
      f.clock.add(8 * DAY);
      assert.equal((await f.deliver(eventBody(recent))).status, 200);
      assert.equal(await f.receiver.purge(MANUAL_RESEND_RETENTION_MS), 0, 'purged with 90 days');
      assert.equal(await f.receiver.purge(DEFAULT_RETENTION_MS), 1, 'purged with 7 days');
      assert.equal(await f.count('processed_webhook_events', old), 0, 'the old id');
      assert.equal(await f.count('processed_webhook_events', recent), 1, 'the recent id');
      // Purged, the old event is new again: why the retention must cover
      // every resend.
      assert.equal((await f.deliver(eventBody(old))).body, 'processed\n');
      // The standalone purge, by its own clock.
      assert.equal(await purge(f.db, DEFAULT_RETENTION_MS, f.clock.ms + 8 * DAY), 2);
      await assert.rejects(f.receiver.purge(-1), RangeError);
      await assert.rejects(f.receiver.purge('7d'), RangeError);
    });

    it('stores received_at in UTC', async () => {
      const f = await setup(b, () => {});
      const id = newID();
      f.clock.ms = Date.UTC(2026, 8, 23, 10, 0, 0, 123);
      await f.deliver(eventBody(id));
      const q = `SELECT CAST(received_at AS TEXT) AS t FROM processed_webhook_events WHERE event_id = ${f.ph(1)}`;
      const t = b.name === 'sqlite' ? f.db.prepare(q).get(id).t : (await f.db.query(q, [id])).rows[0].t;
      assert.equal(t, b.name === 'sqlite' ? '2026-09-23 10:00:00.123000' : '2026-09-23 10:00:00.123');
      await f.receiver.createTable(); // a second time does nothing
      assert.equal(await f.count('processed_webhook_events'), 1);
    });
  });
}

describe('postgres pool', () => {
  // Failed deliveries give their client back: with two clients, many
  // failures in a row and then successes all get answers.
  it('releases the client of every delivery', async () => {
    const b = all.find((x) => x.name === 'postgres');
    let fail = true;
    const f = await setup(
      b,
      async (ev, tx) => {
        await tx.query('SELECT 1');
        if (fail) throw new Error('no');
      },
      { pool: { max: 2 } },
    );
    for (let i = 0; i < 10; i++) assert.equal((await f.deliver(eventBody(newID()))).status, 500);
    fail = false;
    const answers = await Promise.all(Array.from({ length: 6 }, () => f.deliver(eventBody(newID()))));
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200, 200, 200, 200]);
    assert.ok(f.db.totalCount <= 2, `pool clients: got ${f.db.totalCount}, want at most 2`);
  });
});
