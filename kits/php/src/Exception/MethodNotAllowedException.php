<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Exception;

/** The request's method is not POST (answered 405, with Allow: POST). */
final class MethodNotAllowedException extends WebhookException
{
    public function __construct(string $method)
    {
        parent::__construct(sprintf('method %s not allowed', $method));
    }
}
