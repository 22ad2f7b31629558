<?php

declare(strict_types=1);

namespace Factuarea\Webhooks;

use Factuarea\Webhooks\Exception\InvalidSignatureException;

/**
 * The Factuarea-Signature scheme: "t=<unix seconds>,v1=<hex HMAC>", where
 * v1 = hex(HMAC-SHA256(key = the whole secret string, message = "<t>.<raw body>")).
 * During a secret rotation the header carries one v1 per secret, new first.
 */
final class Signature
{
    /** The header that carries the signature. */
    public const HEADER = 'Factuarea-Signature';

    /** How far (seconds, either way) a timestamp may be from the clock before it is refused as a replay. */
    public const TOLERANCE = 300;

    /** What every endpoint secret starts with. */
    public const SECRET_PREFIX = 'whsec_';

    private function __construct()
    {
    }

    /** The raw (binary) v1 HMAC of $body at $timestamp with $secret. */
    public static function compute(string $secret, int $timestamp, string $body): string
    {
        return hash_hmac('sha256', $timestamp . '.' . $body, $secret, true);
    }

    /**
     * The header value for $body at $timestamp: one v1 per secret, in the
     * order given (the new secret first during a rotation). For tests and
     * for senders; a receiver only verifies.
     */
    public static function sign(int $timestamp, string $body, string ...$secrets): string
    {
        $header = 't=' . $timestamp;
        foreach ($secrets as $secret) {
            $header .= ',v1=' . bin2hex(self::compute($secret, $timestamp, $body));
        }
        return $header;
    }

    /**
     * Checks a Factuarea-Signature header value against the raw body, as
     * received, before any JSON decoding (re-encoding changes the bytes).
     * It passes when the timestamp is within $tolerance seconds of $now
     * (default: the current time) and any v1 matches any of $secrets (pass
     * the new and the old secret during a rotation). Signatures are compared
     * in constant time.
     *
     * @param list<string> $secrets
     *
     * @throws InvalidSignatureException naming the check that failed
     */
    public static function verify(string $header, string $body, array $secrets, ?int $now = null, int $tolerance = self::TOLERANCE): void
    {
        if ($secrets === []) {
            throw new InvalidSignatureException(InvalidSignatureException::REASON_NO_SECRET, 'no secret to verify with');
        }
        [$timestamp, $signatures] = self::parse($header);
        if (!self::within($timestamp, $now ?? time(), $tolerance)) {
            throw new InvalidSignatureException(
                InvalidSignatureException::REASON_TIMESTAMP_OUT_OF_TOLERANCE,
                self::HEADER . ': timestamp is outside the tolerance of ' . $tolerance . ' s',
            );
        }
        // Every pair is compared, matching or not, so that the time taken
        // does not tell which signature matched.
        $matched = false;
        foreach ($secrets as $secret) {
            $want = self::compute((string) $secret, $timestamp, $body);
            foreach ($signatures as $got) {
                if (hash_equals($want, $got)) {
                    $matched = true;
                }
            }
        }
        if (!$matched) {
            throw new InvalidSignatureException(
                InvalidSignatureException::REASON_NO_MATCH,
                self::HEADER . ': no v1 signature matches the secret',
            );
        }
    }

    /**
     * Reads a header value into its timestamp and its raw v1 signatures.
     * Elements of other schemes (v0=, …) and malformed v1 values are
     * ignored, so that a new scheme can be added without breaking
     * receivers.
     *
     * @return array{int, list<string>}
     *
     * @throws InvalidSignatureException when no timestamp or no well-formed v1 remains
     */
    public static function parse(string $header): array
    {
        if (trim($header) === '') {
            throw new InvalidSignatureException(InvalidSignatureException::REASON_MISSING_HEADER, self::HEADER . ' header is missing');
        }
        $noTimestamp = new InvalidSignatureException(
            InvalidSignatureException::REASON_NO_TIMESTAMP,
            self::HEADER . ' has no valid timestamp',
        );
        $timestamp = null;
        $signatures = [];
        foreach (explode(',', $header) as $part) {
            $pair = explode('=', trim($part), 2);
            if (count($pair) !== 2) {
                continue;
            }
            [$key, $value] = $pair;
            if ($key === 't') {
                $t = self::parseUnixSeconds($value);
                if ($t === null || $timestamp !== null) {
                    throw $noTimestamp;
                }
                $timestamp = $t;
            } elseif ($key === 'v1' && preg_match('/^[0-9a-fA-F]{64}$/D', $value) === 1) {
                $signatures[] = (string) hex2bin($value);
            }
        }
        if ($timestamp === null) {
            throw $noTimestamp;
        }
        if ($signatures === []) {
            throw new InvalidSignatureException(InvalidSignatureException::REASON_NO_SIGNATURE, self::HEADER . ' has no v1 signature');
        }
        return [$timestamp, $signatures];
    }

    /**
     * A positive decimal number of seconds that fits in 64 bits, or null.
     *
     * @internal
     */
    public static function parseUnixSeconds(string $value): ?int
    {
        if (preg_match('/^\+?0*([0-9]{1,19})$/D', $value, $m) !== 1) {
            return null;
        }
        $digits = $m[1];
        if (strlen($digits) === 19 && strcmp($digits, (string) PHP_INT_MAX) > 0) {
            return null;
        }
        $n = (int) $digits;
        return $n > 0 ? $n : null;
    }

    /** @internal */
    public static function within(int $timestamp, int $now, int $tolerance): bool
    {
        // Both are positive, so the difference cannot overflow.
        return abs($timestamp - $now) <= $tolerance;
    }
}
