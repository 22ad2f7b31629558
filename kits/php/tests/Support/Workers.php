<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Tests\Support;

/** Deliveries from separate PHP processes, started at the same moment. */
final class Workers
{
    /**
     * Runs createTable() from $n processes at once on an empty database.
     */
    public static function createTables(Backend $backend, int $n): void
    {
        self::deliver($backend, array_fill(0, $n, ['body' => '', 'headers' => []]), 0, false, 'create');
    }

    /**
     * Runs one worker.php per delivery, each with its own connection, and
     * releases them together once all are ready.
     *
     * @param list<array{body: string, headers: array<string, string>}> $deliveries
     *
     * @return list<array{status: int, message: string}>
     */
    public static function deliver(Backend $backend, array $deliveries, int $holdMs = 100, bool $fail = false, string $mode = 'deliver'): array
    {
        $procs = [];
        foreach ($deliveries as $d) {
            $config = json_encode([
                'dsn' => $backend->dsn(),
                'secrets' => [Fixtures::SECRET],
                'body' => $d['body'],
                'headers' => $d['headers'],
                'hold_ms' => $holdMs,
                'fail' => $fail,
                'mode' => $mode,
            ], JSON_THROW_ON_ERROR);
            $proc = proc_open([PHP_BINARY, __DIR__ . '/worker.php', $config], [0 => ['pipe', 'r'], 1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
            if (!is_resource($proc)) {
                throw new \RuntimeException('cannot start a worker');
            }
            $procs[] = [$proc, $pipes];
        }
        foreach ($procs as [$proc, $pipes]) {
            $line = fgets($pipes[1]);
            if ($line !== "ready\n") {
                throw new \RuntimeException('worker not ready: ' . var_export($line, true) . ' ' . stream_get_contents($pipes[2]));
            }
        }
        foreach ($procs as [$proc, $pipes]) {
            fwrite($pipes[0], "go\n");
            fclose($pipes[0]);
        }
        $results = [];
        foreach ($procs as [$proc, $pipes]) {
            $out = stream_get_contents($pipes[1]);
            $err = stream_get_contents($pipes[2]);
            fclose($pipes[1]);
            fclose($pipes[2]);
            $code = proc_close($proc);
            $result = json_decode(trim((string) $out), true);
            if ($code !== 0 || !is_array($result)) {
                throw new \RuntimeException(sprintf('worker failed (exit %d): %s %s', $code, $out, $err));
            }
            $results[] = $result;
        }
        return $results;
    }
}
