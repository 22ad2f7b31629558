// The receiver recipe (SPEC 10): verify, parse, record the id and run the
// customer's handler in one transaction, answer.

import { inspect } from 'node:util';
import {
  BodyAlreadyParsedError,
  BodyTooLargeError,
  HandlerError,
  InvalidEventError,
  MethodNotAllowedError,
  ReceiverError,
} from './errors.js';
import { parseEvent, readHeaders } from './event.js';
import { readBody } from './body.js';
import { headerGetter } from './headers.js';
import { STANDARD_ID_HEADER, standardCompatible, toBytes } from './signature.js';
import { checkRetention, storeFor } from './store.js';
import { SCHEMES, verify } from './verify.js';

/**
 * The default limit on a delivery's body, in bytes (1 MiB). Event bodies are
 * a few kilobytes; the limit only bounds what an unauthenticated caller can
 * make the receiver read before the signature is checked.
 */
export const DEFAULT_MAX_BODY_BYTES = 1 << 20;

const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// The default logger writes one line per record to stderr, key=value as the
// Go kit's default logger does, and an error's stack (with its cause) after
// it. Debug records (one per accepted delivery) are dropped, as there.
function line(msg, fields) {
  let out = msg;
  let stack = '';
  for (const [k, v] of Object.entries(fields)) {
    if (v instanceof Error) {
      out += ` ${k}=${JSON.stringify(v.message)}`;
      stack = `\n${inspect(v)}`;
    } else {
      out += ` ${k}=${typeof v === 'string' ? JSON.stringify(v) : v}`;
    }
  }
  return out + stack;
}

const defaultLogger = {
  debug() {},
  warn: (msg, fields) => console.warn(line(msg, fields)),
  error: (msg, fields) => console.error(line(msg, fields)),
};

/**
 * SECRET_NOT_STANDARD is the message of a secret refused for the standard
 * scheme, {index} being its index in options.secrets: word for word the Go,
 * Python and PHP kits' (test/standard-secrets.json).
 */
const SECRET_NOT_STANDARD =
  "secrets[{index}] is not standard base64 after whsec_ (padding included), so it cannot verify Standard Webhooks signatures: rotate the endpoint's secret, or verify Factuarea-Signature only (scheme factuarea)";

function checkSecrets(secrets, scheme) {
  const list = typeof secrets === 'string' ? [secrets] : secrets;
  if (!Array.isArray(list) || list.length === 0) {
    throw new TypeError('receiver: options.secrets needs at least one secret ("whsec_…")');
  }
  list.forEach((s, i) => {
    if (typeof s !== 'string' || s === '') throw new TypeError(`receiver: options.secrets[${i}] is empty or not a string`);
  });
  // Every secret, before the checks below, so that each kit refuses the
  // same secrets with the same message (SPEC 15).
  if (scheme === 'standard') {
    list.forEach((s, i) => {
      if (!standardCompatible(s)) throw new TypeError(SECRET_NOT_STANDARD.replace('{index}', String(i)));
    });
  }
  list.forEach((s, i) => {
    if (s.trim() !== s) {
      throw new TypeError(`receiver: options.secrets[${i}] has whitespace around it: check how it was copied`);
    }
    if (s.includes(',')) {
      throw new TypeError(`receiver: options.secrets[${i}] holds a comma: pass each secret as its own array element`);
    }
  });
  return [...list];
}

function reply(status, message, extra = {}) {
  return {
    status,
    headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff', ...extra },
    body: `${message}\n`,
  };
}

/**
 * Receiver is the recipe: a node:http handler (also an Express middleware),
 * a lower-level respond() for other frameworks, and process() for callers
 * that verify and parse their own way. Its methods are safe to call
 * concurrently.
 */
export class Receiver {
  #store;
  #secrets;
  #handle;
  #scheme;
  #maxBodyBytes;
  #now;
  #log;

