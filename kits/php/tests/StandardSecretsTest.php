<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Tests;

use Factuarea\Webhooks\Exception\ConfigurationException;
use Factuarea\Webhooks\Receiver;
use PHPUnit\Framework\TestCase;

/**
 * The shared cases (SPEC 15, standard-secrets.json): a receiver on the
 * standard scheme checks every secret when it is constructed, and refuses
 * the first that is not standard base64 after whsec_ with the message
 * every kit gives.
 */
final class StandardSecretsTest extends TestCase
{
    /** @return array{message: string, cases: list<array{name: string, secrets: list<string>, refused: ?int}>} */
    private static function shared(): array
    {
        return json_decode((string) file_get_contents(__DIR__ . '/standard-secrets.json'), true, 512, JSON_THROW_ON_ERROR);
    }

    /** @return iterable<string, array{list<string>, ?int}> */
    public static function cases(): iterable
    {
        foreach (self::shared()['cases'] as $c) {
            yield $c['name'] => [$c['secrets'], $c['refused']];
        }
    }

    /**
     * @dataProvider cases
     *
     * @param list<string> $secrets
     */
    public function testStandardScheme(array $secrets, ?int $refused): void
    {
        $construct = static fn (): Receiver => new Receiver(
            pdo: new \PDO('sqlite::memory:'),
            secrets: $secrets,
            handler: static fn () => null,
            scheme: 'standard',
        );
        if ($refused === null) {
            $this->assertSame('standard', $construct()->scheme()->value);
            return;
        }
        $want = str_replace('{index}', (string) $refused, self::shared()['message']);
        try {
            $construct();
            $this->fail(sprintf('%s: accepted, want %s', json_encode($secrets), $want));
        } catch (ConfigurationException $e) {
            $this->assertSame($want, $e->getMessage());
        }
    }
}
