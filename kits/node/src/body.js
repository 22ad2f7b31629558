// The raw body of a node:http request, or of an Express request whose body
// express.raw() has already read.

import { BodyAlreadyParsedError, BodyReadError, BodyTooLargeError } from './errors.js';

/**
 * readBody resolves to the request's raw body, at most limit bytes. It takes
 * req.body when a Buffer is there (express.raw()), and refuses a body that a
 * parser has consumed (express.json(), express.text(), …), since the bytes
 * that the signature covers are gone.
 */
export function readBody(req, limit) {
  if (Buffer.isBuffer(req.body)) {
    if (req.body.length > limit) return Promise.reject(new BodyTooLargeError(limit));
    return Promise.resolve(req.body);
  }
  // body-parser marks the requests it has read with _body; a parser that
  // does not still leaves the stream ended. Express 4 sets req.body = {} on
  // requests it does not parse, so req.body alone proves nothing.
  if (req._body === true || req.readableEnded) {
    const what =
      typeof req.body === 'string'
        ? 'req.body is a string, as express.text() leaves it'
        : req.body !== undefined && req.body !== null
          ? 'req.body is an object, as express.json() leaves it'
          : 'the request stream was read before';
    return Promise.reject(new BodyAlreadyParsedError(what));
  }
  const length = Number(req.headers['content-length']);
  if (Number.isFinite(length) && length > limit) return Promise.reject(new BodyTooLargeError(limit));
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    const done = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk) => {
      size += chunk.length;
      if (size > limit) {
        // Stop reading: the answer goes out with Connection: close, so the
        // rest of an oversized body is never read.
        done();
        req.pause();
        reject(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (err) => {
      done();
      reject(new BodyReadError(err));
    };
    const onClose = () => {
      done();
      reject(new BodyReadError(new Error('the connection closed before the body ended')));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
