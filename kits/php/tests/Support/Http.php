<?php

declare(strict_types=1);

namespace Factuarea\Webhooks\Tests\Support;

/** A minimal HTTP/1.1 client for the tests' php -S servers on 127.0.0.1. */
final class Http
{
    /**
     * Sends one request and returns its response.
     *
     * @param array<string, string> $headers
     *
     * @return array{status: int, headers: array<string, string>, body: string}
     */
    public static function request(int $port, string $method, string $path, array $headers = [], string $body = ''): array
    {
        return self::concurrent($port, [[$method, $path, $headers, $body]])[0];
    }

    /**
     * Sends every request on its own connection before reading any answer,
     * so that the server handles them at once (as many as it has workers).
     *
     * @param list<array{string, string, array<string, string>, string}> $requests
     *
     * @return list<array{status: int, headers: array<string, string>, body: string}>
     */
    public static function concurrent(int $port, array $requests): array
    {
        $sockets = [];
        foreach ($requests as [$method, $path, $headers, $body]) {
            $socket = stream_socket_client('tcp://127.0.0.1:' . $port, $errno, $error, 10);
            if ($socket === false) {
                throw new \RuntimeException(sprintf('connect to 127.0.0.1:%d: %s', $port, $error));
            }
            stream_set_timeout($socket, 60);
            $raw = sprintf("%s %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\nContent-Length: %d\r\n", $method, $path, $port, strlen($body));
            foreach ($headers as $name => $value) {
                $raw .= $name . ': ' . $value . "\r\n";
            }
            fwrite($socket, $raw . "\r\n" . $body);
            $sockets[] = $socket;
        }
        $responses = [];
        foreach ($sockets as $socket) {
            $raw = stream_get_contents($socket);
            fclose($socket);
            $responses[] = self::parse((string) $raw);
        }
        return $responses;
    }

    /** @return array{status: int, headers: array<string, string>, body: string} */
    private static function parse(string $raw): array
    {
        $end = strpos($raw, "\r\n\r\n");
        if ($end === false || preg_match('#^HTTP/1\.[01] (\d{3})#', $raw, $m) !== 1) {
            throw new \RuntimeException('not an HTTP response: ' . var_export(substr($raw, 0, 200), true));
        }
        $headers = [];
        foreach (array_slice(explode("\r\n", substr($raw, 0, $end)), 1) as $line) {
            [$name, $value] = array_pad(explode(':', $line, 2), 2, '');
            $headers[strtolower(trim($name))] = trim($value);
        }
        $body = substr($raw, $end + 4);
        if (str_contains(strtolower($headers['transfer-encoding'] ?? ''), 'chunked')) {
            $body = self::unchunk($body);
        }
        return ['status' => (int) $m[1], 'headers' => $headers, 'body' => $body];
    }

    private static function unchunk(string $body): string
    {
        $out = '';
        while (($eol = strpos($body, "\r\n")) !== false) {
            $size = hexdec(substr($body, 0, $eol));
            if ($size === 0) {
                break;
            }
            $out .= substr($body, $eol + 2, (int) $size);
            $body = substr($body, $eol + 2 + (int) $size + 2);
        }
        return $out;
    }
}
