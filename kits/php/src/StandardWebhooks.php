<?php

declare(strict_types=1);

namespace Factuarea\Webhooks;

use Factuarea\Webhooks\Exception\InvalidSignatureException;

/**
 * The Standard Webhooks scheme (https://www.standardwebhooks.com), which an
 * endpoint can be sent beside Factuarea-Signature:
 *
 *     webhook-id: <event id>
 *     webhook-timestamp: <unix seconds>
 *     webhook-signature: v1,<base64 HMAC-SHA256(key = base64-decoded part of the secret after whsec_,
 *                                               message = "<webhook-id>.<webhook-timestamp>.<raw body>")>
 *
 * During a rotation webhook-signature holds one "v1,…" per secret,
 * separated by a space, the new one first.
 */
final class StandardWebhooks
{
    public const ID_HEADER = 'webhook-id';
    public const TIMESTAMP_HEADER = 'webhook-timestamp';
    public const SIGNATURE_HEADER = 'webhook-signature';

    private function __construct()
    {
    }

    /**
     * The HMAC key of a secret: the standard base64 (padded, canonical)
     * decoding of what follows "whsec_", or null when that is not valid
     * (secrets made before the format changed are unpadded base64url: they
     * still verify Factuarea-Signature, which keys with the whole string).
     */
    public static function key(string $secret): ?string
    {
        if (!str_starts_with($secret, Signature::SECRET_PREFIX)) {
            return null;
        }
        $rest = substr($secret, strlen(Signature::SECRET_PREFIX));
        $key = base64_decode($rest, true);
        // PHP's strict mode still skips spaces and accepts missing padding:
        // only the canonical encoding of the key is standard base64.
        if ($key === false || $key === '' || base64_encode($key) !== $rest) {
            return null;
        }
        return $key;
    }

    /** The raw (binary) HMAC of $body for message $id at $timestamp. */
    public static function compute(string $key, string $id, int $timestamp, string $body): string
    {
        return hash_hmac('sha256', $id . '.' . $timestamp . '.' . $body, $key, true);
    }

    /**
     * The webhook-signature header value: one "v1,<base64>" per secret, in
     * the order given. For tests and for senders.
     *
     * @throws \InvalidArgumentException if a secret is not standard base64 after whsec_
     */
    public static function sign(string $id, int $timestamp, string $body, string ...$secrets): string
    {
        $entries = [];
        foreach ($secrets as $secret) {
            $key = self::key($secret);
            if ($key === null) {
                throw new \InvalidArgumentException('the secret is not standard base64 after whsec_');
            }
            $entries[] = 'v1,' . base64_encode(self::compute($key, $id, $timestamp, $body));
        }
        return implode(' ', $entries);
    }

    /**
     * Checks the three Standard Webhooks headers against the raw body: the
     * timestamp must be within $tolerance seconds of $now (default: the
     * current time), and at least one "v1," signature must match one of the
     * secrets, compared in constant time. Entries of other versions are
     * ignored.
     *
     * @param list<string> $secrets
     *
     * @throws InvalidSignatureException naming the check that failed
     */
    public static function verify(string $id, string $timestamp, string $signature, string $body, array $secrets, ?int $now = null, int $tolerance = Signature::TOLERANCE): void
    {
        if ($secrets === []) {
            throw new InvalidSignatureException(InvalidSignatureException::REASON_NO_SECRET, 'no secret to verify with');
        }
        if (trim($signature) === '' || $id === '') {
            throw new InvalidSignatureException(
                InvalidSignatureException::REASON_MISSING_HEADER,
                trim($signature) === '' ? self::SIGNATURE_HEADER . ' header is missing' : self::ID_HEADER . ' header is missing',
            );
        }
        $ts = Signature::parseUnixSeconds(trim($timestamp));
        if ($ts === null) {
            throw new InvalidSignatureException(InvalidSignatureException::REASON_NO_TIMESTAMP, self::TIMESTAMP_HEADER . ' is not a valid timestamp');
        }
        $signatures = [];
        foreach (preg_split('/\s+/', trim($signature)) ?: [] as $entry) {
            if (!str_starts_with($entry, 'v1,')) {
                continue;
            }
            $encoded = substr($entry, 3);
            $raw = base64_decode($encoded, true);
            if ($raw === false || strlen($raw) !== 32 || base64_encode($raw) !== $encoded) {
                continue;
            }
            $signatures[] = $raw;
        }
        if ($signatures === []) {
            throw new InvalidSignatureException(InvalidSignatureException::REASON_NO_SIGNATURE, self::SIGNATURE_HEADER . ' has no v1 signature');
        }
        if (!Signature::within($ts, $now ?? time(), $tolerance)) {
            throw new InvalidSignatureException(
                InvalidSignatureException::REASON_TIMESTAMP_OUT_OF_TOLERANCE,
                self::TIMESTAMP_HEADER . ' is outside the tolerance of ' . $tolerance . ' s',
            );
        }
        $matched = false;
        $usable = false;
        foreach ($secrets as $secret) {
            $key = self::key((string) $secret);
            if ($key === null) {
                continue;
            }
            $usable = true;
            $want = self::compute($key, $id, $ts, $body);
            foreach ($signatures as $got) {
                if (hash_equals($want, $got)) {
                    $matched = true;
                }
            }
        }
        if (!$usable) {
            throw new InvalidSignatureException(
                InvalidSignatureException::REASON_SECRET_NOT_STANDARD,
                'no secret is standard base64 after whsec_, so none can verify ' . self::SIGNATURE_HEADER . ' (rotate the secret)',
            );
        }
        if (!$matched) {
            throw new InvalidSignatureException(
                InvalidSignatureException::REASON_NO_MATCH,
                self::SIGNATURE_HEADER . ': no v1 signature matches the secret',
            );
        }
    }
}
