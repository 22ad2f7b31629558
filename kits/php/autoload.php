<?php

// The kit's autoloader for projects without Composer (with Composer, require
// vendor/autoload.php instead): require this file once and use the classes.

declare(strict_types=1);

spl_autoload_register(static function (string $class): void {
    $prefix = 'Factuarea\\Webhooks\\';
    if (!str_starts_with($class, $prefix)) {
        return;
    }
    $file = __DIR__ . '/src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
    if (is_file($file)) {
        require $file;
    }
});
