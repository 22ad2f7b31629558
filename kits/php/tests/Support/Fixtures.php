<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Tests\Support;

use Factuarea\Webhooks\Signature;
use Factuarea\Webhooks\StandardWebhooks;

/** Events, secrets and signed requests, as the sender makes them. */
final class Fixtures
{
    /** A secret in the current format: standard base64 after whsec_, so it serves both schemes. */
    public const SECRET = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';
    /** The secret a rotation replaced it with. */
    public const NEW_SECRET = 'whsec_//jx6uPc1c7HwLmyq6Sdlo+IgXpzbGVeV1BJQjs0LSY=';
    /** A secret of the earlier format (unpadded base64url): Factuarea-Signature only. */
    public const OLD_FORMAT_SECRET = 'whsec_ZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXp7fH1-f4CBgoM';

    public static function newId(): string
    {
        $b = random_bytes(16);
        $b[6] = chr((ord($b[6]) & 0x0f) | 0x70);
        $b[8] = chr((ord($b[8]) & 0x3f) | 0x80);
        $h = bin2hex($b);
        return sprintf('%s-%s-%s-%s-%s', substr($h, 0, 8), substr($h, 8, 4), substr($h, 12, 4), substr($h, 16, 4), substr($h, 20));
    }

    /** A company endpoint's body, in api_version 2026-09-23. */
    public static function companyEvent(string $id, array $object = []): string
    {
        return json_encode([
            'id' => $id,
            'type' => 'invoice.sent',
            'api_version' => '2026-09-23',
            'created' => 1790590561,
            'livemode' => true,
            'test' => false,
            'correlation_id' => '01a0e783-aa84-7b48-8c63-1a5e9d2f4b70',
            'data' => [
                'type' => 'invoice.sent',
                'object' => $object + ['object' => 'invoice', 'id' => '01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42', 'number' => 'FAC-2026-00042', 'total' => '1210.00'],
            ],
        ], JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES);
    }

    /** An account endpoint's body for a managed account, in api_version 2025-06-01 (no data.type, total_cents). */
    public static function accountEvent(string $id, array $object = []): string
    {
        return json_encode([
            'id' => $id,
            'type' => 'invoice.sent',
            'api_version' => '2025-06-01',
            'created' => 1790590561,
            'livemode' => false,
            'test' => false,
            'correlation_id' => null,
            'account' => ['id' => '01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a00'],
            'account_relationship' => 'managed',
            'company_id' => '01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a11',
            'data' => [
                'object' => $object + ['object' => 'invoice', 'id' => '01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a43', 'total_cents' => 121000],
            ],
        ], JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES);
    }

    /**
     * The headers of a delivery signed with Factuarea-Signature.
     *
     * @return array<string, string>
     */
    public static function signed(string $body, int $at, string ...$secrets): array
    {
        $secrets = $secrets === [] ? [self::SECRET] : $secrets;
        $id = json_decode($body, true)['id'] ?? '';
        return [
            'Content-Type' => 'application/json',
            'Factuarea-Signature' => Signature::sign($at, $body, ...$secrets),
            'Factuarea-Event-Id' => (string) $id,
            'Factuarea-Event-Type' => 'invoice.sent',
            'Factuarea-Delivery-Id' => self::newId(),
            'Idempotency-Key' => (string) $id,
        ];
    }

    /**
     * The Standard Webhooks headers of a delivery (only those).
     *
     * @return array<string, string>
     */
    public static function standard(string $body, int $at, ?string $webhookId = null, string ...$secrets): array
    {
        $secrets = $secrets === [] ? [self::SECRET] : $secrets;
        $webhookId ??= (string) (json_decode($body, true)['id'] ?? '');
        return [
            'Content-Type' => 'application/json',
            'webhook-id' => $webhookId,
            'webhook-timestamp' => (string) $at,
            'webhook-signature' => StandardWebhooks::sign($webhookId, $at, $body, ...$secrets),
        ];
    }
}
