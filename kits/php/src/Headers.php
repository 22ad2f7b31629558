<?php

declare(strict_types=1);

namespace Factuarea\Webhooks;

/**
 * The Factuarea headers of a delivery. They are not signed (only the body
 * is, and webhook-id in the Standard Webhooks scheme): the kit reads the
 * event id from the body, and these are there for routing and logs. Each is
 * null when the request does not have it.
 */
final class Headers
{
    public const EVENT_ID = 'Factuarea-Event-Id';
    public const EVENT_TYPE = 'Factuarea-Event-Type';
    public const DELIVERY_ID = 'Factuarea-Delivery-Id';
    public const ACCOUNT_RELATIONSHIP = 'Factuarea-Account-Relationship';
    public const IDEMPOTENCY_KEY = 'Idempotency-Key';

    public function __construct(
        /** Factuarea-Event-Id, equal to the body's id. */
        public readonly ?string $eventId = null,
        /** Factuarea-Event-Type, equal to the body's type. */
        public readonly ?string $eventType = null,
        /** Factuarea-Delivery-Id: one event sent to one endpoint. Not a deduplication key. */
        public readonly ?string $deliveryId = null,
        /** Factuarea-Account-Relationship ("own" or "managed"), on account endpoints only. */
        public readonly ?string $accountRelationship = null,
        /** Idempotency-Key, equal to the event id. */
        public readonly ?string $idempotencyKey = null,
        /** webhook-id, equal to the event id, when the endpoint is sent Standard Webhooks headers. */
        public readonly ?string $webhookId = null,
    ) {
    }

    /**
     * The Factuarea headers of a request's headers, given in any case, each
     * as a string or a list of strings (as PSR-7's getHeaders() returns
     * them).
     *
     * @param array<string, string|list<string>> $headers
     */
    public static function from(array $headers): self
    {
        $h = self::normalize($headers);
        return new self(
            $h[strtolower(self::EVENT_ID)] ?? null,
            $h[strtolower(self::EVENT_TYPE)] ?? null,
            $h[strtolower(self::DELIVERY_ID)] ?? null,
            $h[strtolower(self::ACCOUNT_RELATIONSHIP)] ?? null,
            $h[strtolower(self::IDEMPOTENCY_KEY)] ?? null,
            $h[StandardWebhooks::ID_HEADER] ?? null,
        );
    }

    /**
     * Headers keyed by lowercase name, each the first value given for it.
     *
     * @param array<string, string|list<string>> $headers
     *
     * @return array<string, string>
     */
    public static function normalize(array $headers): array
    {
        $out = [];
        foreach ($headers as $name => $value) {
            if (is_array($value)) {
                $value = reset($value);
            }
            $key = strtolower((string) $name);
            if (!is_string($value) || isset($out[$key])) {
                continue;
            }
            $out[$key] = $value;
        }
        return $out;
    }

    /**
     * The request headers in a $_SERVER array (HTTP_FACTUAREA_SIGNATURE →
     * factuarea-signature), for front controllers.
     *
     * @param array<string, mixed> $server
     *
     * @return array<string, string>
     */
    public static function fromServer(array $server): array
    {
        $out = [];
        foreach ($server as $key => $value) {
            if (!is_string($value)) {
                continue;
            }
            if (str_starts_with((string) $key, 'HTTP_')) {
                $out[strtolower(str_replace('_', '-', substr((string) $key, 5)))] = $value;
            } elseif ($key === 'CONTENT_TYPE' || $key === 'CONTENT_LENGTH') {
                $out[strtolower(str_replace('_', '-', (string) $key))] = $value;
            }
        }
        return $out;
    }
}
