// Parsing a delivery body into an event (SPEC 4).

import { InvalidEventError } from './errors.js';
import { headerGetter } from './headers.js';
import { toBytes } from './signature.js';

// The canonical 8-4-4-4-12 lowercase form. The kit insists on it because the
// id is compared as a string: an uppercase copy would not be a duplicate.
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The delivery headers besides the signatures. They are not signed. */
export const HEADER_EVENT_ID = 'Factuarea-Event-Id';
export const HEADER_EVENT_TYPE = 'Factuarea-Event-Type';
export const HEADER_DELIVERY_ID = 'Factuarea-Delivery-Id';
export const HEADER_ACCOUNT_RELATIONSHIP = 'Factuarea-Account-Relationship';
export const HEADER_IDEMPOTENCY_KEY = 'Idempotency-Key';

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// The fields the kit knows, with the JSON type each must have when present
// and not null, as the Go kit's decoding requires. Unknown fields are left
// alone, so that new fields do not break receivers.
const fieldTypes = {
  api_version: 'string',
  created: 'integer',
  livemode: 'boolean',
  test: 'boolean',
  correlation_id: 'string',
  account: 'object',
  account_relationship: 'string',
  company_id: 'string',
  data: 'object',
};

const typeNames = { string: 'a string', integer: 'an integer', boolean: 'a boolean', object: 'an object' };

function hasType(v, type) {
  switch (type) {
    case 'integer':
      return Number.isSafeInteger(v);
    case 'object':
      return isObject(v);
    default:
      return typeof v === type;
  }
}

/**
 * parseEvent parses a delivery body, as received, into the event: the JSON
 * object itself, with its wire names (id, type, api_version, created,
 * livemode, test, correlation_id, data; on an account endpoint account,
 * account_relationship and company_id). livemode is set to true and test to
 * false when the body omits them, as the specification defaults them.
 *
 * It throws an InvalidEventError when the body is not a JSON object, has no
 * id in the canonical lowercase UUID form, or no type, or when a known field
 * has the wrong JSON type.
 *
 * @param {Buffer|Uint8Array|string} body
 */
export function parseEvent(body) {
  const text = toBytes(body).toString('utf8');
  let ev;
  try {
    ev = JSON.parse(text);
  } catch (err) {
    throw new InvalidEventError(err.message, { cause: err });
  }
  if (!isObject(ev)) {
    throw new InvalidEventError(`the body is JSON ${ev === null ? 'null' : Array.isArray(ev) ? 'array' : typeof ev}, not an object`);
  }
  if (ev.id === undefined || ev.id === null || ev.id === '') throw new InvalidEventError('no id');
  if (typeof ev.id !== 'string') throw new InvalidEventError('id is not a string');
  if (!CANONICAL_UUID.test(ev.id)) throw new InvalidEventError('id is not a canonical lowercase UUID');
  if (ev.type === undefined || ev.type === null || ev.type === '') throw new InvalidEventError('no type');
  if (typeof ev.type !== 'string') throw new InvalidEventError('type is not a string');
  for (const [field, type] of Object.entries(fieldTypes)) {
    const v = ev[field];
    if (v !== undefined && v !== null && !hasType(v, type)) {
      throw new InvalidEventError(`${field} is not ${typeNames[type]}`);
    }
  }
  if (isObject(ev.account) && ev.account.id != null && typeof ev.account.id !== 'string') {
    throw new InvalidEventError('account.id is not a string');
  }
  if (isObject(ev.data) && ev.data.type != null && typeof ev.data.type !== 'string') {
    throw new InvalidEventError('data.type is not a string');
  }
  ev.livemode ??= true;
  ev.test ??= false;
  return ev;
}

/**
 * readHeaders returns the Factuarea headers of a request: eventId,
 * eventType, deliveryId, accountRelationship and idempotencyKey (undefined
 * when absent). They are not signed: the kit reads the event id from the
 * body.
 */
export function readHeaders(headers) {
  const get = headerGetter(headers);
  return {
    eventId: get(HEADER_EVENT_ID),
    eventType: get(HEADER_EVENT_TYPE),
    deliveryId: get(HEADER_DELIVERY_ID),
    accountRelationship: get(HEADER_ACCOUNT_RELATIONSHIP),
    idempotencyKey: get(HEADER_IDEMPOTENCY_KEY),
  };
}
