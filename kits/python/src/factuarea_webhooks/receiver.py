"""The receiver recipe: verify, parse, record the id and run the handler in one transaction."""

from __future__ import annotations

import logging
from contextlib import ExitStack, contextmanager
from datetime import datetime, timedelta
from typing import Any, Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional, Tuple, Union

from .clock import as_utc, utc_now
from .dialect import Connection, Dialect, detect_dialect
from .errors import (
    BodyTooLarge,
    ConfigError,
    HandlerFailed,
    InvalidEvent,
    InvalidSignature,
    MethodNotAllowed,
    StoreError,
    WebhookError,
)
from .event import Event, HeadersLike, header_dict, parse_event, read_headers
from .schemes import SCHEME_ANY, SCHEME_STANDARD, check_scheme, verify_request
from .signature import _secret_list
from .standard import ID_HEADER, standard_compatible
from .store import DEFAULT_RETENTION, create_table, purge, record

#: The default limit on a delivery's body. Event bodies are a few kilobytes;
#: the limit only bounds what an unauthenticated caller can make the
#: receiver read before the signature is checked.
DEFAULT_MAX_BODY_BYTES = 1 << 20

#: Your handler: it gets the connection that holds the kit's transaction
#: and the event. Write your effect through that connection, and neither
#: commit nor roll back: the kit does. Raise to refuse the event (500).
Handler = Callable[[Connection, Event], Any]

_log = logging.getLogger("factuarea_webhooks")

#: The message of a secret refused for scheme "standard", ``{index}`` being
#: its index in ``secrets``: word for word the Go, Node and PHP kits'
#: (tests/testdata/standard-secrets.json).
SECRET_NOT_STANDARD = (
    "secrets[{index}] is not standard base64 after whsec_ (padding included), so it cannot verify "
    "Standard Webhooks signatures: rotate the endpoint's secret, or verify Factuarea-Signature only (scheme factuarea)"
)


class Response(NamedTuple):
    """The answer to a delivery, for any framework to send."""

    status: int
    #: One line of plain text: "processed", "already processed", or why the
    #: delivery was refused (the sender shows it on the attempt).
    body: str
    headers: Tuple[Tuple[str, str], ...]


