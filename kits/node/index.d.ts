// Type declarations of @factuarea/webhooks-receiver, written by hand beside
// index.js. The database clients are optional peers, so their types are
// described here by the little the kit uses of them, not imported.

import type { IncomingMessage, ServerResponse } from 'node:http';

/** A pg Pool, or anything shaped like one: one client per delivery. */
export interface PgPoolLike {
  connect(): Promise<PgClientLike & { release(err?: Error | boolean): void }>;
  query(text: string, values?: unknown[]): Promise<unknown>;
  readonly totalCount: number;
}

/** The client a pg Pool checks out: the handler's transaction on PostgreSQL. */
export interface PgClientLike {
  query(text: string, values?: unknown[]): Promise<{ rows: any[]; rowCount: number | null }>;
}

/** A better-sqlite3 Database: the handler's transaction on SQLite is the Database itself. */
export interface SqliteDatabaseLike {
  prepare(source: string): unknown;
  exec(source: string): unknown;
  readonly inTransaction: boolean;
}

/** A database the kit runs on. */
export type DatabaseLike = PgPoolLike | SqliteDatabaseLike;

/** The transaction a handler gets for a database: the pool's client, or the SQLite Database. */
export type TransactionOf<Db> = Db extends SqliteDatabaseLike ? Db : PgClientLike;

/** Which signature a delivery is verified with. */
export type Scheme = 'any' | 'factuarea' | 'standard';

/** A delivery body: the event, with its wire names. Unknown fields are kept. */
export interface Event {
  /** The event id, a canonical lowercase UUID, the same in every copy: the deduplication key. */
  id: string;
  /** The event type, such as "invoice.sent"; "ping" for a test event. */
  type: string;
  /** The payload version the endpoint is pinned to, such as "2026-09-23"; it decides the shape of data. */
  api_version?: string;
  /** When the event was registered, in unix seconds; the same in every copy. */
  created?: number;
  /** False for events of the test mode; true when the body omits it. */
  livemode: boolean;
  /** True only for the event of an endpoint's "send test event"; false when omitted. */
  test: boolean;
  /** Links the events caused by one operation; not a key. */
  correlation_id?: string | null;
  /** On an account endpoint: the account the event belongs to. */
  account?: { id: string } | null;
  /** On an account endpoint: "own" or "managed". */
  account_relationship?: 'own' | 'managed' | string;
  /** On an account endpoint: the company the event is about, null for an account.* event about none. */
  company_id?: string | null;
  /** 2026-09-23: {type, object}; 2025-06-01: {object}. */
  data?: { type?: string; object?: any; [key: string]: unknown } | null;
  [key: string]: unknown;
}

/** The Factuarea headers of a delivery. They are not signed. */
export interface DeliveryHeaders {
  /** Factuarea-Event-Id, equal to the body's id. */
  eventId?: string;
  /** Factuarea-Event-Type, equal to the body's type. */
  eventType?: string;
  /** Factuarea-Delivery-Id: one event sent to one endpoint; not a deduplication key. */
  deliveryId?: string;
  /** Factuarea-Account-Relationship, on account endpoints only. */
  accountRelationship?: string;
  /** Idempotency-Key, equal to the event id. */
  idempotencyKey?: string;
}

/** What the handler gets besides the event. */
export interface Delivery {
  /** The body as received. */
  raw?: Buffer;
  headers?: DeliveryHeaders;
  /** The scheme the signature was verified with. */
  scheme?: 'factuarea' | 'standard';
  /** Aborted when the sender closes the connection (on node:http and Express). */
  signal?: AbortSignal;
}

/**
 * Processes one new event inside the transaction that records its id. Write
 * through tx so that the effect and the id commit together. Throwing (or
 * rejecting) rolls everything back and the receiver answers 500.
 */
export type HandleFunc<Tx> = (event: Event, tx: Tx, delivery: Delivery) => unknown | Promise<unknown>;

