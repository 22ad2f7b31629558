<?php

// A front controller whose handler records its effect and then calls exit()
// (or dies of a fatal error): the kit must still roll back and answer 500.

declare(strict_types=1);

require __DIR__ . '/../bootstrap.php';

use Factuarea\Webhooks\Event;
use Factuarea\Webhooks\Receiver;

[$dsn, $user, $password] = json_decode((string) getenv('KIT_DSN'), true, 512, JSON_THROW_ON_ERROR);
$db = new PDO($dsn, $user, $password);
(new Receiver(
    pdo: $db,
    secrets: [(string) getenv('KIT_SECRET')],
    handler: static function (Event $event, PDO $tx): void {
        $tx->prepare('INSERT INTO effects (event_id) VALUES (?)')->execute([$event->id]);
        if (getenv('KIT_HOW') === 'fatal') {
            ini_set('memory_limit', '8M');
            $hog = str_repeat('x', 64 * 1024 * 1024);
        }
        exit(0);
    },
    logger: static function (): void {
    },
))->serve();
