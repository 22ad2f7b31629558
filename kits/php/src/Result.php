<?php

declare(strict_types=1);

namespace Factuarea\Webhooks;

/**
 * The answer to one delivery, for any framework: send status, headers and
 * body() as the response (or call send() in a plain front controller).
 */
final class Result
{
    /**
     * @param array<string, string> $headers
     */
    public function __construct(
        /** 200, or 401, 400, 405, 413 or 500. */
        public readonly int $status,
        /** One line: "processed", "already processed", or why the delivery was refused. */
        public readonly string $message,
        /** The response headers: Content-Type, X-Content-Type-Options, and Allow on a 405. */
        public readonly array $headers,
        /** True when the handler ran now, false for a repeat, null when the delivery was refused. */
        public readonly ?bool $processed = null,
        /** The event, once parsed. */
        public readonly ?Event $event = null,
        /** Why the delivery was refused; for a 500, what failed (the response does not say). */
        public readonly ?\Throwable $error = null,
    ) {
    }

    /** Whether the answer is a 2xx, after which the sender stops. */
    public function ok(): bool
    {
        return $this->status >= 200 && $this->status < 300;
    }

    /** The response body: the message and a newline. */
    public function body(): string
    {
        return $this->message . "\n";
    }

    /** Writes the answer with http_response_code(), header() and echo. */
    public function send(): void
    {
        if (!headers_sent()) {
            http_response_code($this->status);
            foreach ($this->headers as $name => $value) {
                header($name . ': ' . $value);
            }
        }
        echo $this->body();
    }
}
