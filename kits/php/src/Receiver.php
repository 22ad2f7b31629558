<?php

declare(strict_types=1);

namespace Factuarea\Webhooks;

use Factuarea\Webhooks\Exception\BodyTooLargeException;
use Factuarea\Webhooks\Exception\ConfigurationException;
use Factuarea\Webhooks\Exception\DatabaseException;
use Factuarea\Webhooks\Exception\HandlerException;
use Factuarea\Webhooks\Exception\InvalidEventException;
use Factuarea\Webhooks\Exception\InvalidSignatureException;
use Factuarea\Webhooks\Exception\MethodNotAllowedException;
use Factuarea\Webhooks\Exception\WebhookException;

/**
 * The receiver recipe for Factuarea webhooks:
 *
 *  1. Only POST (405 otherwise). The raw body, at most maxBodyBytes (413 beyond).
 *  2. Verify the signature on the raw body against every secret (401).
 *  3. Parse the event (400 if it is not one).
 *  4. In one transaction: insert the event id into processed_webhook_events,
 *     doing nothing when it is there; if it was new, run your handler on the
 *     same connection; commit; answer 200 "processed". A repeat answers 200
 *     "already processed" without running the handler. A handler exception
 *     or a failed commit rolls back and answers 500, so that the sender
 *     retries.
 *
 * Because your handler writes through the connection that holds the
 * transaction, its effect and the record of the id commit together or not
 * at all. Two concurrent deliveries of one id never both run the handler.
 */
final class Receiver
{
    /**
     * The default limit on a delivery's body. Event bodies are a few
     * kilobytes; the limit bounds what an unauthenticated caller can make
     * the receiver read before the signature is checked.
     */
    public const DEFAULT_MAX_BODY_BYTES = 1048576;

    /** 7 days, in seconds: see ProcessedEvents::DEFAULT_RETENTION. */
    public const DEFAULT_RETENTION = ProcessedEvents::DEFAULT_RETENTION;

    /** 90 days, in seconds: see ProcessedEvents::MANUAL_RESEND_RETENTION. */
    public const MANUAL_RESEND_RETENTION = ProcessedEvents::MANUAL_RESEND_RETENTION;

    /**
     * The message of a secret refused for the standard scheme, {index} being
     * its index in secrets: word for word the Go, Node and Python kits'
     * (tests/standard-secrets.json).
     */
    private const SECRET_NOT_STANDARD = "secrets[{index}] is not standard base64 after whsec_ (padding included), so it cannot verify Standard Webhooks signatures: rotate the endpoint's secret, or verify Factuarea-Signature only (scheme factuarea)";

    private const RESPONSE_HEADERS = [
        'Content-Type' => 'text/plain; charset=utf-8',
        'X-Content-Type-Options' => 'nosniff',
    ];

    private readonly Dialect $dialect;
    private readonly Scheme $scheme;
    /** @var list<string> */
    private readonly array $secrets;
    private readonly \Closure $handler;
    private readonly ?\Closure $clock;
    private readonly \Closure $logger;

    /**
     * The transactions of this process that are open, so that a fatal error
     * or an exit() in a handler still rolls back and answers 500.
     *
     * @var array<int, array{\PDO, Dialect}>
     */
    private static array $open = [];
    private static bool $guarded = false;

