<?php

// The example receiver of the PHP kit: a plain front controller, the way a
// customer without a framework would write one. Run it as
//
//     PORT=8000 WEBHOOK_SECRETS=whsec_… DATABASE_URL=sqlite:/var/lib/app/app.db \
//         php -S 127.0.0.1:$PORT kits/php/example/index.php
//
// Environment: WEBHOOK_SECRETS (comma-separated, new first during a
// rotation), WEBHOOK_SCHEME (any, factuarea or standard; default any) and
// DATABASE_URL (sqlite:<absolute path>, postgres://user@host:port/db or
// mysql://user@host:port/db). It answers POST /webhooks.
//
// php -S runs this file afresh for every request and has no hook at start,
// so nothing here runs before the first request: the "PHP … Development
// Server (http://127.0.0.1:PORT) started" line that php -S writes to stderr
// is the only sign that it listens. For the same reason the tables are
// created (if missing) at every request; a real application does that once,
// when it deploys.

declare(strict_types=1);

// With Composer: require __DIR__ . '/vendor/autoload.php';
require __DIR__ . '/../autoload.php';

use Factuarea\Webhooks\Dialect;
use Factuarea\Webhooks\Event;
use Factuarea\Webhooks\Receiver;

if (parse_url((string) ($_SERVER['REQUEST_URI'] ?? '/'), PHP_URL_PATH) !== '/webhooks') {
    http_response_code(404);
    header('Content-Type: text/plain; charset=utf-8');
    echo "not found\n";
    return;
}

try {
    $db = connect((string) getenv('DATABASE_URL'));
    $receiver = new Receiver(
        pdo: $db,
        secrets: array_values(array_filter(array_map('trim', explode(',', (string) getenv('WEBHOOK_SECRETS'))))),
        scheme: getenv('WEBHOOK_SCHEME') ?: 'any',
        handler: 'recordEffect',
    );
    createTables($db, $receiver);
} catch (Throwable $e) {
    error_log('webhook receiver: ' . $e->getMessage());
    http_response_code(500);
    header('Content-Type: text/plain; charset=utf-8');
    echo "internal error\n";
    return;
}

$receiver->serve();

/**
 * The handler: one row per event, written through the kit's transaction, so
 * that the row and the record of the event id commit together. An event
 * whose data.object.fail is true writes its row and then fails: the kit
 * rolls both back and answers 500.
 */
function recordEffect(Event $event, PDO $tx): void
{
    $object = $event->object() ?? [];
    $objectId = $object['id'] ?? null;
    $tx->prepare('INSERT INTO webhook_effects (event_id, type, api_version, account_relationship, object_id) VALUES (?, ?, ?, ?, ?)')
        ->execute([
            $event->id,
            $event->type,
            $event->apiVersion,
            $event->accountRelationship,
            is_scalar($objectId) ? (string) $objectId : null,
        ]);
    if (($object['fail'] ?? null) === true) {
        throw new RuntimeException('data.object.fail is true');
    }
}

function createTables(PDO $db, Receiver $receiver): void
{
    $receiver->createTable();
    // Several php -S workers can take their first requests at once, and two
    // CREATE TABLE IF NOT EXISTS can collide on PostgreSQL: hold a lock
    // (the kit's createTable does the same).
    $postgres = $receiver->dialect() === Dialect::Postgres;
    if ($postgres) {
        $db->beginTransaction();
        $db->query('SELECT pg_advisory_xact_lock(7203785161204957490)');
    }
    $db->exec('CREATE TABLE IF NOT EXISTS webhook_effects (
        event_id             VARCHAR(64)  NOT NULL,
        type                 VARCHAR(200) NOT NULL,
        api_version          VARCHAR(20)  NOT NULL,
        account_relationship VARCHAR(10),
        object_id            VARCHAR(64)
    )');
    if ($postgres) {
        $db->commit();
    }
}

/** A PDO connection (in exception mode, PHP's default) for DATABASE_URL. */
function connect(string $url): PDO
{
    if (str_starts_with($url, 'sqlite:')) {
        $path = substr($url, strlen('sqlite:'));
        if (!str_starts_with($path, '/')) {
            throw new InvalidArgumentException('DATABASE_URL: sqlite: needs an absolute path');
        }
        // PDO's SQLite busy timeout is 60 s unless PDO::ATTR_TIMEOUT says
        // otherwise: concurrent deliveries wait for each other's lock.
        return new PDO('sqlite:' . $path);
    }
    $parts = parse_url($url);
    $scheme = $parts['scheme'] ?? '';
    $driver = match ($scheme) {
        'postgres', 'postgresql' => 'pgsql',
        'mysql' => 'mysql',
        default => throw new InvalidArgumentException(sprintf('DATABASE_URL: unknown scheme "%s" (sqlite:, postgres:// or mysql://)', $scheme)),
    };
    $dsn = sprintf('%s:host=%s;port=%d;dbname=%s', $driver, $parts['host'] ?? '127.0.0.1', $parts['port'] ?? ($driver === 'pgsql' ? 5432 : 3306), rawurldecode(ltrim($parts['path'] ?? '', '/')));
    parse_str($parts['query'] ?? '', $query);
    if ($driver === 'pgsql' && isset($query['sslmode'])) {
        $dsn .= ';sslmode=' . $query['sslmode'];
    }
    if ($driver === 'mysql') {
        $dsn .= ';charset=utf8mb4';
    }
    return new PDO($dsn, isset($parts['user']) ? rawurldecode($parts['user']) : null, isset($parts['pass']) ? rawurldecode($parts['pass']) : null);
}
