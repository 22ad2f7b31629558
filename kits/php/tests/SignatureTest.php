<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Tests;

use Factuarea\Webhooks\Exception\InvalidSignatureException;
use Factuarea\Webhooks\Signature;
use PHPUnit\Framework\TestCase;

final class SignatureTest extends TestCase
{
    /** @return iterable<string, array{array<string, mixed>}> */
    public static function vectors(): iterable
    {
        $file = json_decode((string) file_get_contents(__DIR__ . '/signature-vectors.json'), true, 512, JSON_THROW_ON_ERROR);
        foreach ($file['vectors'] as $v) {
            yield $v['name'] => [$v];
        }
    }

    /** @dataProvider vectors */
    public function testVerifyVectors(array $v): void
    {
        $error = null;
        try {
            Signature::verify($v['header'], $v['body'], [$v['secret']], $v['timestamp']);
        } catch (InvalidSignatureException $e) {
            $error = $e;
        }
        $this->assertSame($v['valid'], $error === null, 'valid' . ($error ? ' (got ' . $error->getMessage() . ')' : ''));
    }

    /**
     * The sender's side: for every valid vector, what sign() computes for
     * the vector's secret is one of the header's elements.
     *
     * @dataProvider vectors
     */
    public function testSignVectors(array $v): void
    {
        if (!$v['valid']) {
            $this->addToAssertionCount(1);
            return;
        }
        [$t] = Signature::parse($v['header']);
        $got = Signature::sign($t, $v['body'], $v['secret']);
        [, $sig] = explode(',', $got, 2);
        $this->assertContains($sig, explode(',', $v['header']));
        $this->assertSame('t=' . $t . ',' . $sig, $got);
    }

    public function testVectorsAreTheSharedOnes(): void
    {
        // The Go kit keeps its copies in signature/testdata: the three
        // copies in the repository must not drift apart.
        foreach (['signature-vectors.json', 'standard-webhooks-vectors.json'] as $name) {
            $this->assertFileEquals(__DIR__ . '/../../../signature/testdata/' . $name, __DIR__ . '/' . $name, $name);
        }
    }

    public function testRotation(): void
    {
        $body = '{"id":"x"}';
        $header = Signature::sign(1790590562, $body, 'whsec_new', 'whsec_old');
        [, $sigs] = Signature::parse($header);
        $this->assertCount(2, $sigs);
        foreach (['whsec_new', 'whsec_old'] as $secret) {
            Signature::verify($header, $body, [$secret], 1790590562);
        }
        $this->assertReason(InvalidSignatureException::REASON_NO_MATCH, fn () => Signature::verify($header, $body, ['whsec_other'], 1790590562));
        // The receiver's side of a rotation: two secrets, signed with either.
        Signature::verify(Signature::sign(1790590562, $body, 'whsec_old'), $body, ['whsec_new', 'whsec_old'], 1790590562);
    }

    /** @return iterable<string, array{string, int, string}> */
    public static function errors(): iterable
    {
        $now = 1790590562;
        $good = Signature::sign($now, '{}', 'whsec_a');
        $v1 = substr($good, strpos($good, 'v1='));
        yield 'empty' => ['', $now, InvalidSignatureException::REASON_MISSING_HEADER];
        yield 'blank' => [" \t", $now, InvalidSignatureException::REASON_MISSING_HEADER];
        yield 'no timestamp' => ['v1=' . str_repeat('ab', 32), $now, InvalidSignatureException::REASON_NO_TIMESTAMP];
        yield 'two timestamps' => ['t=1,t=2,' . $v1, $now, InvalidSignatureException::REASON_NO_TIMESTAMP];
        yield 'negative timestamp' => ['t=-5,' . $v1, $now, InvalidSignatureException::REASON_NO_TIMESTAMP];
        yield 'zero timestamp' => ['t=0,' . $v1, $now, InvalidSignatureException::REASON_NO_TIMESTAMP];
        yield 'timestamp not a number' => ['t=1790590562x,' . $v1, $now, InvalidSignatureException::REASON_NO_TIMESTAMP];
        yield 'timestamp past 64 bits' => ['t=9223372036854775808,' . $v1, $now, InvalidSignatureException::REASON_NO_TIMESTAMP];
        yield 'no v1' => ['t=1790590562,v0=abc', $now, InvalidSignatureException::REASON_NO_SIGNATURE];
        yield 'v1 too long' => ['t=1790590562,v1=' . str_repeat('ab', 33), $now, InvalidSignatureException::REASON_NO_SIGNATURE];
        yield 'stale' => [$good, $now + 301, InvalidSignatureException::REASON_TIMESTAMP_OUT_OF_TOLERANCE];
        yield 'future' => [$good, $now - 301, InvalidSignatureException::REASON_TIMESTAMP_OUT_OF_TOLERANCE];
        yield 'centuries away' => ['t=9223372036854775807,' . $v1, $now, InvalidSignatureException::REASON_TIMESTAMP_OUT_OF_TOLERANCE];
        yield 'wrong body' => [Signature::sign($now, '{"a":1}', 'whsec_a'), $now, InvalidSignatureException::REASON_NO_MATCH];
    }

    /** @dataProvider errors */
    public function testVerifyErrors(string $header, int $now, string $reason): void
    {
        $this->assertReason($reason, fn () => Signature::verify($header, '{}', ['whsec_a'], $now));
    }

    public function testEdgesOfTheTolerance(): void
    {
        $header = Signature::sign(1790590562, '{}', 'whsec_a');
        Signature::verify($header, '{}', ['whsec_a'], 1790590562 + 300);
        Signature::verify($header, '{}', ['whsec_a'], 1790590562 - 300);
        // Go's strconv.ParseInt accepts a plus sign and leading zeros.
        Signature::verify(str_replace('t=', 't=+0', $header), '{}', ['whsec_a'], 1790590562);
        $this->addToAssertionCount(3);
    }

    public function testUppercaseHexMatches(): void
    {
        // Go's hex decoding reads both cases.
        $hex = bin2hex(Signature::compute('whsec_a', 1790590562, '{}'));
        Signature::verify('t=1790590562,v1=' . strtoupper($hex), '{}', ['whsec_a'], 1790590562);
        $this->addToAssertionCount(1);
    }

    public function testNoSecret(): void
    {
        $this->assertReason(InvalidSignatureException::REASON_NO_SECRET, fn () => Signature::verify(Signature::sign(1, '{}', 'whsec_a'), '{}', [], 1));
    }

    private function assertReason(string $reason, callable $f): void
    {
        try {
            $f();
        } catch (InvalidSignatureException $e) {
            $this->assertSame($reason, $e->reason(), $e->getMessage());
            $this->assertStringStartsWith('invalid signature: ', $e->getMessage());
            return;
        }
        $this->fail('verified, want ' . $reason);
    }
}
