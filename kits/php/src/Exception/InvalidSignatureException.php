<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Exception;

/**
 * The delivery's signature did not verify (answered 401). The reason says
 * which check failed, as one of the REASON_ constants.
 */
final class InvalidSignatureException extends WebhookException
{
    /** The signature header (or a Standard Webhooks header) is missing or empty. */
    public const REASON_MISSING_HEADER = 'missing_header';
    /** The header has no valid timestamp. */
    public const REASON_NO_TIMESTAMP = 'no_timestamp';
    /** The header has no well-formed v1 signature. */
    public const REASON_NO_SIGNATURE = 'no_signature';
    /** The timestamp is more than the tolerance away from the clock. */
    public const REASON_TIMESTAMP_OUT_OF_TOLERANCE = 'timestamp_out_of_tolerance';
    /** No v1 signature matches any of the secrets. */
    public const REASON_NO_MATCH = 'no_match';
    /** Verification was asked for without a secret. */
    public const REASON_NO_SECRET = 'no_secret';
    /** No secret can be used as a Standard Webhooks key (not standard base64 after whsec_). */
    public const REASON_SECRET_NOT_STANDARD = 'secret_not_standard';

    public function __construct(
        private readonly string $reason,
        string $message,
    ) {
        parent::__construct('invalid signature: ' . $message);
    }

    /** Which check failed: one of the REASON_ constants. */
    public function reason(): string
    {
        return $this->reason;
    }
}
