<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Tests;

use Factuarea\Webhooks\Event;
use Factuarea\Webhooks\Exception\ConfigurationException;
use Factuarea\Webhooks\Exception\DatabaseException;
use Factuarea\Webhooks\Exception\HandlerException;
use Factuarea\Webhooks\Exception\InvalidSignatureException;
use Factuarea\Webhooks\ProcessedEvents;
use Factuarea\Webhooks\Receiver;
use Factuarea\Webhooks\Result;
use Factuarea\Webhooks\Signature;
use Factuarea\Webhooks\StandardWebhooks;
use Factuarea\Webhooks\Tests\Support\Backend;
use Factuarea\Webhooks\Tests\Support\Fixtures;
use Factuarea\Webhooks\Tests\Support\TestClock;
use Factuarea\Webhooks\Tests\Support\Workers;
use PHPUnit\Framework\TestCase;

/**
 * The receiver on one database: every test runs on SQLite, PostgreSQL and
 * MariaDB through the three subclasses, each with a database of its own.
 */
abstract class ReceiverSuite extends TestCase
{
    /** @var array<class-string, Backend> */
    private static array $backends = [];

    protected Backend $backend;
    /** The connection the tests look through; each receiver has its own. */
    protected \PDO $db;
    protected TestClock $clock;
    /** @var list<array{string, string, array<string, mixed>}> */
    protected array $log = [];
    protected int $runs = 0;

    abstract protected static function createBackend(): Backend;

    public static function setUpBeforeClass(): void
    {
        self::$backends[static::class] = static::createBackend();
    }

    public static function tearDownAfterClass(): void
    {
        if (isset(self::$backends[static::class])) {
            self::$backends[static::class]->drop();
            unset(self::$backends[static::class]);
        }
    }

    protected function setUp(): void
    {
        $this->backend = self::$backends[static::class];
        $this->db = $this->backend->connect();
        $this->backend->reset($this->db);
        ProcessedEvents::createTable($this->db);
        $this->db->exec('CREATE TABLE effects (event_id VARCHAR(64) NOT NULL)');
        $this->clock = new TestClock();
        $this->log = [];
        $this->runs = 0;
    }

    /** A receiver on a connection of its own, by the test clock, whose handler records one effect. */
    protected function receiver(?callable $handler = null, ?\PDO $pdo = null, mixed ...$options): Receiver
    {
        $handler ??= function (Event $event, \PDO $tx): void {
            $this->runs++;
            $this->recordEffect($event, $tx);
        };
        return new Receiver(...$options + [
            'pdo' => $pdo ?? $this->backend->connect(),
            'secrets' => [Fixtures::SECRET],
            'handler' => $handler,
            'clock' => fn (): \DateTimeImmutable => $this->clock->now(),
            'logger' => function (string $level, string $message, array $context): void {
                $this->log[] = [$level, $message, $context];
            },
        ]);
    }

    protected function recordEffect(Event $event, \PDO $tx): void
    {
        $tx->prepare('INSERT INTO effects (event_id) VALUES (?)')->execute([$event->id]);
    }

    /** Delivers $body signed now with Factuarea-Signature (or with $headers). */
    protected function deliver(Receiver $r, string $body, ?array $headers = null): Result
    {
        return $r->handle('POST', $headers ?? Fixtures::signed($body, $this->clock->unix()), $body);
    }

    protected function rows(string $table, ?string $id = null): int
    {
        if ($id === null) {
            return (int) $this->db->query('SELECT COUNT(*) FROM ' . $table)->fetchColumn();
        }
        $stmt = $this->db->prepare('SELECT COUNT(*) FROM ' . $table . ' WHERE event_id = ?');
        $stmt->execute([$id]);
        return (int) $stmt->fetchColumn();
    }

    protected function assertAnswer(int $status, string $message, Result $got, string $what = ''): void
    {
        $this->assertSame([$status, $message], [$got->status, $got->message], $what . ($got->error ? ' (error: ' . $got->error->getMessage() . ')' : ''));
    }

