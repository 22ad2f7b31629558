<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Tests;

use Factuarea\Webhooks\Tests\Support\Backend;
use Factuarea\Webhooks\Tests\Support\Fixtures;
use Factuarea\Webhooks\Tests\Support\SqliteBackend;
use Factuarea\Webhooks\Tests\Support\Workers;

/** On a SQLite file, in its default rollback journal (and in WAL below). */
final class SqliteTest extends ReceiverSuite
{
    protected static function createBackend(): Backend
    {
        return SqliteBackend::create();
    }

    public function testConcurrentDeliveriesInWalMode(): void
    {
        $this->db->query('PRAGMA journal_mode = WAL')->fetchAll();
        try {
            $id = Fixtures::newId();
            $body = Fixtures::companyEvent($id);
            $deliveries = [];
            for ($i = 0; $i < 8; $i++) {
                $deliveries[] = ['body' => $body, 'headers' => Fixtures::signed($body, time())];
            }
            $results = Workers::deliver($this->backend, $deliveries);
            $this->assertSame([200], array_values(array_unique(array_column($results, 'status'))), json_encode($results));
            $this->assertSame(1, array_count_values(array_column($results, 'message'))['processed'] ?? 0);
            $this->assertSame(1, $this->rows('effects', $id));
        } finally {
            $this->db->query('PRAGMA journal_mode = DELETE')->fetchAll();
        }
    }
}
