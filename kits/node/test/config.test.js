// A Receiver refuses a wrong setup at construction, naming the option.

import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Receiver, UnsupportedDatabaseError, createTable } from '../index.js';
import { ADMIN_URL, SECRET } from './support.js';

const db = new Database(':memory:');
after(() => db.close());
const handle = () => {};

describe('new Receiver', () => {
  const refused = [
    ['no options', undefined, TypeError, 'options are required'],
    ['no handle', { db, secrets: [SECRET] }, TypeError, 'options.handle is required'],
    ['no db', { secrets: [SECRET], handle }, UnsupportedDatabaseError, 'db is required'],
    ['a db of another kind', { db: { query() {} }, secrets: [SECRET], handle }, UnsupportedDatabaseError, 'pg Pool or a better-sqlite3'],
    ['a single pg Client', { db: new pg.Client(ADMIN_URL), secrets: [SECRET], handle }, UnsupportedDatabaseError, 'pass a pg Pool'],
    ['no secrets', { db, handle }, TypeError, 'options.secrets needs at least one secret'],
    ['an empty list of secrets', { db, secrets: [], handle }, TypeError, 'at least one secret'],
    ['an empty secret', { db, secrets: [SECRET, ''], handle }, TypeError, 'options.secrets[1] is empty'],
    ['a secret with a newline', { db, secrets: [`${SECRET}\n`], handle }, TypeError, 'whitespace around it'],
    ['two secrets in one string', { db, secrets: [`${SECRET},${SECRET}`], handle }, TypeError, 'holds a comma'],
    ['an unknown scheme', { db, secrets: [SECRET], handle, scheme: 'svix' }, TypeError, 'options.scheme must be'],
    [
      'scheme standard with an old secret',
      { db, secrets: ['whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8'], handle, scheme: 'standard' },
      TypeError,
      'rotate',
    ],
    ['a negative body limit', { db, secrets: [SECRET], handle, maxBodyBytes: -1 }, TypeError, 'options.maxBodyBytes'],
    ['a clock that is not a function', { db, secrets: [SECRET], handle, now: 5 }, TypeError, 'options.now'],
    ['a logger without warn', { db, secrets: [SECRET], handle, logger: { info() {} } }, TypeError, 'options.logger'],
  ];
  for (const [name, options, type, inMessage] of refused) {
    it(`refuses ${name}`, () => {
      assert.throws(
        () => new Receiver(options),
        (err) => err instanceof type && err.message.includes(inMessage),
      );
    });
  }

  it('accepts one secret as a string, and tells its dialect', () => {
    assert.equal(new Receiver({ db, secrets: SECRET, handle }).dialect, 'sqlite');
    assert.equal(new Receiver({ db: new pg.Pool(), secrets: [SECRET], handle }).dialect, 'postgres');
  });

  it('createTable refuses what is not a database', async () => {
    await assert.rejects(createTable({}), UnsupportedDatabaseError);
  });
});