    /**
     * A receiver. Name the arguments; only pdo, secrets and handler are
     * required.
     *
     * - pdo holds processed_webhook_events and the tables your handler
     *   writes; it must be in PDO::ERRMODE_EXCEPTION (PHP's default).
     * - secrets are the endpoint's secrets ("whsec_…"); during a rotation
     *   the new and the old one: a delivery is accepted when any signature
     *   matches any secret.
     * - handler runs once per new event, inside the transaction: write your
     *   effect through the PDO it is given, and throw to refuse the event
     *   (rolled back, answered 500, retried by the sender).
     * - scheme is "any" (default), "factuarea" or "standard" (see Scheme).
     * - dialect is detected from PDO::ATTR_DRIVER_NAME when null.
     * - maxBodyBytes: a larger body is answered 413.
     * - clock is the clock of the signature's tolerance and of received_at
     *   (the current time when null), for tests.
     * - logger receives (level, message, context) for each delivery: "debug"
     *   when processed, "warning" for a 4xx, "error" for a 500, with
     *   status, event_id, delivery_id, error and exception in the context.
     *   A PSR-3 logger fits as [$logger, 'log']. By default the warnings and
     *   errors go to error_log().
     *
     * @param list<string>                                          $secrets
     * @param callable(Event, \PDO): mixed                          $handler
     * @param null|callable(): \DateTimeInterface                   $clock
     * @param null|callable(string, string, array<string, mixed>): mixed $logger
     *
     * @throws ConfigurationException naming the option that is wrong (with
     *         the standard scheme, the first secret that is not standard
     *         base64 after whsec_)
     */
    public function __construct(
        private readonly \PDO $pdo,
        array $secrets,
        callable $handler,
        Scheme|string $scheme = Scheme::Any,
        ?Dialect $dialect = null,
        private readonly int $maxBodyBytes = self::DEFAULT_MAX_BODY_BYTES,
        ?callable $clock = null,
        ?callable $logger = null,
    ) {
        if ($secrets === []) {
            throw new ConfigurationException('secrets needs at least one secret');
        }
        foreach ($secrets as $secret) {
            if (!is_string($secret) || $secret === '') {
                throw new ConfigurationException('secrets has an empty or non-string secret');
            }
        }
        if ($maxBodyBytes <= 0) {
            throw new ConfigurationException(sprintf('maxBodyBytes must be positive, got %d', $maxBodyBytes));
        }
        ProcessedEvents::requireExceptions($pdo);
        $this->dialect = $dialect ?? Dialect::detect($pdo);
        if ($this->dialect === Dialect::SQLite) {
            $version = (string) $pdo->getAttribute(\PDO::ATTR_SERVER_VERSION);
            if (version_compare($version, '3.24.0', '<')) {
                throw new ConfigurationException(sprintf('SQLite %s has no ON CONFLICT DO NOTHING: the kit needs 3.24 or later', $version));
            }
        }
        $this->secrets = array_values($secrets);
        $this->scheme = Scheme::fromOption($scheme);
        if ($this->scheme === Scheme::Standard) {
            // Every secret: the first that cannot be a Standard Webhooks key
            // is refused, with the message every kit gives (SPEC 15).
            foreach ($this->secrets as $i => $secret) {
                if (StandardWebhooks::key($secret) === null) {
                    throw new ConfigurationException(str_replace('{index}', (string) $i, self::SECRET_NOT_STANDARD));
                }
            }
        }
        $this->handler = \Closure::fromCallable($handler);
        $this->clock = $clock === null ? null : \Closure::fromCallable($clock);
        $this->logger = $logger === null ? self::defaultLogger(...) : \Closure::fromCallable($logger);
    }

    public function dialect(): Dialect
    {
        return $this->dialect;
    }

    public function scheme(): Scheme
    {
        return $this->scheme;
    }

    /**
     * ProcessedEvents::createTable in the receiver's dialect.
     *
     * @throws DatabaseException
     */
    public function createTable(): void
    {
        ProcessedEvents::createTable($this->pdo, $this->dialect);
    }

    /**
     * ProcessedEvents::purge in the receiver's dialect and by its clock:
     * deletes the ids older than $olderThan seconds and returns how many.
     *
     * @throws WebhookException
     */
    public function purge(int $olderThan = self::DEFAULT_RETENTION): int
    {
        return ProcessedEvents::purge($this->pdo, $olderThan, $this->dialect, $this->now());
    }

    /**
     * Answers the request of a plain PHP front controller (php://input,
     * $_SERVER) with http_response_code(), header() and echo, and returns
     * the result.
     */
    public function serve(): Result
    {
        $result = $this->handleGlobals();
        $result->send();
        return $result;
    }