class Receiver:
    """The receiver recipe, for any framework.

    For each delivery: only POST (405); at most ``max_body_bytes`` (413);
    verify the signature on the raw body against every secret (401); parse
    the event (400); then in one transaction, on a connection of its own,
    insert the event id into processed_webhook_events, doing nothing on
    conflict, and if the id is new run ``handler(conn, event)``; commit;
    answer 200. A repeat answers 200 without running the handler. A handler
    exception, or a failed commit, rolls back and answers 500, so that the
    sender retries.

    Because your handler writes through the same transaction, its effect and
    the record of the id commit together or not at all.

    Connections: give ``connect``, a function that opens a new connection
    (the Receiver closes it after the delivery), or ``pool``, a psycopg
    ConnectionPool. Each delivery gets its own connection, so that
    concurrent deliveries never share a transaction. The Receiver is safe to
    use from many threads.

    The Receiver is a WSGI application; ``handle`` serves any other
    framework.
    """

    def __init__(
        self,
        *,
        secrets: Union[str, Iterable[str]],
        handler: Handler,
        connect: Optional[Callable[[], Connection]] = None,
        pool: Any = None,
        scheme: str = SCHEME_ANY,
        dialect: Optional[Dialect] = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        now: Callable[[], datetime] = utc_now,
        logger: Optional[logging.Logger] = None,
    ) -> None:
        """Configure a Receiver; raises ConfigError naming the wrong argument.

        ``secrets``: the endpoint's signing secrets (``whsec_...``), the new
        one first during a rotation: a delivery is accepted when any
        signature matches any secret. ``scheme``: "any" (Factuarea-Signature
        when the request has it, else the Standard Webhooks headers),
        "factuarea" or "standard". ``dialect``: detected from each
        connection's driver when None. ``now``: the clock, for the
        signature's tolerance and received_at. ``logger``: one record per
        refused delivery (warning for 4xx, error for 500 with the handler's
        exception, which the answer does not reveal); defaults to the
        "factuarea_webhooks" logger.
        """
        try:
            self._secrets: List[str] = list(_secret_list(secrets))
        except (ConfigError, TypeError):
            raise ConfigError("secrets must be a whsec_... string or a list of them, new first") from None
        if not callable(handler):
            raise ConfigError("handler must be a function (conn, event)")
        if (connect is None) == (pool is None):
            raise ConfigError("give exactly one of connect (a function that opens a connection) or pool")
        if connect is not None and (hasattr(connect, "cursor") or not callable(connect)):
            raise ConfigError(
                "connect must be a function that opens a new connection, not a connection: "
                "a connection shared by concurrent deliveries shares their transaction"
            )
        if pool is not None and not callable(getattr(pool, "connection", None)):
            raise ConfigError("pool must have a connection() context manager, as psycopg_pool.ConnectionPool")
        self._scheme = check_scheme(scheme)
        if scheme == SCHEME_STANDARD:
            # Every secret: the first that cannot be a Standard Webhooks key
            # is refused, with the message every kit gives (SPEC 15).
            for i, s in enumerate(self._secrets):
                if not standard_compatible(s):
                    raise ConfigError(SECRET_NOT_STANDARD.replace("{index}", str(i)))
        if dialect is not None and not isinstance(dialect, Dialect):
            raise ConfigError("dialect must be Dialect.SQLITE or Dialect.POSTGRES")
        if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int) or max_body_bytes <= 0:
            raise ConfigError("max_body_bytes must be a positive int")
        if not callable(now):
            raise ConfigError("now must be a function returning a datetime")
        self._handler = handler
        self._connect = connect
        self._pool = pool
        self._dialect = dialect
        self.max_body_bytes = max_body_bytes
        self._now = now
        self._log = logger or _log

    @property
    def scheme(self) -> str:
        """The signature scheme the Receiver verifies."""
        return self._scheme

    def handle(self, method: str, headers: HeadersLike, body: Union[bytes, bytearray, memoryview, str]) -> Response:
        """Answer one delivery, given the request's method, headers and raw body.

        It never raises for a delivery it refuses: every refusal is a
        Response (and a log record).
        """
        event: Optional[Event] = None
        h: Dict[str, str] = {}
        try:
            h = header_dict(headers)
            if method != "POST":
                raise MethodNotAllowed("method %s not allowed" % method)
            raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
            if len(raw) > self.max_body_bytes:
                raise BodyTooLarge("body too large: over %d bytes" % self.max_body_bytes)
            # The signature covers the raw bytes, so it is checked before
            # anything decodes them, and before anything from an
            # unauthenticated caller reaches the database.
            used = verify_request(h, raw, self._secrets, self._scheme, self._now())
            event = parse_event(raw)
            if used == SCHEME_STANDARD and h.get(ID_HEADER) != event.id:
                # webhook-id is signed and is the event id: a different one
                # would make the id and the deduplication key disagree.
                raise InvalidEvent("invalid event: webhook-id is not the body's id")
            event.headers = read_headers(h)
            processed = self.process(event)
        except Exception as exc:
            return self._refuse(exc, event, h)
        msg = "processed" if processed else "already processed"
        self._log.debug("webhook %s", msg, extra=_log_fields(event, h))
        return _reply(200, msg)

    def process(self, event: Event) -> bool:
        """Run the transactional step for an event already verified and parsed.

        In one transaction it records event.id and, if the id is new, runs
        the handler; then it commits. Returns whether the handler ran (False
        for a repeat). A ProcessingError means nothing was committed: refuse
        the delivery with a retryable status (500).
        """
        now = as_utc(self._now())
        with self._connection() as conn:
            tx = (self._dialect or detect_dialect(conn)).begin(conn)
            try:
                is_new = record(tx, event.id, now)
                if is_new:
                    try:
                        self._handler(conn, event)
                    except Exception as exc:
                        raise HandlerFailed("handler raised %s: %s" % (type(exc).__name__, exc)) from exc
                    tx.check_open()
                tx.commit()
            finally:
                # After commit this does nothing; on every other path it
                # undoes the insert of the id, so that the sender's retry
                # runs the handler again.
                tx.rollback()
        return is_new

    def create_table(self) -> None:
        """Create processed_webhook_events if it does not exist, on a connection of the Receiver's."""
        with self._connection() as conn:
            create_table(conn, self._dialect)

    def purge(self, older_than: timedelta = DEFAULT_RETENTION) -> int:
        """Delete the ids older than ``older_than`` by the Receiver's clock; return how many."""
        with self._connection() as conn:
            return purge(conn, older_than, self._now(), self._dialect)

    def __call__(self, environ: Dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        """Serve a delivery as a WSGI application (PEP 3333)."""
        from .wsgi import serve

        return serve(self, environ, start_response)

    @contextmanager
    def _connection(self) -> Iterator[Connection]:
        if self._pool is not None:
            with ExitStack() as stack:
                try:
                    conn = stack.enter_context(self._pool.connection())
                except Exception as exc:
                    raise StoreError("get a connection from the pool: %s" % exc) from exc
                yield conn
            return
        assert self._connect is not None
        try:
            conn = self._connect()
        except Exception as exc:
            raise StoreError("connect: %s" % exc) from exc
        try:
            yield conn
        finally:
            try:
                conn.close()
            except Exception:
                pass

    def _refuse(self, exc: Exception, event: Optional[Event], h: Dict[str, str]) -> Response:
        status = exc.http_status if isinstance(exc, WebhookError) else 500
        fields = _log_fields(event, h)
        if status >= 500:
            self._log.error("webhook refused: %d %s", status, exc, exc_info=exc, extra=fields)
            return _reply(500, "internal error")
        self._log.warning("webhook refused: %d %s", status, _message(exc), extra=fields)
        extra_headers = (("Allow", "POST"),) if status == 405 else ()
        return _reply(status, _message(exc), extra_headers)


def _message(exc: Exception) -> str:
    """The one line a 4xx answer says: which check failed."""
    if isinstance(exc, InvalidSignature):
        return "invalid signature: %s" % exc
    return str(exc)


def _log_fields(event: Optional[Event], h: Dict[str, str]) -> Dict[str, Any]:
    return {
        "event_id": event.id if event is not None else None,
        "delivery_id": h.get("factuarea-delivery-id"),
    }


def _reply(status: int, msg: str, extra: Tuple[Tuple[str, str], ...] = ()) -> Response:
    headers = (
        ("Content-Type", "text/plain; charset=utf-8"),
        ("X-Content-Type-Options", "nosniff"),
    ) + extra
    return Response(status, msg + "\n", headers)
