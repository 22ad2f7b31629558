// The shared vectors (copied from ../shared beside the specification): every
// kit and the sender must pass them.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { InvalidSignatureError, sign, signStandard, verifyFactuarea, verifyStandard } from '../index.js';

const load = (name) => JSON.parse(readFileSync(new URL(name, import.meta.url), 'utf8')).vectors;

test('Factuarea-Signature vectors', async (t) => {
  for (const v of load('./signature-vectors.json')) {
    await t.test(v.name, () => {
      const now = v.timestamp * 1000;
      let err;
      try {
        verifyFactuarea(v.header, Buffer.from(v.body, 'utf8'), [v.secret], now);
      } catch (e) {
        err = e;
      }
      assert.equal(err === undefined, v.valid, `got ${err ? err.message : 'valid'}, want valid=${v.valid}`);
      if (err) assert.ok(err instanceof InvalidSignatureError, `got ${err.constructor.name}, want InvalidSignatureError`);
      // What the sender signs for this secret is one of the header's v1s.
      if (v.valid) {
        const t0 = Number(/t=(\d+)/.exec(v.header)[1]);
        const ours = sign(v.body, v.secret, t0).split(',v1=')[1];
        assert.ok(v.header.includes(`v1=${ours}`), `sign: got v1=${ours}, not in ${v.header}`);
      }
    });
  }
});

test('Standard Webhooks vectors', async (t) => {
  for (const v of load('./standard-webhooks-vectors.json')) {
    await t.test(v.name, () => {
      const now = v.now * 1000;
      let err;
      try {
        verifyStandard(v.id, String(v.timestamp), v.signature, Buffer.from(v.body, 'utf8'), v.secrets, now);
      } catch (e) {
        err = e;
      }
      assert.equal(err === undefined, v.valid, `got ${err ? err.message : 'valid'}, want valid=${v.valid}`);
      if (err) assert.ok(err instanceof InvalidSignatureError, `got ${err.constructor.name}, want InvalidSignatureError`);
      if (v.valid) {
        const ours = signStandard(v.id, v.body, v.secrets, v.timestamp);
        assert.ok(v.signature.split(' ').includes(ours), `signStandard: got ${ours}, not in ${v.signature}`);
      }
      // One secret serves both schemes: its Factuarea-Signature for the same
      // body and timestamp.
      if (v.factuarea_signature) {
        assert.equal(sign(v.body, v.secrets, v.timestamp), v.factuarea_signature);
        verifyFactuarea(v.factuarea_signature, v.body, v.secrets, now);
      }
    });
  }
});
