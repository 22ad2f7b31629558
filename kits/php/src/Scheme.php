<?php

declare(strict_types=1);

namespace Factuarea\Webhooks;

use Factuarea\Webhooks\Exception\ConfigurationException;
use Factuarea\Webhooks\Exception\InvalidSignatureException;

/** Which signature scheme a receiver verifies. */
enum Scheme: string
{
    /**
     * Factuarea-Signature when the request has one, else the Standard
     * Webhooks headers. A Factuarea-Signature that is present but does not
     * verify is refused: there is no fallback to the other scheme.
     */
    case Any = 'any';
    /** Only Factuarea-Signature. */
    case Factuarea = 'factuarea';
    /** Only the Standard Webhooks headers (webhook-id, webhook-timestamp, webhook-signature). */
    case Standard = 'standard';

    /**
     * A Scheme from a case or its name ("any", "factuarea", "standard").
     *
     * @throws ConfigurationException for any other string
     */
    public static function fromOption(self|string $scheme): self
    {
        if ($scheme instanceof self) {
            return $scheme;
        }
        return self::tryFrom($scheme) ?? throw new ConfigurationException(
            sprintf('scheme must be "any", "factuarea" or "standard", not "%s"', $scheme),
        );
    }

    /**
     * Verifies a request's headers against its raw body and returns the
     * scheme that verified it (Factuarea or Standard).
     *
     * @param array<string, string> $headers lowercase names, as Headers::normalize gives them
     * @param list<string>          $secrets
     *
     * @throws InvalidSignatureException
     */
    public function verify(array $headers, string $body, array $secrets, int $now): self
    {
        $factuarea = $headers[strtolower(Signature::HEADER)] ?? '';
        $standard = $headers[StandardWebhooks::SIGNATURE_HEADER] ?? '';
        $use = $this;
        if ($this === self::Any) {
            // The header's presence chooses, not its value: an empty
            // Factuarea-Signature fails as Factuarea-Signature, as the other
            // kits have it, rather than hand the request to the other scheme.
            if (isset($headers[strtolower(Signature::HEADER)])) {
                $use = self::Factuarea;
            } elseif (isset($headers[StandardWebhooks::SIGNATURE_HEADER]) || isset($headers[StandardWebhooks::ID_HEADER]) || isset($headers[StandardWebhooks::TIMESTAMP_HEADER])) {
                $use = self::Standard;
            } else {
                throw new InvalidSignatureException(
                    InvalidSignatureException::REASON_MISSING_HEADER,
                    'no ' . Signature::HEADER . ' or ' . StandardWebhooks::SIGNATURE_HEADER . ' header',
                );
            }
        }
        if ($use === self::Factuarea) {
            Signature::verify($factuarea, $body, $secrets, $now);
        } else {
            StandardWebhooks::verify(
                $headers[StandardWebhooks::ID_HEADER] ?? '',
                $headers[StandardWebhooks::TIMESTAMP_HEADER] ?? '',
                $standard,
                $body,
                $secrets,
                $now,
            );
        }
        return $use;
    }
}
