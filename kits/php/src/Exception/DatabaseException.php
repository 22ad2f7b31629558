<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Exception;

/**
 * A database step of the kit failed: beginning the transaction, recording
 * the event id, committing, creating the table or purging (answered 500
 * during a delivery). getPrevious() is the PDOException, when there is one.
 */
final class DatabaseException extends WebhookException
{
    public function __construct(string $step, \Throwable $previous)
    {
        parent::__construct($step . ': ' . $previous->getMessage(), 0, $previous);
    }
}
