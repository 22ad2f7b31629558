// @factuarea/webhooks-receiver: verify Factuarea webhooks and run your
// handler at most once per event id, in the transaction that records the id.
// The recipe is in README.md; the contract in the specification's sections
// 4, 10 and 15.

export { Receiver, DEFAULT_MAX_BODY_BYTES } from './src/receiver.js';
export { createTable, purge, DEFAULT_RETENTION_MS, MANUAL_RESEND_RETENTION_MS } from './src/store.js';
export { verify, SCHEMES } from './src/verify.js';
export {
  sign,
  signStandard,
  verifyFactuarea,
  verifyStandard,
  standardCompatible,
  SIGNATURE_HEADER,
  STANDARD_ID_HEADER,
  STANDARD_TIMESTAMP_HEADER,
  STANDARD_SIGNATURE_HEADER,
  SECRET_PREFIX,
  TOLERANCE_SECONDS,
} from './src/signature.js';
export {
  parseEvent,
  readHeaders,
  HEADER_EVENT_ID,
  HEADER_EVENT_TYPE,
  HEADER_DELIVERY_ID,
  HEADER_ACCOUNT_RELATIONSHIP,
  HEADER_IDEMPOTENCY_KEY,
} from './src/event.js';
export {
  ReceiverError,
  InvalidSignatureError,
  InvalidEventError,
  BodyTooLargeError,
  BodyReadError,
  MethodNotAllowedError,
  HandlerError,
  DatabaseError,
  BodyAlreadyParsedError,
  UnsupportedDatabaseError,
  SignatureFailure,
} from './src/errors.js';
