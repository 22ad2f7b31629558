<?php

declare(strict_types=1);

namespace Factuarea\Webhooks;

use Factuarea\Webhooks\Exception\UnknownDialectException;

/**
 * The SQL dialect of the database that holds processed_webhook_events,
 * named by PDO's driver name. The differences between databases are all
 * here.
 */
enum Dialect: string
{
    /** PostgreSQL: INSERT … ON CONFLICT (event_id) DO NOTHING. */
    case Postgres = 'pgsql';
    /** SQLite 3.24 or later: BEGIN IMMEDIATE, then INSERT … ON CONFLICT (event_id) DO NOTHING. */
    case SQLite = 'sqlite';
    /** MySQL and MariaDB (InnoDB): a plain INSERT whose duplicate-key error, and only that one, means a repeat. */
    case MySQL = 'mysql';

    /**
     * The dialect of a connection, from PDO::ATTR_DRIVER_NAME.
     *
     * @throws UnknownDialectException for a driver other than pgsql, sqlite and mysql
     */
    public static function detect(\PDO $pdo): self
    {
        $driver = (string) $pdo->getAttribute(\PDO::ATTR_DRIVER_NAME);
        return self::tryFrom($driver) ?? throw new UnknownDialectException(sprintf(
            'the PDO driver "%s" is not pgsql, sqlite or mysql; pass the dialect option if the database is one of those',
            $driver,
        ));
    }

    /**
     * The statements that create the table and its index if they do not
     * exist.
     *
     * MySQL keeps received_at as DATETIME(6): TIMESTAMP would convert what
     * it stores from the session's time zone (shifting the UTC times the kit
     * writes, and folding or refusing the hour a daylight-saving change skips
     * or repeats), stops in 2038, and rounds away the microseconds. The id is
     * ASCII and compared byte for byte, as on the other databases; InnoDB is
     * named because a MyISAM table would ignore the rollback.
     *
     * @return list<string>
     */
    public function createStatements(): array
    {
        if ($this === self::MySQL) {
            return [<<<'SQL'
                CREATE TABLE IF NOT EXISTS processed_webhook_events (
                  event_id    CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
                  received_at DATETIME(6) NOT NULL,
                  INDEX processed_webhook_events_received_at (received_at)
                ) ENGINE=InnoDB
                SQL];
        }
        return [
            <<<'SQL'
                CREATE TABLE IF NOT EXISTS processed_webhook_events (
                  event_id    CHAR(36)  NOT NULL PRIMARY KEY,
                  received_at TIMESTAMP NOT NULL
                )
                SQL,
            'CREATE INDEX IF NOT EXISTS processed_webhook_events_received_at ON processed_webhook_events (received_at)',
        ];
    }

    /**
     * The statement that records an event id. On PostgreSQL and SQLite its
     * row count tells a new event (1) from a repeat (0). MySQL's INSERT
     * IGNORE would also swallow errors other than the duplicate key, and
     * the row count of ON DUPLICATE KEY UPDATE is 1 for a repeat too when the
     * connection was opened with PDO::MYSQL_ATTR_FOUND_ROWS (which cannot be
     * read back): so MySQL inserts plainly and isDuplicate() reads the error.
     */
    public function insertSql(): string
    {
        if ($this === self::MySQL) {
            return 'INSERT INTO processed_webhook_events (event_id, received_at) VALUES (?, ?)';
        }
        return 'INSERT INTO processed_webhook_events (event_id, received_at) VALUES (?, ?) ON CONFLICT (event_id) DO NOTHING';
    }

    public function purgeSql(): string
    {
        return 'DELETE FROM processed_webhook_events WHERE received_at < ?';
    }

    /**
     * Whether $e is MySQL's duplicate-key error (1062) and nothing else. On
     * InnoDB it undoes only the statement, not the transaction.
     */
    public function isDuplicate(\PDOException $e): bool
    {
        return $this === self::MySQL && (int) ($e->errorInfo[1] ?? 0) === 1062;
    }

    /**
     * A moment as the argument that stores or compares received_at: UTC,
     * microseconds, in one fixed-width layout, so that SQLite (which keeps it
     * as text) orders the values by comparing them as text. PostgreSQL also
     * gets "+00:00": a TIMESTAMP column ignores it, and a TIMESTAMPTZ one made
     * by hand then stores the right moment whatever the session's time zone.
     * MySQL gets none (MariaDB refuses an offset), and the kit's DATETIME(6)
     * keeps the UTC wall clock as it is.
     */
    public function timeArg(\DateTimeImmutable $t): string
    {
        $utc = $t->setTimezone(new \DateTimeZone('UTC'));
        return $utc->format('Y-m-d H:i:s.u') . ($this === self::Postgres ? '+00:00' : '');
    }

    /**
     * Begins the transaction of one delivery. SQLite's must take the write
     * lock at once: a deferred BEGIN lets two connections start and then
     * decide, on their first write, which one waits. PDO has no option for
     * that, so the kit says BEGIN IMMEDIATE itself; the connection's busy
     * timeout (PDO::ATTR_TIMEOUT, 60 s unless set) is how long it waits for
     * another delivery's transaction.
     */
    public function begin(\PDO $pdo): void
    {
        if ($this === self::SQLite) {
            $pdo->exec('BEGIN IMMEDIATE');
            return;
        }
        $pdo->beginTransaction();
    }

    public function commit(\PDO $pdo): void
    {
        if ($this === self::SQLite) {
            $pdo->exec('COMMIT');
            return;
        }
        $pdo->commit();
    }

    /**
     * Rolls back what begin() started, if it is still open: a failed COMMIT
     * leaves SQLite's transaction open (a deferred foreign key, a busy
     * database) and ends PostgreSQL's.
     */
    public function rollback(\PDO $pdo): void
    {
        if ($this === self::SQLite) {
            $pdo->exec('ROLLBACK');
            return;
        }
        if ($pdo->inTransaction()) {
            $pdo->rollBack();
        }
    }
}
