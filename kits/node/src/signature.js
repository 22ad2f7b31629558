// Factuarea-Signature and the Standard Webhooks headers (SPEC 4 and 15),
// signed and verified as the Go kit's signature package does, so that every
// kit passes the same vectors.

import { createHmac, timingSafeEqual } from 'node:crypto';
import { InvalidSignatureError, SignatureFailure as F } from './errors.js';

/** The header that carries the Factuarea signature. */
export const SIGNATURE_HEADER = 'Factuarea-Signature';
/** The Standard Webhooks headers, as Node spells received header names. */
export const STANDARD_ID_HEADER = 'webhook-id';
export const STANDARD_TIMESTAMP_HEADER = 'webhook-timestamp';
export const STANDARD_SIGNATURE_HEADER = 'webhook-signature';
/** How far, in seconds, a signature's timestamp may be from the receiver's clock, either way. */
export const TOLERANCE_SECONDS = 300;
/** Every endpoint secret starts with it. */
export const SECRET_PREFIX = 'whsec_';

const HEX_SIGNATURE = /^[0-9a-fA-F]{64}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
// Go's strconv.ParseInt: an optional sign and decimal digits, within int64.
const INTEGER = /^[+-]?[0-9]+$/;
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Factuarea's v1: HMAC-SHA256 keyed with the whole secret string's UTF-8
 * bytes, over "<t>." and the raw body.
 */
function computeFactuarea(secret, t, body) {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest();
}

/**
 * Standard Webhooks' v1: HMAC-SHA256 keyed with the decoded secret, over
 * "<id>.<t>." and the raw body.
 */
function computeStandard(key, id, t, body) {
  return createHmac('sha256', key).update(`${id}.${t}.`).update(body).digest();
}

/**
 * standardKey returns the Standard Webhooks key of a secret: the strict
 * standard-base64 decoding of what follows "whsec_", or null when there is
 * none (secrets made before the format changed are unpadded base64url).
 */
export function standardKey(secret) {
  if (typeof secret !== 'string' || !secret.startsWith(SECRET_PREFIX)) return null;
  const rest = secret.slice(SECRET_PREFIX.length);
  if (rest === '' || !BASE64.test(rest)) return null;
  const key = Buffer.from(rest, 'base64');
  // Strict: the unused bits of the last character must be zero, as Go's
  // base64.StdEncoding.Strict() requires, so that one secret has one key.
  if (key.length === 0 || key.toString('base64') !== rest) return null;
  return key;
}

/** standardCompatible reports whether a secret can verify Standard Webhooks headers. */
export function standardCompatible(secret) {
  return standardKey(secret) !== null;
}

function toBytes(body) {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  throw new TypeError('receiver: the body must be the raw bytes (a Buffer, a Uint8Array or a string)');
}

function unixSeconds(now) {
  const ms = now instanceof Date ? now.getTime() : now;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new TypeError('receiver: now must be a Date or milliseconds since the epoch');
  return Math.floor(ms / 1000);
}

function parseTimestamp(s) {
  if (!INTEGER.test(s)) return null;
  const n = BigInt(s);
  if (n <= 0n || n > INT64_MAX) return null;
  return n;
}

function within(t, now) {
  const d = t > now ? t - now : now - t;
  return d <= BigInt(TOLERANCE_SECONDS);
}

// Every pair is compared, matching or not, so the time taken does not depend
// on which signature matched.
function anyMatch(candidates, wants) {
  let matched = false;
  for (const want of wants) {
    for (const got of candidates) {
      if (timingSafeEqual(got, want)) matched = true;
    }
  }
  return matched;
}

function checkSecrets(secrets) {
  if (!Array.isArray(secrets) || secrets.length === 0) return false;
  for (const s of secrets) {
    if (typeof s !== 'string') throw new TypeError('receiver: every secret must be a string');
  }
  return true;
}

/**
 * sign returns the Factuarea-Signature value of body at unix seconds t: one
 * v1 per secret, in the order given (the new secret first during a rotation).
 * For your own tests: the sender signs this way.
 */
export function sign(body, secrets, t = Math.floor(Date.now() / 1000)) {
  const bytes = toBytes(body);
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  let header = `t=${t}`;
  for (const s of list) header += `,v1=${computeFactuarea(s, t, bytes).toString('hex')}`;
  return header;
}

/**
 * signStandard returns the webhook-signature value of body for the message
 * id at unix seconds t: one "v1,<base64>" per secret, separated by a space.
 * It throws when a secret is not standard base64 after "whsec_".
 */
