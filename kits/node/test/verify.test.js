// Signature details beyond the vectors: which scheme a request is verified
// with, what each failure is called, and agreement with the official
// Standard Webhooks library.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Webhook } from 'standardwebhooks';
import {
  InvalidSignatureError,
  SignatureFailure,
  sign,
  signStandard,
  standardCompatible,
  verify,
  verifyFactuarea,
  verifyStandard,
} from '../index.js';
import { Clock, OTHER_SECRET, SECRET, eventBody, newID, signedHeaders } from './support.js';

const failure = (reason, scheme) => (err) => {
  assert.ok(err instanceof InvalidSignatureError, `got ${err}, want an InvalidSignatureError`);
  assert.equal(err.reason, reason);
  if (scheme) assert.equal(err.scheme, scheme);
  assert.equal(err.status, 401);
  return true;
};

describe('verify: the scheme option', () => {
  const clock = new Clock();
  const body = eventBody(newID());
  const now = clock.ms;

  it('any: Factuarea-Signature when present, else Standard Webhooks', () => {
    assert.equal(verify(signedHeaders(body, clock, { scheme: 'both' }), body, [SECRET], { now }), 'factuarea');
    assert.equal(verify(signedHeaders(body, clock, { scheme: 'factuarea' }), body, [SECRET], { now }), 'factuarea');
    assert.equal(verify(signedHeaders(body, clock, { scheme: 'standard' }), body, [SECRET], { now }), 'standard');
  });

  it('any: a present but invalid Factuarea-Signature fails, whatever the Standard Webhooks headers say', () => {
    const headers = signedHeaders(body, clock, { scheme: 'both' });
    headers['factuarea-signature'] = sign(body, 'whsec_other', clock.seconds);
    assert.throws(() => verify(headers, body, [SECRET], { now }), failure(SignatureFailure.NO_MATCH, 'factuarea'));
    headers['factuarea-signature'] = '';
    assert.throws(() => verify(headers, body, [SECRET], { now }), failure(SignatureFailure.MISSING_HEADER, 'factuarea'));
  });

  it('any: no signature at all is a missing Factuarea-Signature', () => {
    assert.throws(() => verify({}, body, [SECRET], { now }), failure(SignatureFailure.MISSING_HEADER, 'factuarea'));
  });

  it('factuarea: Standard Webhooks headers alone are not enough', () => {
    const headers = signedHeaders(body, clock, { scheme: 'standard' });
    assert.throws(() => verify(headers, body, [SECRET], { now, scheme: 'factuarea' }), failure(SignatureFailure.MISSING_HEADER));
  });

  it('standard: Factuarea-Signature alone is not enough, and a bad one beside good Standard headers is ignored', () => {
    assert.throws(
      () => verify(signedHeaders(body, clock), body, [SECRET], { now, scheme: 'standard' }),
      failure(SignatureFailure.MISSING_HEADER, 'standard'),
    );
    const headers = signedHeaders(body, clock, { scheme: 'both' });
    headers['factuarea-signature'] = 't=1,v1=00';
    assert.equal(verify(headers, body, [SECRET], { now, scheme: 'standard' }), 'standard');
  });

  it('reads headers in any capitalisation, and from a Fetch Headers', () => {
    const headers = signedHeaders(body, clock, { scheme: 'standard' });
    const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
    assert.equal(verify(upper, body, [SECRET], { now }), 'standard');
    assert.equal(verify(new Headers(signedHeaders(body, clock)), body, [SECRET], { now }), 'factuarea');
  });

  it('refuses an unknown scheme', () => {
    assert.throws(() => verify({}, body, [SECRET], { scheme: 'svix' }), TypeError);
  });
});

