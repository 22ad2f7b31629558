<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Exception;

/**
 * The SQL dialect could not be told from the PDO driver; pass the dialect
 * option (a Dialect case).
 */
final class UnknownDialectException extends WebhookException
{
}
