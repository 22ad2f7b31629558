'use strict';
// A receiver that verifies deliveries with the official Standard Webhooks
// npm library and nothing of ours, so that kits/e2e shows the library
// accepts what `webhooks serve` sends to an endpoint with standard_webhooks.
//
// It reads PORT and WEBHOOK_SECRETS (comma-separated), verifies each POST
// with every secret on its own, and answers 200 "verified by secrets 0,1"
// (the indexes of the secrets that verify), 401 when none does, and 400 when
// webhook-id is not the body's event id. The test reads the answer from the
// delivery's attempt.

const http = require('node:http');
const { Webhook } = require('standardwebhooks');

const port = Number(process.env.PORT);
const secrets = (process.env.WEBHOOK_SECRETS || '').split(',').filter((s) => s !== '');
if (!Number.isInteger(port) || port <= 0 || secrets.length === 0) {
  console.error('PORT and WEBHOOK_SECRETS are required');
  process.exit(1);
}
const hooks = secrets.map((s) => new Webhook(s));

function answer(res, status, text) {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
  res.end(text + '\n');
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST') {
    answer(res, 405, 'method not allowed');
    return;
  }
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const verified = [];
    const errors = [];
    let event;
    hooks.forEach((wh, i) => {
      try {
        event = wh.verify(body, req.headers);
        verified.push(i);
      } catch (err) {
        errors.push(`secret ${i}: ${err.message}`);
      }
    });
    if (verified.length === 0) {
      console.error(`refused ${req.headers['webhook-id']}: ${errors.join('; ')}`);
      answer(res, 401, `no secret verifies: ${errors.join('; ')}`);
      return;
    }
    if (!event || event.id !== req.headers['webhook-id']) {
      answer(res, 400, `webhook-id ${req.headers['webhook-id']} is not the event id ${event && event.id}`);
      return;
    }
    answer(res, 200, `verified by secrets ${verified.join(',')}`);
  });
});

server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`listening on 127.0.0.1:${port}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