    /**
     * The answer to the request in $_SERVER and php://input, not sent. The
     * body is read only up to the limit.
     */
    public function handleGlobals(): Result
    {
        $method = (string) ($_SERVER['REQUEST_METHOD'] ?? '');
        $headers = Headers::fromServer($_SERVER);
        if ($method !== 'POST') {
            return $this->handle($method, $headers, '');
        }
        $length = (string) ($_SERVER['CONTENT_LENGTH'] ?? '');
        if (preg_match('/^[0-9]+$/D', $length) === 1 && (strlen(ltrim($length, '0')) > 18 || (int) $length > $this->maxBodyBytes)) {
            return $this->refuse(413, new BodyTooLargeException($this->maxBodyBytes));
        }
        $in = fopen('php://input', 'rb');
        $body = $in === false ? false : stream_get_contents($in, $this->maxBodyBytes + 1);
        if ($in !== false) {
            fclose($in);
        }
        if ($body === false) {
            return $this->refuse(400, new InvalidEventException('cannot read the request body'));
        }
        return $this->handle($method, $headers, $body);
    }

    /**
     * The answer to one request, for any framework: its method, its headers
     * (names in any case, each value a string or a list of strings, as
     * PSR-7's getHeaders() gives them) and its raw body, exactly as
     * received.
     *
     * @param array<string, string|list<string>> $headers
     */
    public function handle(string $method, array $headers, string $body): Result
    {
        if ($method !== 'POST') {
            return $this->refuse(405, new MethodNotAllowedException($method), null, ['Allow' => 'POST']);
        }
        if (strlen($body) > $this->maxBodyBytes) {
            return $this->refuse(413, new BodyTooLargeException($this->maxBodyBytes));
        }
        $headers = Headers::normalize($headers);
        // The signature covers the raw bytes, so it is checked before
        // anything decodes them, and before anything from an unauthenticated
        // caller reaches the database.
        try {
            $scheme = $this->verify($headers, $body);
        } catch (InvalidSignatureException $e) {
            return $this->refuse(401, $e);
        }
        try {
            $event = Event::parse($body, Headers::from($headers));
            // In the Standard Webhooks scheme webhook-id is signed and is
            // the event id: a sender that made them differ would give the
            // event two keys.
            if ($scheme === Scheme::Standard && $headers[StandardWebhooks::ID_HEADER] !== $event->id) {
                throw new InvalidEventException(sprintf('webhook-id %s is not the event id %s', $headers[StandardWebhooks::ID_HEADER], $event->id));
            }
        } catch (InvalidEventException $e) {
            return $this->refuse(400, $e);
        }
        try {
            $processed = $this->process($event);
        } catch (\Throwable $e) {
            return $this->refuse(500, $e, $event);
        }
        $message = $processed ? 'processed' : 'already processed';
        ($this->logger)('debug', 'webhook ' . $message, self::context(200, $event));
        return new Result(200, $message, self::RESPONSE_HEADERS, $processed, $event);
    }

    /**
     * Verifies a request's signature by the receiver's scheme and returns
     * the scheme that verified it.
     *
     * @param array<string, string|list<string>> $headers
     *
     * @throws InvalidSignatureException
     */
    public function verify(array $headers, string $body): Scheme
    {
        return $this->scheme->verify(Headers::normalize($headers), $body, $this->secrets, $this->now()->getTimestamp());
    }

