<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Tests\Support;

/** A database of its own on the PostgreSQL at 127.0.0.1:5432 (user postgres). */
final class PostgresBackend extends Backend
{
    private const SERVER = 'pgsql:host=127.0.0.1;port=5432';

    private function __construct(private readonly string $database)
    {
    }

    public static function create(): static
    {
        self::requireDriver('pgsql', 'php-pgsql');
        $name = self::randomName();
        try {
            $admin = new \PDO(self::SERVER . ';dbname=postgres', 'postgres', null);
        } catch (\PDOException $e) {
            throw new \RuntimeException('PostgreSQL is not reachable at 127.0.0.1:5432 as postgres: ' . $e->getMessage(), 0, $e);
        }
        $admin->exec('CREATE DATABASE ' . $name);
        return new self($name);
    }

    public function name(): string
    {
        return 'postgres';
    }

    public function dsn(): array
    {
        return [self::SERVER . ';dbname=' . $this->database, 'postgres', null];
    }

    public function url(): string
    {
        return 'postgres://postgres@127.0.0.1:5432/' . $this->database . '?sslmode=disable';
    }

    public function drop(): void
    {
        $admin = new \PDO(self::SERVER . ';dbname=postgres', 'postgres', null);
        $admin->exec('DROP DATABASE IF EXISTS ' . $this->database . ' WITH (FORCE)');
    }

    public function setSessionZone(\PDO $db): void
    {
        $db->exec("SET TIME ZONE 'Asia/Kathmandu'");
    }

    public function refuseId(\PDO $db, string $id, string $accepted): void
    {
        $db->exec(sprintf('ALTER TABLE processed_webhook_events ADD CONSTRAINT refused CHECK (event_id <> %s)', $db->quote($id)));
    }
}
