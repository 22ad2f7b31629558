<?php

declare(strict_types=1);

require __DIR__ . '/../autoload.php';

spl_autoload_register(static function (string $class): void {
    $prefix = 'Factuarea\\Webhooks\\Tests\\';
    if (str_starts_with($class, $prefix)) {
        $file = __DIR__ . '/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});

// The kit must not depend on the PHP default time zone: the tests run in one
// that is neither UTC nor a whole number of hours away from it.
date_default_timezone_set('Asia/Kathmandu');
