<?php

declare(strict_types=1);

namespace Factuarea\Webhooks;

use Factuarea\Webhooks\Exception\InvalidEventException;

/**
 * A parsed delivery body. Both envelopes parse into it: a company
 * endpoint's, and an account endpoint's, which adds accountId,
 * accountRelationship and companyId.
 *
 * Every copy of an event (a retry, a manual resend, the copy sent to your
 * other endpoint) has the same id: it is the deduplication key. The
 * delivery id, the signature, correlationId and data.object.id are not keys.
 */
final class Event
{
    /** Values of accountRelationship and of the Factuarea-Account-Relationship header. */
    public const RELATIONSHIP_OWN = 'own';
    public const RELATIONSHIP_MANAGED = 'managed';

    private function __construct(
        /** The event id, a canonical lowercase UUID: the deduplication key. */
        public readonly string $id,
        /** The event type, such as "invoice.sent"; "ping" for a test event. */
        public readonly string $type,
        /** The payload version the endpoint is pinned to, such as "2026-09-23"; it decides the shape of data. */
        public readonly ?string $apiVersion,
        /** When the event was registered (second precision, UTC), the same in every copy. */
        public readonly ?\DateTimeImmutable $created,
        /** False for events of the test mode; true when the body omits it. */
        public readonly bool $livemode,
        /** True only for the event of an endpoint's "send test event". */
        public readonly bool $test,
        /** Links the events caused by one operation; not a key. */
        public readonly ?string $correlationId,
        /** The account the event belongs to, on an account endpoint; null on a company endpoint. */
        public readonly ?string $accountId,
        /** "own" or "managed" on an account endpoint, null on a company endpoint. */
        public readonly ?string $accountRelationship,
        /** The company the event is about, on an account endpoint; null elsewhere and for an account.* event about no company. */
        public readonly ?string $companyId,
        /**
         * The event's "data" as an associative array: {"type", "object"} in
         * api_version 2026-09-23, {"object"} in 2025-06-01.
         *
         * @var array<string, mixed>
         */
        public readonly array $data,
        /** The whole body as received, for callers that store it. */
        public readonly string $raw,
        /** The delivery's Factuarea headers (all null when the event was parsed from a body alone). */
        public readonly Headers $headers,
    ) {
    }

    /**
     * The resource the event is about (data.object) as an associative
     * array, or null when there is none. Its shape depends on the type and
     * the api_version.
     *
     * @return array<string, mixed>|null
     */
    public function object(): ?array
    {
        $object = $this->data['object'] ?? null;
        return is_array($object) ? $object : null;
    }

    /**
     * The whole body decoded as an associative array.
     *
     * @return array<string, mixed>
     */
    public function payload(): array
    {
        return json_decode($this->raw, true, 512, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
    }

    /**
     * Parses a delivery body. Unknown fields are ignored, so that new fields
     * do not break receivers.
     *
     * @throws InvalidEventException when the body is not a JSON object, has
     *                               no id in the canonical lowercase UUID form or no type, or has a known
     *                               field of the wrong type
     */
    public static function parse(string $body, ?Headers $headers = null): self
    {
        // Decoded twice: as objects to tell {} from [] (both are an empty
        // array once decoded as arrays), and as arrays for the handler.
        try {
            $tree = json_decode($body, false, 512, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
            $array = json_decode($body, true, 512, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
        } catch (\JsonException $e) {
            throw new InvalidEventException('the body is not JSON: ' . $e->getMessage(), $e);
        }
        if (!$tree instanceof \stdClass) {
            throw new InvalidEventException('the body is not a JSON object');
        }
        $id = self::field($tree, 'id', 'string');
        if ($id === null || $id === '') {
            throw new InvalidEventException('no id');
        }
        if (!self::isCanonicalUuid($id)) {
            throw new InvalidEventException('id is not a canonical lowercase UUID');
        }
        $type = self::field($tree, 'type', 'string');
        if ($type === null || $type === '') {
            throw new InvalidEventException('no type');
        }
        $created = self::field($tree, 'created', 'integer');
        $livemode = self::field($tree, 'livemode', 'boolean');
        $account = self::field($tree, 'account', 'object');
        $data = self::field($tree, 'data', 'object');
        if ($data !== null) {
            self::field($data, 'type', 'string', 'data.type');
        }
        return new self(
            id: $id,
            type: $type,
            apiVersion: self::field($tree, 'api_version', 'string'),
            created: $created === null || $created === 0 ? null : new \DateTimeImmutable('@' . $created),
            livemode: $livemode ?? true,
            test: self::field($tree, 'test', 'boolean') ?? false,
            correlationId: self::field($tree, 'correlation_id', 'string'),
            accountId: $account === null ? null : self::field($account, 'id', 'string', 'account.id'),
            accountRelationship: self::field($tree, 'account_relationship', 'string'),
            companyId: self::field($tree, 'company_id', 'string'),
            data: is_array($array['data'] ?? null) ? $array['data'] : [],
            raw: $body,
            headers: $headers ?? new Headers(),
        );
    }

    /**
     * The value of a known field, or null when it is absent or null.
     *
     * @throws InvalidEventException when it has another type
     */
    private static function field(\stdClass $in, string $name, string $type, ?string $path = null): mixed
    {
        if (!property_exists($in, $name) || $in->{$name} === null) {
            return null;
        }
        $value = $in->{$name};
        if (gettype($value) !== $type) {
            $names = ['string' => 'a string', 'integer' => 'an integer', 'boolean' => 'a boolean', 'object' => 'an object'];
            throw new InvalidEventException(sprintf('%s is not %s', $path ?? $name, $names[$type]));
        }
        return $value;
    }

    /**
     * Whether $s is a UUID in the 8-4-4-4-12 lowercase hexadecimal form. The
     * id is compared as a string, so an uppercase copy would not be a
     * duplicate: only the canonical form is an event.
     */
    public static function isCanonicalUuid(string $s): bool
    {
        return preg_match('/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/D', $s) === 1;
    }
}