    public function testProcessedThenRepeat(): void
    {
        $r = $this->receiver();
        $id = Fixtures::newId();
        $first = $this->deliver($r, Fixtures::companyEvent($id));
        $this->assertAnswer(200, 'processed', $first, 'first delivery');
        $this->assertSame("processed\n", $first->body());
        $this->assertTrue($first->processed);
        $this->assertSame('text/plain; charset=utf-8', $first->headers['Content-Type']);
        $this->clock->add(3600);
        $repeat = $this->deliver($r, Fixtures::companyEvent($id));
        $this->assertAnswer(200, 'already processed', $repeat, 'repeat');
        $this->assertFalse($repeat->processed);
        $this->assertSame(1, $this->runs);
        $this->assertSame(1, $this->rows('effects', $id));
        $this->assertSame(1, $this->rows('processed_webhook_events', $id));
        // Another event about the same invoice has its own id: not a repeat.
        $this->assertAnswer(200, 'processed', $this->deliver($r, Fixtures::companyEvent(Fixtures::newId())));
        $this->assertSame(2, $this->runs);
        // A repeat through the other scheme is a repeat too: the key is the event id.
        $this->assertAnswer(200, 'already processed', $this->deliver($r, Fixtures::companyEvent($id), Fixtures::standard(Fixtures::companyEvent($id), $this->clock->unix())));
        $this->assertSame('debug', $this->log[0][0]);
    }

    /**
     * Every refusal: its status, the check its answer names, that the
     * handler did not run and that no id was recorded.
     */
    public function testRefusals(): void
    {
        $r = $this->receiver();
        $now = $this->clock->unix();
        $id = Fixtures::newId();
        $good = Fixtures::companyEvent($id);
        $signed = fn (string $body): array => [$body, Fixtures::signed($body, $now)];
        $cases = [
            'no signature' => ['POST', $good, [], 401, 'no Factuarea-Signature or webhook-signature header'],
            'empty signature' => ['POST', $good, ['Factuarea-Signature' => ''], 401, 'header'],
            'wrong secret' => ['POST', $good, Fixtures::signed($good, $now, 'whsec_other'), 401, 'no v1 signature matches'],
            'body changed after signing' => ['POST', $good . ' ', Fixtures::signed($good, $now), 401, 'no v1 signature matches'],
            'an hour old' => ['POST', $good, Fixtures::signed($good, $now - 3600), 401, 'outside the tolerance'],
            'from the future' => ['POST', $good, Fixtures::signed($good, $now + 600), 401, 'outside the tolerance'],
            'garbage header' => ['POST', $good, ['Factuarea-Signature' => 't=abc,v1=zz'], 401, 'no valid timestamp'],
            'not JSON' => ['POST', ...$signed('{"id":"' . $id . '","type":'), ...[400, 'invalid event: the body is not JSON']],
            'binary' => ['POST', ...$signed("\x00\xff\xfe"), ...[400, 'invalid event']],
            'array' => ['POST', ...$signed('[]'), ...[400, 'not a JSON object']],
            'no id' => ['POST', ...$signed('{"type":"invoice.sent"}'), ...[400, 'no id']],
            'id not a UUID' => ['POST', ...$signed('{"id":"evt_123","type":"invoice.sent"}'), ...[400, 'not a canonical lowercase UUID']],
            'uppercase id' => ['POST', ...$signed('{"id":"' . strtoupper($id) . '","type":"invoice.sent"}'), ...[400, 'not a canonical lowercase UUID']],
            'no type' => ['POST', ...$signed('{"id":"' . $id . '"}'), ...[400, 'no type']],
            'GET' => ['GET', '', [], 405, 'method GET not allowed'],
            'PUT' => ['PUT', $good, Fixtures::signed($good, $now), 405, 'not allowed'],
            'lowercase post' => ['post', $good, Fixtures::signed($good, $now), 405, 'not allowed'],
            'too large' => ['POST', ...$signed('{"id":"' . $id . '","type":"invoice.sent","pad":"' . str_repeat('x', Receiver::DEFAULT_MAX_BODY_BYTES) . '"}'), ...[413, 'too large']],
        ];
        foreach ($cases as $name => [$method, $body, $headers, $status, $inMessage]) {
            $got = $r->handle($method, $headers, $body);
            $this->assertSame($status, $got->status, $name . ': ' . $got->message);
            $this->assertStringContainsString($inMessage, $got->message, $name);
            $this->assertNull($got->processed, $name);
            $this->assertSame($status === 405 ? 'POST' : null, $got->headers['Allow'] ?? null, $name . ': Allow');
            $this->assertSame('nosniff', $got->headers['X-Content-Type-Options'], $name);
            $this->assertSame('warning', end($this->log)[0], $name . ': logged as a warning');
        }
        $this->assertSame(0, $this->runs, 'handler runs');
        $this->assertSame(0, $this->rows('processed_webhook_events'));
        // The limit is the body's, exactly.
        $small = $this->receiver(maxBodyBytes: strlen($good));
        $this->assertAnswer(200, 'processed', $this->deliver($small, $good));
        $this->assertSame(413, $this->deliver($small, $good . ' ')->status);
    }