    /**
     * The transactional step of the recipe, for an event already verified
     * and parsed: in one transaction, record the event id and, if it is new,
     * run the handler; then commit. Returns whether the handler ran (false:
     * a repeat). An exception means that nothing was committed: refuse the
     * event with a retryable status (500).
     *
     * @throws HandlerException  when the handler threw (getPrevious() is what it threw)
     * @throws DatabaseException when beginning, recording or committing failed
     * @throws ConfigurationException when the connection is already in a transaction
     */
    public function process(Event $event): bool
    {
        ProcessedEvents::requireExceptions($this->pdo);
        if ($this->pdo->inTransaction()) {
            throw new ConfigurationException('the PDO connection is already in a transaction: the kit begins and commits its own');
        }
        try {
            $this->dialect->begin($this->pdo);
        } catch (\PDOException $e) {
            throw new DatabaseException('begin', $e);
        }
        $key = spl_object_id($this);
        self::$open[$key] = [$this->pdo, $this->dialect];
        self::guard();
        try {
            $isNew = ProcessedEvents::record($this->pdo, $this->dialect, $event->id, $this->now());
            if ($isNew) {
                try {
                    ($this->handler)($event, $this->pdo);
                } catch (\Throwable $e) {
                    throw new HandlerException($e);
                }
            }
            try {
                $this->dialect->commit($this->pdo);
            } catch (\PDOException $e) {
                throw new DatabaseException('commit', $e);
            }
            return $isNew;
        } catch (\Throwable $e) {
            // Undo the insert of the id, so that the sender's retry runs the
            // handler again.
            try {
                $this->dialect->rollback($this->pdo);
            } catch (\Throwable $rollback) {
                ($this->logger)('error', 'webhook rollback failed', ['event_id' => $event->id, 'error' => $rollback->getMessage(), 'exception' => $rollback]);
            }
            throw $e;
        } finally {
            unset(self::$open[$key]);
        }
    }

    private function now(): \DateTimeImmutable
    {
        if ($this->clock === null) {
            return new \DateTimeImmutable();
        }
        $now = ($this->clock)();
        if (!$now instanceof \DateTimeInterface) {
            throw new ConfigurationException('clock must return a DateTimeInterface');
        }
        return \DateTimeImmutable::createFromInterface($now);
    }

    /**
     * Logs and builds a refusal. A 4xx answer says which check failed (the
     * sender keeps it on the attempt, where the customer reads it); a 500
     * says nothing of the handler's error.
     *
     * @param array<string, string> $extraHeaders
     */
    private function refuse(int $status, \Throwable $error, ?Event $event = null, array $extraHeaders = []): Result
    {
        $context = self::context($status, $event) + ['error' => $error->getMessage(), 'exception' => $error];
        ($this->logger)($status >= 500 ? 'error' : 'warning', 'webhook refused', $context);
        $message = $status >= 500 ? 'internal error' : $error->getMessage();
        return new Result($status, $message, self::RESPONSE_HEADERS + $extraHeaders, null, $event, $error);
    }

    /** @return array<string, mixed> */
    private static function context(int $status, ?Event $event): array
    {
        $context = ['status' => $status];
        if ($event !== null) {
            $context['event_id'] = $event->id;
            $context['delivery_id'] = $event->headers->deliveryId;
        }
        return $context;
    }

    /** @param array<string, mixed> $context */
    private static function defaultLogger(string $level, string $message, array $context): void
    {
        if ($level === 'debug') {
            return;
        }
        $line = $message;
        foreach ($context as $key => $value) {
            if ($value instanceof \Throwable) {
                // For a 500, where the cause was thrown (the handler's own
                // exception, or the PDOException).
                $cause = $value->getPrevious() ?? $value;
                $value = sprintf('%s at %s:%d', $cause::class, $cause->getFile(), $cause->getLine());
                $key = 'cause';
                if ($level !== 'error') {
                    continue;
                }
            }
            if ($value !== null) {
                $line .= ' ' . $key . '=' . (is_string($value) && preg_match('/[\s"]/', $value) ? json_encode($value, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE) : (string) $value);
            }
        }
        error_log($line);
    }

    private static function guard(): void
    {
        if (self::$guarded) {
            return;
        }
        self::$guarded = true;
        register_shutdown_function(static function (): void {
            foreach (self::$open as [$pdo, $dialect]) {
                try {
                    $dialect->rollback($pdo);
                } catch (\Throwable) {
                }
                if (!headers_sent()) {
                    http_response_code(500);
                }
            }
            self::$open = [];
        });
    }
}
