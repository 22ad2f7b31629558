<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Exception;

/**
 * The receiver was given a wrong option, or a PDO connection it cannot
 * work with. The message names the option.
 */
final class ConfigurationException extends WebhookException
{
}