    public function testSchemes(): void
    {
        $now = $this->clock->unix();
        $body = fn (string $id): string => Fixtures::companyEvent($id);
        $any = $this->receiver();
        $factuarea = $this->receiver(scheme: 'factuarea');
        $standard = $this->receiver(scheme: 'standard');

        $id = Fixtures::newId();
        $this->assertAnswer(200, 'processed', $this->deliver($any, $body($id), Fixtures::standard($body($id), $now)), 'any, Standard Webhooks headers only');

        $id = Fixtures::newId();
        $both = Fixtures::signed($body($id), $now) + Fixtures::standard($body($id), $now);
        $this->assertAnswer(200, 'processed', $this->deliver($any, $body($id), $both), 'any, both schemes');

        $id = Fixtures::newId();
        $badFactuarea = ['Factuarea-Signature' => Signature::sign($now, $body($id), 'whsec_other')] + Fixtures::standard($body($id), $now);
        $got = $this->deliver($any, $body($id), $badFactuarea);
        $this->assertSame(401, $got->status, 'any: a present Factuarea-Signature that fails is not passed over for the other scheme');
        $this->assertStringContainsString('Factuarea-Signature: no v1 signature matches', $got->message);
        $this->assertAnswer(200, 'processed', $this->deliver($standard, $body($id), $badFactuarea), 'standard ignores Factuarea-Signature');

        // An empty Factuarea-Signature is present, and fails like a wrong
        // one: it does not pass the request over to the other scheme.
        $id = Fixtures::newId();
        foreach (['', ' '] as $empty) {
            $got = $this->deliver($any, $body($id), ['Factuarea-Signature' => $empty] + Fixtures::standard($body($id), $now));
            $this->assertSame(401, $got->status, sprintf('any: Factuarea-Signature %s beside valid Standard Webhooks headers', json_encode($empty)));
            $this->assertSame(InvalidSignatureException::REASON_MISSING_HEADER, $got->error->reason());
        }

        $id = Fixtures::newId();
        $got = $this->deliver($factuarea, $body($id), Fixtures::standard($body($id), $now));
        $this->assertSame([401, 'invalid signature: Factuarea-Signature header is missing'], [$got->status, $got->message]);
        $got = $this->deliver($standard, $body($id), Fixtures::signed($body($id), $now));
        $this->assertSame([401, 'invalid signature: webhook-signature header is missing'], [$got->status, $got->message]);
        $got = $this->deliver($standard, $body($id), Fixtures::standard($body($id), $now - 301));
        $this->assertSame(401, $got->status);
        $this->assertSame(InvalidSignatureException::REASON_TIMESTAMP_OUT_OF_TOLERANCE, $got->error->reason());

        // webhook-id is signed and must be the event id: the event would
        // otherwise have two keys.
        $other = Fixtures::newId();
        $got = $this->deliver($standard, $body($id), Fixtures::standard($body($id), $now, $other));
        $this->assertSame(400, $got->status);
        $this->assertStringContainsString('webhook-id ' . $other . ' is not the event id', $got->message);

        // A secret of the earlier format cannot verify Standard Webhooks:
        // the standard scheme refuses it at construction (see
        // StandardSecretsTest), and any refuses the Standard Webhooks
        // headers with it, saying why.
        $old = $this->receiver(secrets: [Fixtures::OLD_FORMAT_SECRET]);
        $got = $this->deliver($old, $body($id), Fixtures::standard($body($id), $now));
        $this->assertSame(InvalidSignatureException::REASON_SECRET_NOT_STANDARD, $got->error->reason());
        $oldAny = $this->receiver(secrets: [Fixtures::OLD_FORMAT_SECRET]);
        $this->assertAnswer(200, 'processed', $this->deliver($oldAny, $body($id), Fixtures::signed($body($id), $now, Fixtures::OLD_FORMAT_SECRET)), 'the earlier format still verifies Factuarea-Signature');
    }

