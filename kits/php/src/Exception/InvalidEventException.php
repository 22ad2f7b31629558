<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Exception;

/**
 * The body is not an event: not a JSON object, without a canonical
 * lowercase UUID id or a type, or with a field of the wrong type
 * (answered 400).
 */
final class InvalidEventException extends WebhookException
{
    public function __construct(string $message, ?\Throwable $previous = null)
    {
        parent::__construct('invalid event: ' . $message, 0, $previous);
    }
}
