<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Tests;

use Factuarea\Webhooks\Tests\Support\Backend;
use Factuarea\Webhooks\Tests\Support\Fixtures;
use Factuarea\Webhooks\Tests\Support\MysqlBackend;

final class MysqlTest extends ReceiverSuite
{
    protected static function createBackend(): Backend
    {
        return MysqlBackend::create();
    }

    /**
     * With PDO::MYSQL_ATTR_FOUND_ROWS, the row count of INSERT … ON
     * DUPLICATE KEY UPDATE is 1 for a repeat as for a new row, and the
     * option cannot be read back from the connection: the kit must not rely
     * on that count.
     */
    public function testFoundRowsConnection(): void
    {
        $r = $this->receiver(null, $this->backend->connect([\PDO::MYSQL_ATTR_FOUND_ROWS => true]));
        $id = Fixtures::newId();
        $this->assertAnswer(200, 'processed', $this->deliver($r, Fixtures::companyEvent($id)));
        $this->assertAnswer(200, 'already processed', $this->deliver($r, Fixtures::companyEvent($id)));
        $this->assertSame(1, $this->runs);
    }

    /** Without emulated prepares, the duplicate-key error is read the same way. */
    public function testNativePrepares(): void
    {
        $r = $this->receiver(null, $this->backend->connect([\PDO::ATTR_EMULATE_PREPARES => false]));
        $id = Fixtures::newId();
        $this->assertAnswer(200, 'processed', $this->deliver($r, Fixtures::companyEvent($id)));
        $this->assertAnswer(200, 'already processed', $this->deliver($r, Fixtures::companyEvent($id)));
        $this->assertSame(1, $this->runs);
    }

    public function testTableDefinition(): void
    {
        $columns = $this->db->query("SELECT COLUMN_NAME, COLUMN_TYPE, CHARACTER_SET_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'processed_webhook_events' ORDER BY ORDINAL_POSITION")->fetchAll(\PDO::FETCH_NUM);
        $this->assertSame([['event_id', 'char(36)', 'ascii'], ['received_at', 'datetime(6)', null]], $columns);
        $engine = $this->db->query("SELECT ENGINE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'processed_webhook_events'")->fetchColumn();
        $this->assertSame('InnoDB', $engine);
    }
}
