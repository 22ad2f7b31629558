// A Receiver refuses a wrong setup at construction, naming the option.

import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
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

  // The shared cases (SPEC 15): with scheme 'standard', every secret is
  // checked, and the first that is not standard base64 after whsec_ is
  // refused with the message every kit gives.
  const standard = JSON.parse(readFileSync(new URL('./standard-secrets.json', import.meta.url), 'utf8'));
  for (const c of standard.cases) {
    it(`scheme standard: ${c.refused === null ? 'accepts' : 'refuses'} ${c.name}`, () => {
      const options = { db, secrets: c.secrets, handle, scheme: 'standard' };
      if (c.refused === null) {
        assert.equal(new Receiver(options).dialect, 'sqlite');
        return;
      }
      const want = standard.message.replace('{index}', String(c.refused));
      assert.throws(
        () => new Receiver(options),
        (err) => err instanceof TypeError && err.message === want,
        `${JSON.stringify(c.secrets)}: want the error ${JSON.stringify(want)}`,
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
