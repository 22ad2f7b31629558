<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Exception;

/** The body is over the receiver's maxBodyBytes (answered 413). */
final class BodyTooLargeException extends WebhookException
{
    public function __construct(int $maxBodyBytes)
    {
        parent::__construct(sprintf('body too large: over %d bytes', $maxBodyBytes));
    }
}
