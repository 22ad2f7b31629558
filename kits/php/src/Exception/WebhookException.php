<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Exception;

/**
 * The base class of every exception the kit throws, so that one catch
 * takes them all.
 */
abstract class WebhookException extends \RuntimeException
{
}
