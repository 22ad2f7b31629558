// parseEvent: what is an event and what is not.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidEventError, parseEvent, readHeaders } from '../index.js';

const ID = '01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31';

describe('parseEvent', () => {
  it('parses both envelopes and both payload versions, keeping the wire names', () => {
    const company = parseEvent(
      `{"id":"${ID}","type":"invoice.sent","api_version":"2025-06-01","created":1790590561,"livemode":false,"test":true,` +
        `"correlation_id":null,"data":{"object":{"object":"invoice","id":"inv","total_cents":121000}}}`,
    );
    assert.equal(company.id, ID);
    assert.equal(company.api_version, '2025-06-01');
    assert.equal(company.livemode, false);
    assert.equal(company.test, true);
    assert.equal(company.data.object.total_cents, 121000);
    assert.equal(company.account, undefined);
    const account = parseEvent(
      Buffer.from(
        `{"id":"${ID}","type":"account.updated","account":{"id":"acc"},"account_relationship":"own","company_id":null,"data":{"type":"account.updated","object":{}}}`,
      ),
    );
    assert.equal(account.account.id, 'acc');
    assert.equal(account.account_relationship, 'own');
    assert.equal(account.company_id, null);
    assert.equal(account.livemode, true, 'livemode defaults to true');
    assert.equal(account.test, false, 'test defaults to false');
  });

  const refused = [
    ['not JSON', '{"id":', 'invalid event'],
    ['a BOM before the JSON', `\uFEFF{"id":"${ID}","type":"ping"}`, 'invalid event'],
    ['a string', '"hello"', 'not an object'],
    ['a number', '42', 'not an object'],
    ['an array', `[{"id":"${ID}","type":"ping"}]`, 'not an object'],
    ['null', 'null', 'not an object'],
    ['no id', '{"type":"ping"}', 'no id'],
    ['empty id', '{"id":"","type":"ping"}', 'no id'],
    ['id with braces', `{"id":"{${ID}}","type":"ping"}`, 'canonical lowercase UUID'],
    ['id without dashes', `{"id":"${ID.replaceAll('-', '')}","type":"ping"}`, 'canonical lowercase UUID'],
    ['no type', `{"id":"${ID}"}`, 'no type'],
    ['type not a string', `{"id":"${ID}","type":7}`, 'type is not a string'],
    ['created not an integer', `{"id":"${ID}","type":"ping","created":"yesterday"}`, 'created is not an integer'],
    ['livemode not a boolean', `{"id":"${ID}","type":"ping","livemode":"yes"}`, 'livemode is not a boolean'],
    ['account not an object', `{"id":"${ID}","type":"ping","account":"acc"}`, 'account is not an object'],
    ['account.id not a string', `{"id":"${ID}","type":"ping","account":{"id":1}}`, 'account.id is not a string'],
    ['data an array', `{"id":"${ID}","type":"ping","data":[]}`, 'data is not an object'],
  ];
  for (const [name, body, inMessage] of refused) {
    it(`refuses ${name}`, () => {
      assert.throws(
        () => parseEvent(body),
        (err) => err instanceof InvalidEventError && err.status === 400 && err.message.includes(inMessage),
      );
    });
  }

  it('throws a TypeError, not an InvalidEventError, for a body that is not bytes', () => {
    assert.throws(() => parseEvent({ id: ID, type: 'ping' }), TypeError);
  });
});

describe('readHeaders', () => {
  it('reads the Factuarea headers in any capitalisation', () => {
    assert.deepEqual(readHeaders({ 'FACTUAREA-EVENT-ID': ID, 'factuarea-delivery-id': 'd', 'Idempotency-Key': ID }), {
      eventId: ID,
      eventType: undefined,
      deliveryId: 'd',
      accountRelationship: undefined,
      idempotencyKey: ID,
    });
  });
});
