<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Tests;

use Factuarea\Webhooks\Exception\InvalidSignatureException;
use Factuarea\Webhooks\Signature;
use Factuarea\Webhooks\StandardWebhooks;
use Factuarea\Webhooks\Tests\Support\Fixtures;
use PHPUnit\Framework\TestCase;

final class StandardWebhooksTest extends TestCase
{
    /** @return iterable<string, array{array<string, mixed>}> */
    public static function vectors(): iterable
    {
        $file = json_decode((string) file_get_contents(__DIR__ . '/standard-webhooks-vectors.json'), true, 512, JSON_THROW_ON_ERROR);
        foreach ($file['vectors'] as $v) {
            yield $v['name'] => [$v];
        }
    }

    /** @dataProvider vectors */
    public function testVerifyVectors(array $v): void
    {
        $error = null;
        try {
            StandardWebhooks::verify($v['id'], (string) $v['timestamp'], $v['signature'], $v['body'], $v['secrets'], $v['now']);
        } catch (InvalidSignatureException $e) {
            $error = $e;
        }
        $this->assertSame($v['valid'], $error === null, 'valid' . ($error ? ' (got ' . $error->getMessage() . ')' : ''));
        if (isset($v['factuarea_signature'])) {
            // One secret serves both schemes.
            Signature::verify($v['factuarea_signature'], $v['body'], $v['secrets'], $v['now']);
        }
    }

    /** @dataProvider vectors */
    public function testSignVectors(array $v): void
    {
        if (!$v['valid'] || str_contains($v['signature'], ' ')) {
            $this->addToAssertionCount(1);
            return;
        }
        $this->assertSame($v['signature'], StandardWebhooks::sign($v['id'], $v['timestamp'], $v['body'], ...$v['secrets']));
        if (isset($v['factuarea_signature'])) {
            $this->assertSame($v['factuarea_signature'], Signature::sign($v['timestamp'], $v['body'], ...$v['secrets']));
        }
    }

    public function testRotationHeader(): void
    {
        $both = StandardWebhooks::sign('msg', 1, '{}', Fixtures::NEW_SECRET, Fixtures::SECRET);
        $this->assertSame(
            StandardWebhooks::sign('msg', 1, '{}', Fixtures::NEW_SECRET) . ' ' . StandardWebhooks::sign('msg', 1, '{}', Fixtures::SECRET),
            $both,
        );
        StandardWebhooks::verify('msg', '1', $both, '{}', [Fixtures::SECRET], 1);
        StandardWebhooks::verify('msg', '1', $both, '{}', [Fixtures::NEW_SECRET], 1);
    }

    public function testKey(): void
    {
        $this->assertSame(range(0, 31), array_values(unpack('C*', (string) StandardWebhooks::key(Fixtures::SECRET))));
        foreach ([
            'unpadded, the earlier format' => Fixtures::OLD_FORMAT_SECRET,
            'no prefix' => 'AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=',
            'prefix alone' => 'whsec_',
            'a space inside' => 'whsec_AAECAwQFBgcICQoL DA0ODxAREhMUFRYXGBkaGxwdHh8=',
            'not canonical' => 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh9=',
            'base64url' => 'whsec_--jx6uPc1c7HwLmyq6Sdlo-IgXpzbGVeV1BJQjs0LSY=',
        ] as $name => $secret) {
            $this->assertNull(StandardWebhooks::key($secret), $name);
        }
    }

    public function testOldSecretFormat(): void
    {
        $this->assertReason(
            InvalidSignatureException::REASON_SECRET_NOT_STANDARD,
            fn () => StandardWebhooks::verify('msg', '1', StandardWebhooks::sign('msg', 1, '{}', Fixtures::SECRET), '{}', [Fixtures::OLD_FORMAT_SECRET], 1),
        );
        // With an old and a new secret, the new one verifies.
        StandardWebhooks::verify('msg', '1', StandardWebhooks::sign('msg', 1, '{}', Fixtures::SECRET), '{}', [Fixtures::OLD_FORMAT_SECRET, Fixtures::SECRET], 1);
        $this->expectException(\InvalidArgumentException::class);
        StandardWebhooks::sign('msg', 1, '{}', Fixtures::OLD_FORMAT_SECRET);
    }

    /** @return iterable<string, array{string, string, string, string}> */
    public static function errors(): iterable
    {
        $sig = StandardWebhooks::sign('msg', 1790590562, '{}', Fixtures::SECRET);
        yield 'no signature' => ['msg', '1790590562', '', InvalidSignatureException::REASON_MISSING_HEADER];
        yield 'no id' => ['', '1790590562', $sig, InvalidSignatureException::REASON_MISSING_HEADER];
        yield 'no timestamp' => ['msg', '', $sig, InvalidSignatureException::REASON_NO_TIMESTAMP];
        yield 'timestamp not a number' => ['msg', '17905x', $sig, InvalidSignatureException::REASON_NO_TIMESTAMP];
        yield 'negative timestamp' => ['msg', '-1790590562', $sig, InvalidSignatureException::REASON_NO_TIMESTAMP];
        yield 'malformed entry' => ['msg', '1790590562', 'v1,AAAA', InvalidSignatureException::REASON_NO_SIGNATURE];
        yield 'unpadded entry' => ['msg', '1790590562', rtrim($sig, '='), InvalidSignatureException::REASON_NO_SIGNATURE];
        yield 'v1a entry' => ['msg', '1790590562', 'v1a,' . substr($sig, 3), InvalidSignatureException::REASON_NO_SIGNATURE];
        yield 'stale' => ['msg', '1790590261', StandardWebhooks::sign('msg', 1790590261, '{}', Fixtures::SECRET), InvalidSignatureException::REASON_TIMESTAMP_OUT_OF_TOLERANCE];
        yield 'another id' => ['msh', '1790590562', $sig, InvalidSignatureException::REASON_NO_MATCH];
    }

    /** @dataProvider errors */
    public function testVerifyErrors(string $id, string $timestamp, string $signature, string $reason): void
    {
        $this->assertReason($reason, fn () => StandardWebhooks::verify($id, $timestamp, $signature, '{}', [Fixtures::SECRET], 1790590562));
    }

    public function testEntriesOfOtherVersionsAreIgnored(): void
    {
        $sig = StandardWebhooks::sign('msg', 1790590562, '{}', Fixtures::SECRET);
        StandardWebhooks::verify('msg', ' 1790590562 ', "v2,abc  v1a,xyz\t" . $sig, '{}', [Fixtures::SECRET], 1790590562);
        $this->addToAssertionCount(1);
    }

    private function assertReason(string $reason, callable $f): void
    {
        try {
            $f();
        } catch (InvalidSignatureException $e) {
            $this->assertSame($reason, $e->reason(), $e->getMessage());
            return;
        }
        $this->fail('verified, want ' . $reason);
    }
}
