<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Tests\Support;

/** A php -S server running a router script, on a free port of 127.0.0.1. */
final class Server
{
    /** @param resource $process */
    private function __construct(
        private $process,
        public readonly int $port,
        private readonly string $log,
    ) {
    }

    /**
     * Starts `php -S 127.0.0.1:$PORT $router` with these environment
     * variables (and PORT) and waits until it accepts connections.
     *
     * @param array<string, string> $env
     */
    public static function start(string $router, array $env, int $workers = 4): self
    {
        $port = self::freePort();
        $log = tempnam(sys_get_temp_dir(), 'phpkit-server-');
        $env = array_merge(getenv(), $env, ['PORT' => (string) $port, 'PHP_CLI_SERVER_WORKERS' => (string) $workers]);
        $process = proc_open(
            [PHP_BINARY, '-S', '127.0.0.1:' . $port, $router],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', $log, 'a'], 2 => ['file', $log, 'a']],
            $pipes,
            dirname($router),
            $env,
        );
        if (!is_resource($process)) {
            throw new \RuntimeException('cannot start php -S');
        }
        $server = new self($process, $port, $log);
        for ($i = 0; $i < 200; $i++) {
            $socket = @stream_socket_client('tcp://127.0.0.1:' . $port, $errno, $error, 1);
            if ($socket !== false) {
                fclose($socket);
                return $server;
            }
            if (!proc_get_status($process)['running']) {
                break;
            }
            usleep(25000);
        }
        $log = $server->log();
        $server->stop();
        throw new \RuntimeException('php -S did not start: ' . $log);
    }

    /** What the server wrote to stdout and stderr. */
    public function log(): string
    {
        return (string) file_get_contents($this->log);
    }

    /**
     * Stops the server and its workers. php -S does not pass SIGTERM on to
     * the workers that PHP_CLI_SERVER_WORKERS forks: they would keep the
     * port, so each is stopped by its own pid.
     */
    public function stop(): void
    {
        if (is_resource($this->process)) {
            $pid = proc_get_status($this->process)['pid'];
            $workers = self::children($pid);
            proc_terminate($this->process, SIGTERM);
            foreach ($workers as $worker) {
                posix_kill($worker, SIGTERM);
            }
            proc_close($this->process);
        }
        if (is_file($this->log)) {
            unlink($this->log);
        }
    }

    /** @return list<int> the pids whose parent is $pid */
    private static function children(int $pid): array
    {
        $children = [];
        foreach (glob('/proc/[0-9]*/stat') ?: [] as $file) {
            $stat = @file_get_contents($file);
            // pid (comm) state ppid …: comm may hold spaces and parentheses.
            if ($stat !== false && preg_match('/\) \S+ (\d+) /', substr($stat, (int) strrpos($stat, ')') - 1), $m) === 1 && (int) $m[1] === $pid) {
                $children[] = (int) basename(dirname($file));
            }
        }
        return $children;
    }

    private static function freePort(): int
    {
        $socket = stream_socket_server('tcp://127.0.0.1:0', $errno, $error);
        if ($socket === false) {
            throw new \RuntimeException('no free port: ' . $error);
        }
        $name = (string) stream_socket_get_name($socket, false);
        fclose($socket);
        return (int) substr($name, strrpos($name, ':') + 1);
    }
}