/** Receives one record per refused or failed delivery; console fits. */
export interface Logger {
  warn(message: string, fields: Record<string, unknown>): void;
  error(message: string, fields: Record<string, unknown>): void;
  debug?(message: string, fields: Record<string, unknown>): void;
}

export interface ReceiverOptions<Db extends DatabaseLike> {
  /** Holds processed_webhook_events and the tables the handler writes. */
  db: Db;
  /** The endpoint's secrets ("whsec_…"): the new and the old one during a rotation. */
  secrets: string[] | string;
  handle: HandleFunc<TransactionOf<Db>>;
  /** Default "any": Factuarea-Signature when the request has it, else the Standard Webhooks headers. */
  scheme?: Scheme;
  /** A larger body gets 413. Default DEFAULT_MAX_BODY_BYTES (1 MiB). */
  maxBodyBytes?: number;
  /** The clock, for the signature's tolerance and received_at. Default Date.now. */
  now?: () => Date | number;
  /** Default: warnings and errors to console; false for none. */
  logger?: Logger | false;
}

/** A request given to respond(). */
export interface ReceiverRequest {
  method: string;
  /** Any capitalisation, or a Fetch API Headers. */
  headers: Record<string, string | string[] | undefined> | Headers;
  /** The raw body, exactly as received. */
  body: Buffer | Uint8Array | ArrayBuffer | string | null | undefined;
  signal?: AbortSignal;
}

/** An answer of respond(), to send as it is. */
export interface ReceiverResponse {
  status: 200 | 400 | 401 | 405 | 413 | 500;
  headers: Record<string, string>;
  /** "processed\n", "already processed\n", or why the delivery was refused. */
  body: string;
}

export class Receiver<Db extends DatabaseLike = DatabaseLike> {
  constructor(options: ReceiverOptions<Db>);
  /** The database's dialect. */
  readonly dialect: 'postgres' | 'sqlite';
  /** A node:http request listener, and an Express route handler (mount it before express.json()). */
  readonly handler: (req: IncomingMessage & { body?: unknown }, res: ServerResponse, next?: (err?: unknown) => void) => Promise<void>;
  /** Answers one request given as method, headers and raw body, for other frameworks. */
  respond(request: ReceiverRequest): Promise<ReceiverResponse>;
  /** The transactional step for an event already verified and parsed; resolves to whether the handler ran. */
  process(event: Event, delivery?: Delivery): Promise<boolean>;
  /** Creates processed_webhook_events and its index if they do not exist. */
  createTable(): Promise<void>;
  /** Deletes the ids received more than olderThanMs ago by the receiver's clock; resolves to how many. */
  purge(olderThanMs: number): Promise<number>;
}

/** 1 MiB. */
export const DEFAULT_MAX_BODY_BYTES: number;
/** 7 days in milliseconds: covers every automatic retry. */
export const DEFAULT_RETENTION_MS: number;
/** 90 days in milliseconds: covers manual resends. */
export const MANUAL_RESEND_RETENTION_MS: number;
/** 300. */
export const TOLERANCE_SECONDS: number;
export const SCHEMES: readonly Scheme[];
export const SIGNATURE_HEADER: 'Factuarea-Signature';
export const STANDARD_ID_HEADER: 'webhook-id';
export const STANDARD_TIMESTAMP_HEADER: 'webhook-timestamp';
export const STANDARD_SIGNATURE_HEADER: 'webhook-signature';
export const SECRET_PREFIX: 'whsec_';
export const HEADER_EVENT_ID: 'Factuarea-Event-Id';
export const HEADER_EVENT_TYPE: 'Factuarea-Event-Type';
export const HEADER_DELIVERY_ID: 'Factuarea-Delivery-Id';
export const HEADER_ACCOUNT_RELATIONSHIP: 'Factuarea-Account-Relationship';
export const HEADER_IDEMPOTENCY_KEY: 'Idempotency-Key';