    /**
     * During a rotation the receiver knows the new and the old secret; the
     * sender signs with both, then only the new one, and during the overlap a
     * retry may still carry only the old one.
     */
    public function testRotation(): void
    {
        $now = $this->clock->unix();
        foreach (['any', 'standard'] as $scheme) {
            $r = $this->receiver(secrets: [Fixtures::NEW_SECRET, Fixtures::SECRET], scheme: $scheme);
            foreach ([[Fixtures::NEW_SECRET, Fixtures::SECRET], [Fixtures::SECRET], [Fixtures::NEW_SECRET]] as $signers) {
                $body = Fixtures::companyEvent(Fixtures::newId());
                $headers = $scheme === 'standard' ? Fixtures::standard($body, $now, null, ...$signers) : Fixtures::signed($body, $now, ...$signers);
                $this->assertAnswer(200, 'processed', $this->deliver($r, $body, $headers), $scheme . ' signed by ' . count($signers));
            }
        }
    }

    /**
     * What the handler gets: the parsed account envelope, the headers, and
     * the connection whose transaction already holds the id (which no other
     * connection sees yet).
     */
    public function testHandlerSeesEvent(): void
    {
        $id = Fixtures::newId();
        $seen = null;
        $inTx = $outside = null;
        $r = $this->receiver(function (Event $event, \PDO $tx) use (&$seen, &$inTx, &$outside): void {
            $seen = $event;
            $q = 'SELECT COUNT(*) FROM processed_webhook_events WHERE event_id = ?';
            $stmt = $tx->prepare($q);
            $stmt->execute([$event->id]);
            $inTx = (int) $stmt->fetchColumn();
            $stmt = $this->db->prepare($q);
            $stmt->execute([$event->id]);
            $outside = (int) $stmt->fetchColumn();
        });
        $body = Fixtures::accountEvent($id);
        $headers = Fixtures::signed($body, $this->clock->unix()) + [
            'Factuarea-Account-Relationship' => 'managed',
        ];
        $headers['Factuarea-Delivery-Id'] = '01a0e783-abe2-7a3f-b5d8-4e9a6c1b7d23';
        $this->assertAnswer(200, 'processed', $this->deliver($r, $body, $headers));
        $this->assertInstanceOf(Event::class, $seen);
        $this->assertSame($id, $seen->id);
        $this->assertSame('01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a00', $seen->accountId);
        $this->assertSame('managed', $seen->accountRelationship);
        $this->assertSame('01a0e783-abe2-7a3f-b5d8-4e9a6c1b7d23', $seen->headers->deliveryId);
        $this->assertSame('managed', $seen->headers->accountRelationship);
        $this->assertSame($id, $seen->headers->eventId);
        $this->assertSame($id, $seen->headers->idempotencyKey);
        $this->assertSame($body, $seen->raw);
        $this->assertSame(1, $inTx, 'the id, seen in the handler\'s transaction');
        $this->assertSame(0, $outside, 'the id, seen from another connection before the commit');
    }

