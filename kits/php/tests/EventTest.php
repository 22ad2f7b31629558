<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Tests;

use Factuarea\Webhooks\Event;
use Factuarea\Webhooks\Exception\InvalidEventException;
use Factuarea\Webhooks\Headers;
use Factuarea\Webhooks\Tests\Support\Fixtures;
use PHPUnit\Framework\TestCase;

final class EventTest extends TestCase
{
    public function testCompanyEnvelope(): void
    {
        $id = Fixtures::newId();
        $body = Fixtures::companyEvent($id);
        $ev = Event::parse($body);
        $this->assertSame($id, $ev->id);
        $this->assertSame('invoice.sent', $ev->type);
        $this->assertSame('2026-09-23', $ev->apiVersion);
        $this->assertSame('2026-09-28T10:16:01+00:00', $ev->created?->format(DATE_ATOM));
        $this->assertTrue($ev->livemode);
        $this->assertFalse($ev->test);
        $this->assertSame('01a0e783-aa84-7b48-8c63-1a5e9d2f4b70', $ev->correlationId);
        $this->assertNull($ev->accountId);
        $this->assertNull($ev->accountRelationship);
        $this->assertNull($ev->companyId);
        $this->assertSame('invoice.sent', $ev->data['type']);
        $this->assertSame('1210.00', $ev->object()['total']);
        $this->assertSame($body, $ev->raw);
        $this->assertSame(json_decode($body, true), $ev->payload());
        $this->assertEquals(new Headers(), $ev->headers);
    }

    public function testAccountEnvelopeOfTheOlderVersion(): void
    {
        $ev = Event::parse(Fixtures::accountEvent(Fixtures::newId()), new Headers(deliveryId: 'd'));
        $this->assertSame('2025-06-01', $ev->apiVersion);
        $this->assertFalse($ev->livemode);
        $this->assertNull($ev->correlationId);
        $this->assertSame('01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a00', $ev->accountId);
        $this->assertSame(Event::RELATIONSHIP_MANAGED, $ev->accountRelationship);
        $this->assertSame('01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a11', $ev->companyId);
        $this->assertArrayNotHasKey('type', $ev->data);
        $this->assertSame(121000, $ev->object()['total_cents']);
        $this->assertSame('d', $ev->headers->deliveryId);
    }

    public function testMinimalEvent(): void
    {
        $ev = Event::parse(' {"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"ping","livemode":null,"unknown":[1,2]} ');
        $this->assertTrue($ev->livemode, 'livemode defaults to true');
        $this->assertNull($ev->created);
        $this->assertNull($ev->apiVersion);
        $this->assertSame([], $ev->data);
        $this->assertNull($ev->object());
    }

    public function testLargeIntegersKeepTheirDigits(): void
    {
        $ev = Event::parse('{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"x","data":{"object":{"n":123456789012345678901234567890}}}');
        $this->assertSame('123456789012345678901234567890', $ev->object()['n']);
    }

    /** @return iterable<string, array{string, string}> */
    public static function invalid(): iterable
    {
        $id = '01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31';
        yield 'empty' => ['', 'not JSON'];
        yield 'truncated' => ['{"id":"' . $id . '","type":', 'not JSON'];
        yield 'not UTF-8' => ["{\"id\":\"$id\",\"type\":\"\xff\"}", 'not JSON'];
        yield 'array' => ['[]', 'not a JSON object'];
        yield 'string' => ['"x"', 'not a JSON object'];
        yield 'null' => ['null', 'not a JSON object'];
        yield 'no id' => ['{"type":"invoice.sent"}', 'no id'];
        yield 'null id' => ['{"id":null,"type":"invoice.sent"}', 'no id'];
        yield 'id a number' => ['{"id":42,"type":"invoice.sent"}', 'id is not a string'];
        yield 'id not a UUID' => ['{"id":"evt_123","type":"invoice.sent"}', 'not a canonical lowercase UUID'];
        yield 'uppercase id' => ['{"id":"' . strtoupper($id) . '","type":"invoice.sent"}', 'not a canonical lowercase UUID'];
        yield 'id with a newline' => ['{"id":"' . $id . '\n","type":"invoice.sent"}', 'not a canonical lowercase UUID'];
        yield 'no type' => ['{"id":"' . $id . '"}', 'no type'];
        yield 'empty type' => ['{"id":"' . $id . '","type":""}', 'no type'];
        yield 'created a string' => ['{"id":"' . $id . '","type":"x","created":"1790590561"}', 'created is not an integer'];
        yield 'created a fraction' => ['{"id":"' . $id . '","type":"x","created":1.5}', 'created is not an integer'];
        yield 'livemode a string' => ['{"id":"' . $id . '","type":"x","livemode":"true"}', 'livemode is not a boolean'];
        yield 'account a list' => ['{"id":"' . $id . '","type":"x","account":[]}', 'account is not an object'];
        yield 'account.id a number' => ['{"id":"' . $id . '","type":"x","account":{"id":1}}', 'account.id is not a string'];
        yield 'data a string' => ['{"id":"' . $id . '","type":"x","data":"x"}', 'data is not an object'];
        yield 'data.type a number' => ['{"id":"' . $id . '","type":"x","data":{"type":1}}', 'data.type is not a string'];
    }

    /** @dataProvider invalid */
    public function testInvalid(string $body, string $want): void
    {
        try {
            Event::parse($body);
        } catch (InvalidEventException $e) {
            $this->assertStringStartsWith('invalid event: ', $e->getMessage());
            $this->assertStringContainsString($want, $e->getMessage());
            return;
        }
        $this->fail('parsed, want an InvalidEventException');
    }

    public function testHeadersFromAnyForm(): void
    {
        $h = Headers::from(['FACTUAREA-DELIVERY-ID' => ['d1', 'd2'], 'idempotency-key' => 'k', 'Webhook-Id' => 'w']);
        $this->assertSame('d1', $h->deliveryId);
        $this->assertSame('k', $h->idempotencyKey);
        $this->assertSame('w', $h->webhookId);
        $this->assertNull($h->eventId);
        $this->assertSame(
            ['factuarea-signature' => 's', 'content-type' => 'application/json', 'content-length' => '2'],
            Headers::fromServer(['HTTP_FACTUAREA_SIGNATURE' => 's', 'CONTENT_TYPE' => 'application/json', 'CONTENT_LENGTH' => '2', 'REQUEST_METHOD' => 'POST', 'argv' => []]),
        );
    }
}
