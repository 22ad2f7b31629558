<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Exception;

/**
 * Your handler threw; the transaction was rolled back (answered 500, so
 * that the sender retries). getPrevious() is what the handler threw.
 */
final class HandlerException extends WebhookException
{
    public function __construct(\Throwable $previous)
    {
        parent::__construct('handler: ' . $previous->getMessage(), 0, $previous);
    }
}