/** Creates processed_webhook_events and its received_at index if they do not exist. */
export function createTable(db: DatabaseLike): Promise<void>;
/** Deletes the ids received more than olderThanMs before now; resolves to how many. */
export function purge(db: DatabaseLike, olderThanMs: number, now?: Date | number): Promise<number>;

/** Verifies a delivery by the scheme option and returns the scheme used; throws InvalidSignatureError. */
export function verify(
  headers: Record<string, string | string[] | undefined> | Headers,
  body: Buffer | Uint8Array | string,
  secrets: string[],
  options?: { scheme?: Scheme; now?: Date | number },
): 'factuarea' | 'standard';
/** Verifies a Factuarea-Signature value; throws InvalidSignatureError. */
export function verifyFactuarea(header: string | undefined, body: Buffer | Uint8Array | string, secrets: string[], now?: Date | number): void;
/** Verifies the three Standard Webhooks headers; throws InvalidSignatureError. */
export function verifyStandard(
  id: string | undefined,
  timestamp: string | undefined,
  signature: string | undefined,
  body: Buffer | Uint8Array | string,
  secrets: string[],
  now?: Date | number,
): void;
/** The Factuarea-Signature value of body at unix seconds t, as the sender signs: for your own tests. */
export function sign(body: Buffer | Uint8Array | string, secrets: string[] | string, t?: number): string;
/** The webhook-signature value of body for message id at unix seconds t. */
export function signStandard(id: string, body: Buffer | Uint8Array | string, secrets: string[] | string, t?: number): string;
/** Whether a secret is standard base64 after whsec_, as Standard Webhooks needs. */
export function standardCompatible(secret: string): boolean;
/** Parses a delivery body; throws InvalidEventError. */
export function parseEvent(body: Buffer | Uint8Array | string): Event;
/** The Factuarea headers of a request. */
export function readHeaders(headers: Record<string, string | string[] | undefined> | Headers): DeliveryHeaders;

export const SignatureFailure: {
  readonly MISSING_HEADER: 'missing_header';
  readonly NO_TIMESTAMP: 'no_timestamp';
  readonly NO_SIGNATURE: 'no_signature';
  readonly TIMESTAMP_OUT_OF_TOLERANCE: 'timestamp_out_of_tolerance';
  readonly NO_MATCH: 'no_match';
  readonly NO_SECRET: 'no_secret';
  readonly SECRET_NOT_STANDARD: 'secret_not_standard';
};
export type SignatureFailureReason = (typeof SignatureFailure)[keyof typeof SignatureFailure];

/** The base class of every error the kit throws. */
export class ReceiverError extends Error {}
/** The signature did not verify (401). */
export class InvalidSignatureError extends ReceiverError {
  readonly reason: SignatureFailureReason;
  readonly scheme: 'factuarea' | 'standard';
  readonly status: 401;
}
/** The body is not an event, or its id is not the webhook-id it was verified with (400). */
export class InvalidEventError extends ReceiverError {
  readonly status: 400;
}
/** The body is over maxBodyBytes (413). */
export class BodyTooLargeError extends ReceiverError {
  readonly limit: number;
  readonly status: 413;
}
/** The body could not be read (400). */
export class BodyReadError extends ReceiverError {
  readonly status: 400;
}
/** A method other than POST (405). */
export class MethodNotAllowedError extends ReceiverError {
  readonly method: string;
  readonly status: 405;
}
/** What the handler threw, as cause; everything was rolled back (500). */
export class HandlerError extends ReceiverError {
  readonly status: 500;
}
/** A database step failed ("begin", "record event id", "commit", "create table", "purge"); cause is the driver's error (500). */
export class DatabaseError extends ReceiverError {
  readonly step: string;
  readonly status: 500;
}
/** A body parser consumed the body before the receiver (500: fix the setup, the sender retries). */
export class BodyAlreadyParsedError extends ReceiverError {
  readonly status: 500;
}
/** The db option is not a pg Pool nor a better-sqlite3 Database. */
export class UnsupportedDatabaseError extends ReceiverError {}
