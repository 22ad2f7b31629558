<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Tests\Support;

/** A database of its own on the MariaDB (or MySQL) at 127.0.0.1:3306 (root, no password). */
final class MysqlBackend extends Backend
{
    private const SERVER = 'mysql:host=127.0.0.1;port=3306;charset=utf8mb4';

    private function __construct(private readonly string $database)
    {
    }

    public static function create(): static
    {
        self::requireDriver('mysql', 'php-mysql');
        $name = self::randomName();
        try {
            $admin = new \PDO(self::SERVER, 'root', '');
        } catch (\PDOException $e) {
            throw new \RuntimeException(
                'MariaDB is not reachable at 127.0.0.1:3306 as root (start it with: start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd): ' . $e->getMessage(),
                0,
                $e,
            );
        }
        $admin->exec('CREATE DATABASE ' . $name);
        return new self($name);
    }

    public function name(): string
    {
        return 'mysql';
    }

    public function dsn(): array
    {
        return [self::SERVER . ';dbname=' . $this->database, 'root', ''];
    }

    public function url(): string
    {
        return 'mysql://root@127.0.0.1:3306/' . $this->database;
    }

    public function drop(): void
    {
        $admin = new \PDO(self::SERVER, 'root', '');
        $admin->exec('DROP DATABASE IF EXISTS ' . $this->database);
    }

    public function prepareCommitFailure(\PDO $db): void
    {
        // MySQL has no deferred constraints.
    }

    /**
     * Kills the connection from another one: every statement of the
     * transaction succeeded, and its COMMIT fails.
     */
    public function breakCommit(\PDO $tx): void
    {
        $id = (int) $tx->query('SELECT CONNECTION_ID()')->fetchColumn();
        $this->connect()->exec('KILL ' . $id);
    }

    public function setSessionZone(\PDO $db): void
    {
        $db->exec("SET time_zone = '+05:45'");
    }

    public function refuseId(\PDO $db, string $id, string $accepted): void
    {
        // A foreign key: INSERT IGNORE turns its failure into a warning and a
        // row count of 0, which reads as a repeat, and the event is dropped.
        // (A CHECK failure, MariaDB reports even under IGNORE.)
        $db->exec('CREATE TABLE allowed_ids (id CHAR(36) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY) ENGINE=InnoDB');
        $db->prepare('INSERT INTO allowed_ids (id) VALUES (?)')->execute([$accepted]);
        $db->exec('ALTER TABLE processed_webhook_events ADD CONSTRAINT refused FOREIGN KEY (event_id) REFERENCES allowed_ids (id)');
    }
}