describe('verifyFactuarea', () => {
  const body = '{"id":"x"}';
  const t = 1790590562;
  const now = t * 1000;
  const v1 = sign(body, SECRET, t).split(',v1=')[1];
  const cases = [
    ['no secret', `t=${t},v1=${v1}`, [], SignatureFailure.NO_SECRET],
    ['blank header', '   ', [SECRET], SignatureFailure.MISSING_HEADER],
    ['two timestamps', `t=${t},t=${t},v1=${v1}`, [SECRET], SignatureFailure.NO_TIMESTAMP],
    ['zero timestamp', `t=0,v1=${v1}`, [SECRET], SignatureFailure.NO_TIMESTAMP],
    ['negative timestamp', `t=-5,v1=${v1}`, [SECRET], SignatureFailure.NO_TIMESTAMP],
    ['timestamp past int64', `t=9223372036854775808,v1=${v1}`, [SECRET], SignatureFailure.NO_TIMESTAMP],
    ['timestamp centuries away', `t=9223372036854775807,v1=${v1}`, [SECRET], SignatureFailure.TIMESTAMP_OUT_OF_TOLERANCE],
    ['v1 not hex', `t=${t},v1=${'z'.repeat(64)}`, [SECRET], SignatureFailure.NO_SIGNATURE],
    ['v1 too long', `t=${t},v1=${v1}00`, [SECRET], SignatureFailure.NO_SIGNATURE],
  ];
  for (const [name, header, secrets, reason] of cases) {
    it(`fails: ${name}`, () => {
      assert.throws(() => verifyFactuarea(header, body, secrets, now), failure(reason, 'factuarea'));
    });
  }
  it('accepts uppercase hex, spaces around elements, and a signature among others', () => {
    verifyFactuarea(` t=${t} , v1=${v1.toUpperCase()} `, body, [SECRET], now);
    verifyFactuarea(`t=${t},v1=${'0'.repeat(64)},v1=${v1}`, body, [OTHER_SECRET, SECRET], now);
  });
  it('keys with the whole secret string, whatever its format', () => {
    const old = 'whsec_ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1-f4CBgoM'; // unpadded base64url, made before the change
    verifyFactuarea(sign(body, old, t), body, [old], now);
  });
  it('takes a Buffer, a Uint8Array or a string, and the bytes are what count', () => {
    const header = sign(body, SECRET, t);
    verifyFactuarea(header, Buffer.from(body), [SECRET], now);
    verifyFactuarea(header, new TextEncoder().encode(body), [SECRET], now);
    assert.throws(() => verifyFactuarea(header, JSON.parse(body), [SECRET], now), TypeError);
  });
});

describe('verifyStandard', () => {
  const id = newID();
  const body = eventBody(id);
  const t = 1790590562;
  const now = t * 1000;
  const sig = signStandard(id, body, SECRET, t);

  it('fails with the check that failed', () => {
    assert.throws(() => verifyStandard(id, String(t), sig, body, [], now), failure(SignatureFailure.NO_SECRET));
    assert.throws(() => verifyStandard('', String(t), sig, body, [SECRET], now), failure(SignatureFailure.MISSING_HEADER));
    assert.throws(() => verifyStandard(id, 'soon', sig, body, [SECRET], now), failure(SignatureFailure.NO_TIMESTAMP));
    assert.throws(() => verifyStandard(id, String(t), 'v1,abc', body, [SECRET], now), failure(SignatureFailure.NO_SIGNATURE));
    assert.throws(() => verifyStandard(id, String(t + 301), sig, body, [SECRET], now), failure(SignatureFailure.TIMESTAMP_OUT_OF_TOLERANCE));
    const old = 'whsec_ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1-f4CBgoM';
    assert.throws(() => verifyStandard(id, String(t), sig, body, [old], now), failure(SignatureFailure.SECRET_NOT_STANDARD));
    assert.throws(() => verifyStandard(id, String(t), sig, body, [OTHER_SECRET], now), failure(SignatureFailure.NO_MATCH));
  });
  it('accepts one of several entries, other versions ignored, with the old secret beside the new', () => {
    verifyStandard(id, ` ${t} `, `v2,xyz ${signStandard(id, body, OTHER_SECRET, t)}  ${sig}`, body, [OTHER_SECRET, SECRET], now);
    verifyStandard(id, String(t), sig, body, ['whsec_not base64', SECRET], now);
  });
  it('knows which secrets are standard base64 (strictly, padding included)', () => {
    assert.equal(standardCompatible(SECRET), true);
    assert.equal(standardCompatible('whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8'), false, 'unpadded');
    assert.equal(standardCompatible('whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh9='), false, 'non-zero trailing bits');
    assert.equal(standardCompatible('whsec_'), false);
    assert.equal(standardCompatible(SECRET.slice('whsec_'.length)), false, 'no prefix');
    assert.throws(() => signStandard(id, body, 'whsec_-_', t), failure(SignatureFailure.SECRET_NOT_STANDARD));
  });
});

// The npm library of the Standard Webhooks specification and this kit agree
// both ways.
describe('the standardwebhooks library', () => {
  it('verifies what the kit signs, and the kit verifies what it signs', () => {
    const id = newID();
    const body = eventBody(id);
    const t = Math.floor(Date.now() / 1000);
    const wh = new Webhook(SECRET);
    const headers = { 'webhook-id': id, 'webhook-timestamp': String(t), 'webhook-signature': signStandard(id, body, [OTHER_SECRET, SECRET], t) };
    assert.equal(wh.verify(body, headers).id, id);
    const theirs = wh.sign(id, new Date(t * 1000), body);
    assert.equal(verify({ 'webhook-id': id, 'webhook-timestamp': String(t), 'webhook-signature': theirs }, body, [SECRET]), 'standard');
  });
});