    /**
     * A handler that fails once and then succeeds produces one effect after
     * the sender's retry. The failed attempt answers 500, says nothing of
     * the handler's error, and leaves nothing behind, not even the id.
     */
    public function testRollbackOnHandlerFailure(): void
    {
        foreach (['exception' => new \RuntimeException('the ledger is locked'), 'error' => new \TypeError('the ledger is locked')] as $mode => $failure) {
            $runs = 0;
            $r = $this->receiver(function (Event $event, \PDO $tx) use (&$runs, $failure): void {
                // The effect is written before the failure, so that the
                // test shows the rollback removing it.
                $this->recordEffect($event, $tx);
                if (++$runs === 1) {
                    throw $failure;
                }
            });
            $id = Fixtures::newId();
            $body = Fixtures::companyEvent($id);
            $got = $this->deliver($r, $body);
            $this->assertAnswer(500, 'internal error', $got, $mode);
            $this->assertStringNotContainsString('ledger', $got->body());
            $this->assertInstanceOf(HandlerException::class, $got->error);
            $this->assertSame($failure, $got->error->getPrevious());
            [$level, , $context] = end($this->log);
            $this->assertSame('error', $level);
            $this->assertSame($id, $context['event_id']);
            $this->assertSame('handler: the ledger is locked', $context['error']);
            $this->assertSame(0, $this->rows('effects', $id), $mode . ': effects after the failure');
            $this->assertSame(0, $this->rows('processed_webhook_events', $id), $mode . ': ids after the failure');

            $this->clock->add(60);
            $this->assertAnswer(200, 'processed', $this->deliver($r, $body), $mode . ': retry');
            $this->clock->add(60);
            $this->assertAnswer(200, 'already processed', $this->deliver($r, $body), $mode . ': repeat');
            $this->assertSame(2, $runs, $mode . ': handler runs');
            $this->assertSame(1, $this->rows('effects', $id), $mode . ': effects');
        }
    }

    /** A commit that fails after every statement succeeded: 500, and nothing recorded. */
    public function testCommitFails(): void
    {
        $this->backend->prepareCommitFailure($this->db);
        $r = $this->receiver(function (Event $event, \PDO $tx): void {
            $this->runs++;
            $this->recordEffect($event, $tx);
            $this->backend->breakCommit($tx);
        });
        $id = Fixtures::newId();
        $got = $this->deliver($r, Fixtures::companyEvent($id));
        $this->assertAnswer(500, 'internal error', $got);
        $this->assertInstanceOf(DatabaseException::class, $got->error);
        $this->assertStringStartsWith('commit: ', $got->error->getMessage());
        $this->assertSame(1, $this->runs);
        $this->assertSame(0, $this->rows('processed_webhook_events', $id));
        $this->assertSame(0, $this->rows('effects', $id));
    }

    /**
     * An error in recording the id that is not a duplicate (a constraint)
     * is a 500, not a repeat: INSERT IGNORE on MySQL would have answered 200
     * "already processed" and dropped the event.
     */
    public function testRecordingErrorIsNotARepeat(): void
    {
        $id = Fixtures::newId();
        $next = Fixtures::newId();
        $this->backend->refuseId($this->db, $id, $next);
        $r = $this->receiver();
        $got = $this->deliver($r, Fixtures::companyEvent($id));
        $this->assertAnswer(500, 'internal error', $got);
        $this->assertInstanceOf(DatabaseException::class, $got->error);
        $this->assertStringStartsWith('record event id: ', $got->error->getMessage());
        $this->assertSame(0, $this->runs);
        $this->assertAnswer(200, 'processed', $this->deliver($r, Fixtures::companyEvent($next)), 'the next event');
    }

    public function testMissingTableIsA500(): void
    {
        $this->db->exec('DROP TABLE processed_webhook_events');
        $got = $this->deliver($this->receiver(), Fixtures::companyEvent(Fixtures::newId()));
        $this->assertSame(500, $got->status);
        $this->assertSame(0, $this->runs);
    }

    /**
     * One event delivered 8 times at once from 8 PHP processes, each copy
     * signed and with its own delivery id, as when a retry overlaps a slow
     * first attempt: all answer 200 and the handler runs once.
     */
    public function testConcurrentDeliveriesOfOneId(): void
    {
        $id = Fixtures::newId();
        $body = Fixtures::companyEvent($id);
        $deliveries = [];
        for ($i = 0; $i < 8; $i++) {
            $deliveries[] = ['body' => $body, 'headers' => Fixtures::signed($body, time())];
        }
        $results = Workers::deliver($this->backend, $deliveries);
        $messages = array_count_values(array_column($results, 'message'));
        $this->assertSame([200], array_values(array_unique(array_column($results, 'status'))), json_encode($results));
        $this->assertSame(1, $messages['processed'] ?? 0, json_encode($results));
        $this->assertSame(7, $messages['already processed'] ?? 0);
        $this->assertSame(1, $this->rows('effects', $id));
        $this->assertSame(1, $this->rows('processed_webhook_events', $id));
    }

