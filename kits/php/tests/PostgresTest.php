<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Tests;

use Factuarea\Webhooks\Tests\Support\Backend;
use Factuarea\Webhooks\Tests\Support\PostgresBackend;

final class PostgresTest extends ReceiverSuite
{
    protected static function createBackend(): Backend
    {
        return PostgresBackend::create();
    }
}
