<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Tests\Support;

/**
 * A database of its own for one test run, on one of the three servers the
 * kit supports. Creating it fails (never skips) when the server or the PDO
 * driver is missing.
 */
abstract class Backend
{
    /** Creates a fresh, empty database. */
    abstract public static function create(): static;

    abstract public function name(): string;

    /** The connection parameters, for worker processes: [dsn, user, password]. */
    abstract public function dsn(): array;

    /** The database as the example receiver's DATABASE_URL. */
    abstract public function url(): string;

    /** Drops the database. */
    abstract public function drop(): void;

    /** Run before a test whose handler calls breakCommit(). */
    public function prepareCommitFailure(\PDO $db): void
    {
        $db->exec('CREATE TABLE parents (id INTEGER PRIMARY KEY)');
        $db->exec('CREATE TABLE children (parent_id INTEGER REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)');
    }

    /**
     * Makes the commit of the transaction open on $tx fail, after every
     * statement in it succeeded: by default with a foreign key that is
     * checked only at commit.
     */
    public function breakCommit(\PDO $tx): void
    {
        $tx->exec('INSERT INTO children (parent_id) VALUES (42)');
    }

    /**
     * Adds a constraint other than the primary key that refuses to record
     * $id (and still accepts $accepted), so that recording it fails with an
     * error that is not a duplicate.
     */
    abstract public function refuseId(\PDO $db, string $id, string $accepted): void;

    /** A new connection, in PDO's default (exception) error mode. */
    public function connect(array $options = []): \PDO
    {
        [$dsn, $user, $password] = $this->dsn();
        return new \PDO($dsn, $user, $password, $options);
    }

    /**
     * Sets the session's time zone to one that is not UTC (nor a whole
     * number of hours away), where the database has one.
     */
    public function setSessionZone(\PDO $db): void
    {
    }

    /** Drops every table the tests make. */
    public function reset(\PDO $db): void
    {
        foreach (['children', 'parents', 'effects', 'webhook_effects', 'processed_webhook_events', 'allowed_ids'] as $table) {
            $db->exec('DROP TABLE IF EXISTS ' . $table);
        }
    }

    public static function randomName(): string
    {
        return 'phpkit_' . bin2hex(random_bytes(6));
    }

    /** @param class-string $what */
    protected static function requireDriver(string $driver, string $what): void
    {
        if (!in_array($driver, \PDO::getAvailableDrivers(), true)) {
            throw new \RuntimeException(sprintf(
                'the PDO driver %s is missing: install %s (apt-get install %s)',
                $driver,
                $what,
                $what,
            ));
        }
    }
}