    /** Concurrent copies whose handler fails: every one answers 500, nothing is kept. */
    public function testConcurrentDeliveriesThatFail(): void
    {
        $id = Fixtures::newId();
        $body = Fixtures::companyEvent($id);
        $deliveries = [];
        for ($i = 0; $i < 4; $i++) {
            $deliveries[] = ['body' => $body, 'headers' => Fixtures::signed($body, time())];
        }
        $results = Workers::deliver($this->backend, $deliveries, 50, true);
        $this->assertSame([500], array_values(array_unique(array_column($results, 'status'))), json_encode($results));
        $this->assertSame(0, $this->rows('effects', $id));
        $this->assertSame(0, $this->rows('processed_webhook_events', $id));
    }

    public function testPurge(): void
    {
        $r = $this->receiver();
        $ages = ['100 days' => 100 * 86400, '30 days' => 30 * 86400, '8 days' => 8 * 86400, '6 days' => 6 * 86400, '1 hour' => 3600];
        $ids = [];
        foreach ($ages as $name => $age) {
            $this->clock->add(-$age);
            $ids[$name] = Fixtures::newId();
            $this->assertAnswer(200, 'processed', $this->deliver($r, Fixtures::companyEvent($ids[$name])), $name);
            $this->clock->add($age);
        }
        $this->assertSame(1, $r->purge(Receiver::MANUAL_RESEND_RETENTION), '90 days');
        $this->assertSame(2, $r->purge(), '7 days, the default');
        $this->assertSame(0, $r->purge(Receiver::DEFAULT_RETENTION), 'again');
        foreach ($ages as $name => $age) {
            $this->assertSame($age > Receiver::DEFAULT_RETENTION ? 0 : 1, $this->rows('processed_webhook_events', $ids[$name]), $name);
        }
        // A copy of a purged event runs the handler again: the reason for
        // the retention.
        $this->runs = 0;
        $this->assertAnswer(200, 'processed', $this->deliver($r, Fixtures::companyEvent($ids['8 days'])));
        $this->assertSame(1, $this->runs);
        // The static form, by its own clock: two days' retention leaves the
        // 1-hour-old id and the one just recorded.
        $this->assertSame(1, ProcessedEvents::purge($this->db, 2 * 86400, null, $this->clock->now()));
        $this->assertSame(0, $this->rows('processed_webhook_events', $ids['6 days']));
        $this->assertSame(2, $this->rows('processed_webhook_events'));

        $this->expectException(ConfigurationException::class);
        $r->purge(-1);
    }

    /**
     * received_at is written in UTC, with its microseconds, whatever the
     * time zone of PHP (Asia/Kathmandu in the tests), of the clock
     * (Europe/Madrid, in the hour that the end of summer time repeats) and
     * of the database session.
     */
    public function testReceivedAtIsUtc(): void
    {
        $pdo = $this->backend->connect();
        $this->backend->setSessionZone($pdo);
        $r = $this->receiver(null, $pdo);
        $first = Fixtures::newId();
        $this->deliver($r, Fixtures::companyEvent($first));
        // The same wall clock an hour later, after the change.
        $this->clock->add(3600);
        $second = Fixtures::newId();
        $this->deliver($r, Fixtures::companyEvent($second));
        $this->backend->setSessionZone($this->db);
        $stmt = $this->db->prepare('SELECT received_at FROM processed_webhook_events WHERE event_id = ?');
        $got = [];
        foreach ([$first, $second] as $id) {
            $stmt->execute([$id]);
            $got[] = (new \DateTimeImmutable((string) $stmt->fetchColumn(), new \DateTimeZone('UTC')))->format('Y-m-d H:i:s.u');
            // On SQLite an open cursor keeps a read lock that the purge
            // below would wait for.
            $stmt->closeCursor();
        }
        $this->assertSame(['2026-10-25 00:30:00.250000', '2026-10-25 01:30:00.250000'], $got);
        // And purge compares in UTC: the first is 1 h old, the second new.
        $this->assertSame(1, $r->purge(1800));
    }

