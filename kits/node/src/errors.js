// The kit's errors. Each class carries the HTTP status the receiver answers
// with, so that a caller of the lower-level functions can map them the same
// way, and an instanceof check tells which step failed.

/** ReceiverError is the base class of every error the kit throws. */
export class ReceiverError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * The reasons a signature does not verify, as InvalidSignatureError.reason.
 * The messages are the Go kit's (package signature), so that a sender's
 * attempt history reads the same whichever kit answered.
 */
export const SignatureFailure = Object.freeze({
  MISSING_HEADER: 'missing_header',
  NO_TIMESTAMP: 'no_timestamp',
  NO_SIGNATURE: 'no_signature',
  TIMESTAMP_OUT_OF_TOLERANCE: 'timestamp_out_of_tolerance',
  NO_MATCH: 'no_match',
  NO_SECRET: 'no_secret',
  SECRET_NOT_STANDARD: 'secret_not_standard',
});

const failureMessages = {
  missing_header: 'header is missing',
  no_timestamp: 'header has no valid timestamp',
  no_signature: 'header has no v1 signature',
  timestamp_out_of_tolerance: 'timestamp is outside the tolerance',
  no_match: 'no v1 signature matches the secret',
  no_secret: 'no secret to verify with',
  secret_not_standard: 'the secret is not standard base64 after whsec_',
};

/** InvalidSignatureError: the delivery's signature did not verify (401). */
export class InvalidSignatureError extends ReceiverError {
  /**
   * @param {string} reason one of SignatureFailure
   * @param {'factuarea'|'standard'} scheme the scheme that was checked
   */
  constructor(reason, scheme) {
    super(`receiver: invalid signature: signature: ${failureMessages[reason] ?? reason}`);
    this.reason = reason;
    this.scheme = scheme;
    this.status = 401;
  }
}

/** InvalidEventError: the body is not an event (400). */
export class InvalidEventError extends ReceiverError {
  constructor(detail, options) {
    super(`receiver: invalid event: ${detail}`, options);
    this.status = 400;
  }
}

/** BodyTooLargeError: the body is over maxBodyBytes (413). */
export class BodyTooLargeError extends ReceiverError {
  constructor(limit) {
    super(`receiver: body too large: over ${limit} bytes`);
    this.limit = limit;
    this.status = 413;
  }
}

/** MethodNotAllowedError: a method other than POST (405). */
export class MethodNotAllowedError extends ReceiverError {
  constructor(method) {
    super(`receiver: method ${method} not allowed`);
    this.method = method;
    this.status = 405;
  }
}

/**
 * HandlerError wraps what the customer's handler threw (as cause); the
 * transaction was rolled back (500, so that the sender retries).
 */
export class HandlerError extends ReceiverError {
  constructor(cause) {
    super(`receiver: handler: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.status = 500;
  }
}

/**
 * DatabaseError: a step of the transaction failed ("begin", "record",
 * "commit") or a maintenance statement did ("create table", "purge"); cause
 * is the driver's error. Nothing was committed (500).
 */
export class DatabaseError extends ReceiverError {
  constructor(step, cause) {
    super(`receiver: ${step}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.step = step;
    this.status = 500;
  }
}

/**
 * BodyAlreadyParsedError: the request's body was consumed by a body parser
 * before the receiver saw it, so the raw bytes that the signature covers are
 * gone. A mistake in the application's setup, not in the delivery (500, so
 * that the sender retries once it is fixed).
 */
export class BodyAlreadyParsedError extends ReceiverError {
  constructor(what) {
    super(
      `receiver: the request body was already parsed (${what}), and the signature covers the raw bytes: ` +
        'mount the webhook handler before express.json() or any other body parser, ' +
        "or give its route express.raw({ type: '*/*' })",
    );
    this.status = 500;
  }
}

/** UnsupportedDatabaseError: the db option is neither a pg Pool nor a better-sqlite3 Database. */
export class UnsupportedDatabaseError extends ReceiverError {}

/** BodyReadError: the request's body could not be read, as when the sender hangs up mid-body (400). */
export class BodyReadError extends ReceiverError {
  constructor(cause) {
    super(`receiver: read body: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.status = 400;
  }
}
