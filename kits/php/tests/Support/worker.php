<?php

// One delivery in a process of its own, for the concurrency tests: it
// connects, says "ready", waits for a line on stdin so that every worker
// starts at once, delivers, and prints the result as JSON. The handler
// records its effect and holds the transaction open a moment, so that the
// other copies arrive while it is uncommitted.

declare(strict_types=1);

require __DIR__ . '/../bootstrap.php';

use Factuarea\Webhooks\Event;
use Factuarea\Webhooks\Receiver;

$config = json_decode($argv[1], true, 512, JSON_THROW_ON_ERROR);
[$dsn, $user, $password] = $config['dsn'];
$db = new PDO($dsn, $user, $password);
$receiver = new Receiver(
    pdo: $db,
    secrets: $config['secrets'],
    handler: static function (Event $event, PDO $tx) use ($config): void {
        $tx->prepare('INSERT INTO effects (event_id) VALUES (?)')->execute([$event->id]);
        usleep($config['hold_ms'] * 1000);
        if ($config['fail']) {
            throw new RuntimeException('the ledger is locked');
        }
    },
    logger: static function (): void {
    },
);
echo "ready\n";
fgets(STDIN);
if (($config['mode'] ?? 'deliver') === 'create') {
    $receiver->createTable();
    echo json_encode(['status' => 0, 'message' => 'created']), "\n";
    exit(0);
}
$result = $receiver->handle('POST', $config['headers'], $config['body']);
echo json_encode(['status' => $result->status, 'message' => $result->message]), "\n";