    public function testCreateTable(): void
    {
        $this->backend->reset($this->db);
        $r = $this->receiver(null, $this->db);
        $r->createTable();
        $r->createTable();
        $this->assertSame(0, $this->rows('processed_webhook_events'));
        $this->backend->reset($this->db);
        // From several processes at once, as several workers of a server
        // taking their first requests.
        Workers::createTables($this->backend, 6);
        $this->assertSame(0, $this->rows('processed_webhook_events'));
        $this->db->exec('CREATE TABLE effects (event_id VARCHAR(64) NOT NULL)');
        $this->assertAnswer(200, 'processed', $this->deliver($this->receiver(), Fixtures::companyEvent(Fixtures::newId())));
    }

    public function testConnectionMustThrow(): void
    {
        $pdo = $this->backend->connect([\PDO::ATTR_ERRMODE => \PDO::ERRMODE_SILENT]);
        $this->expectException(ConfigurationException::class);
        $this->expectExceptionMessage('PDO::ERRMODE_EXCEPTION');
        $this->receiver(null, $pdo);
    }

    public function testConnectionAlreadyInATransaction(): void
    {
        $pdo = $this->backend->connect();
        $r = $this->receiver(null, $pdo);
        $pdo->beginTransaction();
        $got = $this->deliver($r, Fixtures::companyEvent(Fixtures::newId()));
        $this->assertSame(500, $got->status);
        $this->assertInstanceOf(ConfigurationException::class, $got->error);
        $this->assertStringContainsString('already in a transaction', $got->error->getMessage());
        $pdo->rollBack();
        $this->assertSame(0, $this->runs);
    }

    public function testConfiguration(): void
    {
        $cases = [
            'no secrets' => ['secrets' => []],
            'an empty secret' => ['secrets' => [Fixtures::SECRET, '']],
            'no body' => ['maxBodyBytes' => 0],
            'unknown scheme' => ['scheme' => 'svix'],
        ];
        foreach ($cases as $name => $options) {
            try {
                $this->receiver(null, null, ...$options);
                $this->fail($name . ': accepted');
            } catch (ConfigurationException $e) {
                $this->assertNotSame('', $e->getMessage());
            }
        }
    }

    /**
     * A handler that calls exit() or dies of a fatal error never returns to
     * the kit: a shutdown function rolls back and the answer is a 500, not
     * PHP's default 200.
     */
    public function testExitInHandler(): void
    {
        foreach (['exit', 'fatal'] as $how) {
            $server = Support\Server::start(__DIR__ . '/Support/exit-router.php', [
                'KIT_DSN' => json_encode($this->backend->dsn()),
                'KIT_SECRET' => Fixtures::SECRET,
                'KIT_HOW' => $how,
            ], 1);
            try {
                $id = Fixtures::newId();
                $body = Fixtures::companyEvent($id);
                $got = Support\Http::request($server->port, 'POST', '/', Fixtures::signed($body, time()), $body);
                $this->assertSame(500, $got['status'], $how . ': ' . $got['body']);
                $this->assertSame(0, $this->rows('effects', $id), $how);
                $this->assertSame(0, $this->rows('processed_webhook_events', $id), $how);
            } finally {
                $server->stop();
            }
        }
    }

