// Which signature a delivery is verified with: the scheme option.

import {
  SIGNATURE_HEADER,
  STANDARD_ID_HEADER,
  STANDARD_SIGNATURE_HEADER,
  STANDARD_TIMESTAMP_HEADER,
  verifyFactuarea,
  verifyStandard,
} from './signature.js';
import { headerGetter } from './headers.js';

/** The values of the scheme option. */
export const SCHEMES = Object.freeze(['any', 'factuarea', 'standard']);

/**
 * verify checks a delivery's signature on its raw body and returns the
 * scheme it verified: "factuarea" or "standard". With scheme "any" (the
 * default) it verifies Factuarea-Signature when the request has that header,
 * and the Standard Webhooks headers otherwise; a Factuarea-Signature that is
 * present but wrong fails, whatever the other headers say, so that a forged
 * or stale request cannot choose the check it passes. "factuarea" and
 * "standard" verify only that scheme. It throws an InvalidSignatureError.
 *
 * @param {object} headers the request's headers (any capitalisation, or a Headers)
 * @param {Buffer|Uint8Array|string} body the raw body
 * @param {string[]} secrets
 * @param {{scheme?: 'any'|'factuarea'|'standard', now?: Date|number}} [options]
 * @returns {'factuarea'|'standard'}
 */
export function verify(headers, body, secrets, { scheme = 'any', now = Date.now() } = {}) {
  if (!SCHEMES.includes(scheme)) {
    throw new TypeError(`receiver: scheme must be "any", "factuarea" or "standard", not ${JSON.stringify(scheme)}`);
  }
  const get = headerGetter(headers);
  const factuarea = get(SIGNATURE_HEADER);
  if (scheme === 'factuarea' || (scheme === 'any' && (factuarea !== undefined || get(STANDARD_SIGNATURE_HEADER) === undefined))) {
    verifyFactuarea(factuarea, body, secrets, now);
    return 'factuarea';
  }
  verifyStandard(get(STANDARD_ID_HEADER), get(STANDARD_TIMESTAMP_HEADER), get(STANDARD_SIGNATURE_HEADER), body, secrets, now);
  return 'standard';
}
