<?php

declare(strict_types=1);

namespace Factuarea\Webhooks;

use Factuarea\Webhooks\Exception\ConfigurationException;
use Factuarea\Webhooks\Exception\DatabaseException;

/**
 * The table processed_webhook_events, which records the ids of the events
 * already processed:
 *
 *     CREATE TABLE processed_webhook_events (
 *       event_id    CHAR(36)  NOT NULL PRIMARY KEY,
 *       received_at TIMESTAMP NOT NULL          -- DATETIME(6) on MySQL
 *     );
 *     CREATE INDEX processed_webhook_events_received_at ON processed_webhook_events (received_at);
 *
 * Each consuming system keeps its own: the id belongs to the event, not to
 * the receiver.
 */
final class ProcessedEvents
{
    /**
     * How long to keep the ids when nobody resends deliveries by hand, in
     * seconds (7 days). Automatic retries of one delivery span at most 5 days
     * 2 hours (8 attempts, waits of 1 min to 3 days adding up to 4 days 14
     * hours, each varied by up to 10 %), so 7 days covers every one of them.
     */
    public const DEFAULT_RETENTION = 7 * 86400;

    /**
     * How long to keep the ids when you or your team resend deliveries by
     * hand, in seconds (90 days): a resend may send an event up to 90 days
     * old, with the same id. An id is 36 characters, so 90 days of them is
     * cheap.
     */
    public const MANUAL_RESEND_RETENTION = 90 * 86400;

    private function __construct()
    {
    }

    /**
     * Creates the table and its index if they do not exist. Safe to run at
     * every deploy and from several processes at once: on PostgreSQL, where
     * two concurrent CREATE TABLE IF NOT EXISTS can collide, it holds an
     * advisory lock.
     *
     * @throws DatabaseException
     */
    public static function createTable(\PDO $pdo, ?Dialect $dialect = null): void
    {
        self::requireExceptions($pdo);
        $dialect ??= Dialect::detect($pdo);
        $own = $dialect === Dialect::Postgres && !$pdo->inTransaction();
        try {
            if ($own) {
                $pdo->beginTransaction();
                $pdo->query('SELECT pg_advisory_xact_lock(7203785161204957489)');
            }
            foreach ($dialect->createStatements() as $sql) {
                $pdo->exec($sql);
            }
            if ($own) {
                $pdo->commit();
            }
        } catch (\PDOException $e) {
            if ($own && $pdo->inTransaction()) {
                try {
                    $pdo->rollBack();
                } catch (\PDOException) {
                    // The connection is gone; the server ends the transaction.
                }
            }
            throw new DatabaseException('create table', $e);
        }
    }

    /**
     * Deletes the ids received more than $olderThan seconds before $now
     * (default: the current time) and returns how many it deleted. Run it on
     * a schedule with DEFAULT_RETENTION, or MANUAL_RESEND_RETENTION if you
     * resend deliveries by hand. An id purged too early lets a late copy of
     * its event run the handler again.
     *
     * @throws ConfigurationException if $olderThan is negative
     * @throws DatabaseException
     */
    public static function purge(\PDO $pdo, int $olderThan = self::DEFAULT_RETENTION, ?Dialect $dialect = null, ?\DateTimeImmutable $now = null): int
    {
        if ($olderThan < 0) {
            throw new ConfigurationException(sprintf('purge: olderThan must not be negative, got %d seconds', $olderThan));
        }
        self::requireExceptions($pdo);
        $dialect ??= Dialect::detect($pdo);
        $before = ($now ?? new \DateTimeImmutable())->modify(sprintf('-%d seconds', $olderThan));
        try {
            $stmt = $pdo->prepare($dialect->purgeSql());
            $stmt->execute([$dialect->timeArg($before)]);
            return $stmt->rowCount();
        } catch (\PDOException $e) {
            throw new DatabaseException('purge', $e);
        }
    }

    /**
     * Inserts an event id inside the open transaction and reports whether it
     * is new: false means that a copy of the event was processed before (or
     * by a transaction that this one waited for, and which committed).
     *
     * @throws DatabaseException
     */
    public static function record(\PDO $pdo, Dialect $dialect, string $eventId, \DateTimeImmutable $now): bool
    {
        try {
            $stmt = $pdo->prepare($dialect->insertSql());
            $stmt->execute([$eventId, $dialect->timeArg($now)]);
            return $stmt->rowCount() === 1;
        } catch (\PDOException $e) {
            if ($dialect->isDuplicate($e)) {
                return false;
            }
            throw new DatabaseException('record event id', $e);
        }
    }

    /**
     * The kit needs PDO to throw: in the silent or warning mode a failed
     * statement would go unnoticed, and the transaction would commit without
     * it.
     *
     * @throws ConfigurationException
     */
    public static function requireExceptions(\PDO $pdo): void
    {
        if ($pdo->getAttribute(\PDO::ATTR_ERRMODE) !== \PDO::ERRMODE_EXCEPTION) {
            throw new ConfigurationException('the PDO connection must be in PDO::ERRMODE_EXCEPTION (the default since PHP 8.0): set PDO::ATTR_ERRMODE');
        }
    }
}