    /**
     * The example receiver of the contract, through php -S with 4 workers,
     * from empty tables: both envelopes and payload versions, a repeat, the
     * refusals, a failing handler, a rotation, and one event delivered 10
     * times at once.
     */
    public function testExampleReceiver(): void
    {
        $this->backend->reset($this->db);
        $server = Support\Server::start(__DIR__ . '/../example/index.php', [
            'WEBHOOK_SECRETS' => Fixtures::NEW_SECRET . ',' . Fixtures::SECRET,
            'DATABASE_URL' => $this->backend->url(),
        ]);
        try {
            $post = fn (string $body, ?array $headers = null): array => Support\Http::request($server->port, 'POST', '/webhooks', $headers ?? Fixtures::signed($body, time(), Fixtures::NEW_SECRET, Fixtures::SECRET), $body);

            // The first requests arrive at once, on tables that do not exist yet.
            $id = Fixtures::newId();
            $body = Fixtures::companyEvent($id);
            $copies = [];
            for ($i = 0; $i < 10; $i++) {
                $copies[] = ['POST', '/webhooks', Fixtures::signed($body, time(), Fixtures::NEW_SECRET, Fixtures::SECRET), $body];
            }
            $answers = Support\Http::concurrent($server->port, $copies);
            $this->assertSame(array_fill(0, 10, 200), array_column($answers, 'status'), json_encode($answers) . $server->log());
            $this->assertSame(['already processed' => 9, 'processed' => 1], self::tally(array_column($answers, 'body')));
            $this->assertSame([[$id, 'invoice.sent', '2026-09-23', null, '01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42']], $this->effects($id));
            $this->assertSame('text/plain; charset=utf-8', $answers[0]['headers']['content-type']);

            // The account envelope of the older version, signed with the old secret only.
            $id = Fixtures::newId();
            $body = Fixtures::accountEvent($id);
            $got = $post($body, Fixtures::signed($body, time(), Fixtures::SECRET));
            $this->assertSame([200, "processed\n"], [$got['status'], $got['body']]);
            $this->assertSame([[$id, 'invoice.sent', '2025-06-01', 'managed', '01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a43']], $this->effects($id));
            $got = $post($body);
            $this->assertSame([200, "already processed\n"], [$got['status'], $got['body']]);

            // Standard Webhooks headers, with the new secret.
            $id = Fixtures::newId();
            $body = Fixtures::companyEvent($id);
            $got = $post($body, Fixtures::standard($body, time(), null, Fixtures::NEW_SECRET));
            $this->assertSame(200, $got['status'], $got['body']);

            // A handler that writes its row and fails: both rolled back.
            $id = Fixtures::newId();
            $body = Fixtures::companyEvent($id, ['fail' => true]);
            $got = $post($body);
            $this->assertSame([500, "internal error\n"], [$got['status'], $got['body']]);
            $this->assertSame([], $this->effects($id));
            $this->assertSame(0, $this->rows('processed_webhook_events', $id));
            $this->assertStringContainsString('data.object.fail is true', $server->log(), 'the handler\'s error is logged on stderr');

            $body = Fixtures::companyEvent(Fixtures::newId());
            $refusals = [
                'bad signature' => [$post($body, Fixtures::signed($body, time(), 'whsec_other')), 401],
                'stale' => [$post($body, Fixtures::signed($body, time() - 3600)), 401],
                'no signature' => [$post($body, []), 401],
                'not JSON' => [$post('{"id":'), 400],
                'GET' => [Support\Http::request($server->port, 'GET', '/webhooks'), 405],
                'too large' => [Support\Http::request($server->port, 'POST', '/webhooks', Fixtures::signed($body, time()), str_repeat(' ', Receiver::DEFAULT_MAX_BODY_BYTES + 1)), 413],
                'another path' => [Support\Http::request($server->port, 'POST', '/', Fixtures::signed($body, time()), $body), 404],
            ];
            foreach ($refusals as $name => [$got, $status]) {
                $this->assertSame($status, $got['status'], $name . ': ' . $got['body']);
            }
            $this->assertSame('POST', $refusals['GET'][0]['headers']['allow']);
            $this->assertSame(3, $this->rows('webhook_effects'));
        } finally {
            $server->stop();
        }

        // WEBHOOK_SCHEME=standard refuses Factuarea-Signature alone.
        $server = Support\Server::start(__DIR__ . '/../example/index.php', [
            'WEBHOOK_SECRETS' => Fixtures::SECRET,
            'WEBHOOK_SCHEME' => 'standard',
            'DATABASE_URL' => $this->backend->url(),
        ], 1);
        try {
            $body = Fixtures::companyEvent(Fixtures::newId());
            $got = Support\Http::request($server->port, 'POST', '/webhooks', Fixtures::signed($body, time()), $body);
            $this->assertSame(401, $got['status'], $got['body']);
            $got = Support\Http::request($server->port, 'POST', '/webhooks', Fixtures::standard($body, time()), $body);
            $this->assertSame(200, $got['status'], $got['body']);
        } finally {
            $server->stop();
        }
    }

    /** @return list<list<string|null>> */
    private function effects(string $id): array
    {
        $stmt = $this->db->prepare('SELECT event_id, type, api_version, account_relationship, object_id FROM webhook_effects WHERE event_id = ?');
        $stmt->execute([$id]);
        return $stmt->fetchAll(\PDO::FETCH_NUM);
    }

    /** @param list<string> $bodies */
    private static function tally(array $bodies): array
    {
        $counts = array_count_values(array_map('trim', $bodies));
        ksort($counts);
        return $counts;
    }
}