  /**
   * @param {object} options
   * @param {object} options.db a pg Pool or a better-sqlite3 Database: holds
   *   processed_webhook_events and the tables the handler writes
   * @param {string[]|string} options.secrets the endpoint's secrets, the new
   *   and the old one during a rotation
   * @param {(event: object, tx: object, delivery: object) => unknown} options.handle
   *   processes each new event inside the transaction that records its id
   * @param {'any'|'factuarea'|'standard'} [options.scheme]
   * @param {number} [options.maxBodyBytes]
   * @param {() => Date|number} [options.now]
   * @param {{warn: Function, error: Function, debug?: Function}|false} [options.logger]
   */
  constructor(options) {
    if (options === null || typeof options !== 'object') throw new TypeError('receiver: options are required');
    const { db, secrets, handle, scheme = 'any', maxBodyBytes = 0, now = Date.now, logger } = options;
    if (typeof handle !== 'function') {
      throw new TypeError('receiver: options.handle is required: async (event, tx, delivery) => { … }');
    }
    this.#store = storeFor(db);
    if (!SCHEMES.includes(scheme)) {
      throw new TypeError(`receiver: options.scheme must be "any", "factuarea" or "standard", not ${JSON.stringify(scheme)}`);
    }
    this.#secrets = checkSecrets(secrets, scheme);
    if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 0) {
      throw new TypeError('receiver: options.maxBodyBytes must be a whole number of bytes, 0 or more');
    }
    if (typeof now !== 'function') throw new TypeError('receiver: options.now must be a function');
    if (logger === false) {
      this.#log = { debug() {}, warn() {}, error() {} };
    } else if (logger === undefined) {
      this.#log = defaultLogger;
    } else if (logger && typeof logger.warn === 'function' && typeof logger.error === 'function') {
      this.#log = {
        debug: typeof logger.debug === 'function' ? logger.debug.bind(logger) : () => {},
        warn: logger.warn.bind(logger),
        error: logger.error.bind(logger),
      };
    } else {
      throw new TypeError('receiver: options.logger must have warn and error methods (console does), or be false');
    }
    this.#handle = handle;
    this.#scheme = scheme;
    this.#maxBodyBytes = maxBodyBytes || DEFAULT_MAX_BODY_BYTES;
    this.#now = now;
  }

  /** The database's dialect: "postgres" or "sqlite". */
  get dialect() {
    return this.#store.dialect;
  }

  #nowMs() {
    const t = this.#now();
    const ms = t instanceof Date ? t.getTime() : t;
    if (typeof ms !== 'number' || !Number.isFinite(ms)) throw new TypeError('receiver: options.now must return a Date or milliseconds');
    return ms;
  }

  /** createTable creates processed_webhook_events and its index if they do not exist. */
  createTable() {
    return this.#store.createTable();
  }

  /**
   * purge deletes the ids received more than olderThanMs ago by the
   * receiver's clock, and resolves to how many it deleted.
   */
  async purge(olderThanMs) {
    checkRetention(olderThanMs);
    return this.#store.purge(this.#nowMs() - olderThanMs);
  }

  /**
   * process runs the transactional step for an event that is already
   * verified and parsed: in one transaction it records event.id and, if the
   * id is new, runs the handler; then it commits. It resolves to whether the
   * handler ran (false for a repeat). A rejection (HandlerError,
   * DatabaseError) means nothing was committed: answer 500 so that the sender
   * retries.
   */
  async process(event, delivery = {}) {
    if (event === null || typeof event !== 'object' || typeof event.id !== 'string' || !CANONICAL_UUID.test(event.id)) {
      throw new InvalidEventError('id is not a canonical lowercase UUID');
    }
    return this.#store.transact(event.id, this.#nowMs(), async (tx) => {
      try {
        await this.#handle(event, tx, delivery);
      } catch (err) {
        throw new HandlerError(err);
      }
    });
  }

  /**
   * respond answers one request given as its method, headers and raw body
   * (a Buffer, a Uint8Array or the exact text received), for frameworks
   * other than node:http and Express. It resolves to {status, headers, body}
   * to send as they are; it never rejects for anything the request holds.
   *
   * @param {{method: string, headers: object, body: Buffer|Uint8Array|string, signal?: AbortSignal}} request
   */
  async respond({ method, headers, body, signal } = {}) {
    if (method !== 'POST') return this.#refuse(new MethodNotAllowedError(method), { allow: 'POST' });
    let raw;
    if (body === undefined || body === null) {
      raw = Buffer.alloc(0);
    } else if (typeof body === 'string' || body instanceof Uint8Array || body instanceof ArrayBuffer) {
      raw = toBytes(body);
    } else {
      throw new BodyAlreadyParsedError(`the body is ${typeof body === 'object' ? 'an object' : `a ${typeof body}`}`);
    }
    if (raw.length > this.#maxBodyBytes) return this.#refuse(new BodyTooLargeError(this.#maxBodyBytes));
    let scheme;
    try {
      // The signature covers the raw bytes, so it is checked before anything
      // decodes them, and before anything from an unauthenticated caller
      // reaches the database.
      scheme = verify(headers, raw, this.#secrets, { scheme: this.#scheme, now: this.#nowMs() });
    } catch (err) {
      if (!(err instanceof ReceiverError)) throw err;
      return this.#refuse(err);
    }
    let event;
    try {
      event = parseEvent(raw);
    } catch (err) {
      if (!(err instanceof ReceiverError)) throw err;
      return this.#refuse(err);
    }
    const delivery = { raw, headers: readHeaders(headers), scheme, signal };
    // The kit deduplicates on the body's id. A Standard Webhooks library
    // would on webhook-id; the sender makes them equal, and a delivery where
    // they differ is refused rather than deduplicated on one of two keys.
    const webhookId = headerGetter(headers)(STANDARD_ID_HEADER);
    if (scheme === 'standard' && webhookId !== event.id) {
      const err = new InvalidEventError(`${STANDARD_ID_HEADER} ${JSON.stringify(webhookId)} is not the body's id ${event.id}`);
      return this.#refuse(err, {}, event, delivery);
    }
    let isNew;
    try {
      isNew = await this.process(event, delivery);
    } catch (err) {
      return this.#refuse(err, {}, event, delivery);
    }
    const message = isNew ? 'processed' : 'already processed';
    this.#log.debug(`webhook ${message}`, { eventId: event.id, deliveryId: delivery.headers.deliveryId });
    return reply(200, message);
  }

  /**
   * refuse logs err and answers its status. A 4xx answer carries the error's
   * text, which the sender keeps on the attempt where the customer can read
   * why the delivery was refused; a 500 says nothing of the handler's error.
   */
  #refuse(err, headers = {}, event, delivery) {
    const status = err instanceof ReceiverError && err.status ? err.status : 500;
    const fields = { status, error: status >= 500 ? err : err.message };
    if (event) fields.eventId = event.id;
    if (delivery?.headers?.deliveryId) fields.deliveryId = delivery.headers.deliveryId;
    if (status >= 500) {
      this.#log.error('webhook refused', fields);
      // A setup mistake is worth reading in the sender's attempt history,
      // and reveals nothing about the handler.
      return reply(status, err instanceof BodyAlreadyParsedError ? err.message : 'internal error', headers);
    }
    this.#log.warn('webhook refused', fields);
    return reply(status, err.message, headers);
  }

  /**
   * handler answers a delivery on node:http: `http.createServer(r.handler)`,
   * or as an Express route: `app.post('/webhooks', r.handler)`, before
   * express.json(). It reads the raw body from the request, or takes
   * req.body when express.raw() made it a Buffer.
   */
  handler = async (req, res) => {
    let response;
    try {
      if (req.method !== 'POST') {
        response = await this.respond({ method: req.method });
      } else {
        const controller = new AbortController();
        res.once('close', () => {
          if (!res.writableFinished) controller.abort(new Error('receiver: the sender closed the connection'));
        });
        const body = await readBody(req, this.#maxBodyBytes);
        response = await this.respond({ method: req.method, headers: req.headers, body, signal: controller.signal });
      }
    } catch (err) {
      // An oversized body is left unread: close the connection after the
      // answer rather than read the rest.
      response = this.#refuse(err, err instanceof BodyTooLargeError ? { connection: 'close' } : {});
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    res.writeHead(response.status, { ...response.headers, 'content-length': Buffer.byteLength(response.body) });
    res.end(response.body);
  };
}