export function signStandard(id, body, secrets, t = Math.floor(Date.now() / 1000)) {
  const bytes = toBytes(body);
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  return list
    .map((s) => {
      const key = standardKey(s);
      if (key === null) throw new InvalidSignatureError(F.SECRET_NOT_STANDARD, 'standard');
      return `v1,${computeStandard(key, id, t, bytes).toString('base64')}`;
    })
    .join(' ');
}

/**
 * verifyFactuarea checks a Factuarea-Signature value against the raw body:
 * the timestamp must be within TOLERANCE_SECONDS of now, and any v1 must
 * match any secret, compared in constant time. Elements it does not know
 * (v0=, other schemes) and malformed v1 values are ignored. It throws an
 * InvalidSignatureError whose reason names the check that failed.
 *
 * @param {string|undefined} header
 * @param {Buffer|Uint8Array|string} body the raw body, as received
 * @param {string[]} secrets the new and the old one during a rotation
 * @param {Date|number} [now]
 */
export function verifyFactuarea(header, body, secrets, now = Date.now()) {
  const fail = (reason) => new InvalidSignatureError(reason, 'factuarea');
  if (!checkSecrets(secrets)) throw fail(F.NO_SECRET);
  if (typeof header !== 'string' || header.trim() === '') throw fail(F.MISSING_HEADER);
  let t = null;
  const candidates = [];
  for (const part of header.split(',')) {
    const p = part.trim();
    const eq = p.indexOf('=');
    if (eq < 0) continue;
    const k = p.slice(0, eq);
    const v = p.slice(eq + 1);
    if (k === 't') {
      const n = parseTimestamp(v);
      if (n === null || t !== null) throw fail(F.NO_TIMESTAMP);
      t = n;
    } else if (k === 'v1' && HEX_SIGNATURE.test(v)) {
      candidates.push(Buffer.from(v, 'hex'));
    }
  }
  if (t === null) throw fail(F.NO_TIMESTAMP);
  if (candidates.length === 0) throw fail(F.NO_SIGNATURE);
  if (!within(t, BigInt(unixSeconds(now)))) throw fail(F.TIMESTAMP_OUT_OF_TOLERANCE);
  const bytes = toBytes(body);
  const wants = secrets.map((s) => computeFactuarea(s, t, bytes));
  if (!anyMatch(candidates, wants)) throw fail(F.NO_MATCH);
}

/**
 * verifyStandard checks the three Standard Webhooks headers against the raw
 * body: the timestamp must be within TOLERANCE_SECONDS of now, and any
 * "v1," signature must match any secret usable as a Standard Webhooks key,
 * compared in constant time. Entries of other versions are ignored. It throws
 * an InvalidSignatureError whose reason names the check that failed.
 *
 * @param {string|undefined} id webhook-id
 * @param {string|undefined} timestamp webhook-timestamp
 * @param {string|undefined} header webhook-signature
 * @param {Buffer|Uint8Array|string} body the raw body, as received
 * @param {string[]} secrets
 * @param {Date|number} [now]
 */
export function verifyStandard(id, timestamp, header, body, secrets, now = Date.now()) {
  const fail = (reason) => new InvalidSignatureError(reason, 'standard');
  if (!checkSecrets(secrets)) throw fail(F.NO_SECRET);
  if (typeof header !== 'string' || header.trim() === '' || typeof id !== 'string' || id === '') {
    throw fail(F.MISSING_HEADER);
  }
  const t = typeof timestamp === 'string' ? parseTimestamp(timestamp.trim()) : null;
  if (t === null) throw fail(F.NO_TIMESTAMP);
  const candidates = [];
  for (const part of header.split(/\s+/)) {
    if (!part.startsWith('v1,')) continue;
    const v = part.slice(3);
    if (!BASE64.test(v)) continue;
    const sig = Buffer.from(v, 'base64');
    if (sig.length === 32) candidates.push(sig);
  }
  if (candidates.length === 0) throw fail(F.NO_SIGNATURE);
  if (!within(t, BigInt(unixSeconds(now)))) throw fail(F.TIMESTAMP_OUT_OF_TOLERANCE);
  const keys = secrets.map(standardKey).filter((k) => k !== null);
  if (keys.length === 0) throw fail(F.SECRET_NOT_STANDARD);
  const bytes = toBytes(body);
  const wants = keys.map((k) => computeStandard(k, id, t, bytes));
  if (!anyMatch(candidates, wants)) throw fail(F.NO_MATCH);
}

export { toBytes };
