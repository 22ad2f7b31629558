<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Tests\Support;

/** A temporary SQLite file. */
final class SqliteBackend extends Backend
{
    private function __construct(private readonly string $path)
    {
    }

    public static function create(): static
    {
        self::requireDriver('sqlite', 'php-sqlite3');
        $path = sys_get_temp_dir() . '/' . self::randomName() . '.db';
        return new self($path);
    }

    public function name(): string
    {
        return 'sqlite';
    }

    public function dsn(): array
    {
        return ['sqlite:' . $this->path, null, null];
    }

    public function url(): string
    {
        return 'sqlite:' . $this->path;
    }

    public function connect(array $options = []): \PDO
    {
        $db = parent::connect($options);
        // Off by default in SQLite; the commit-failure test needs them.
        $db->exec('PRAGMA foreign_keys = ON');
        return $db;
    }

    public function drop(): void
    {
        foreach (['', '-wal', '-shm', '-journal'] as $suffix) {
            if (is_file($this->path . $suffix)) {
                unlink($this->path . $suffix);
            }
        }
    }

    public function refuseId(\PDO $db, string $id, string $accepted): void
    {
        // SQLite cannot add a constraint to a table: make it again.
        $db->exec('DROP TABLE processed_webhook_events');
        $db->exec(sprintf(
            'CREATE TABLE processed_webhook_events (event_id CHAR(36) NOT NULL PRIMARY KEY CHECK (event_id <> %s), received_at TIMESTAMP NOT NULL)',
            $db->quote($id),
        ));
    }
}
