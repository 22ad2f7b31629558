"""The receiver kit for Factuarea webhooks.

It verifies a delivery's signature, parses the event, and runs your handler
at most once per event id, in the same database transaction that records the
id.

Delivery is at least once: a lost answer, a timeout or a manual resend sends
an event again, and an event that reaches two of your endpoints arrives
twice. Every copy carries the same event id (the body's ``id``, also in the
Factuarea-Event-Id and Idempotency-Key headers), so the id is what tells a
repeat from a new event. The delivery id, the signature, the correlation_id
and data.object.id are not keys.

A minimal receiver::

    import sqlite3
    from factuarea_webhooks import Receiver

    def on_event(conn, event):
        if event.type == "invoice.sent":
            conn.execute("INSERT INTO sent_invoices (invoice_id) VALUES (?)",
                         (event.data.object["id"],))

    app = Receiver(
        secrets=[os.environ["FACTUAREA_WEBHOOK_SECRET"]],
        connect=lambda: sqlite3.connect("app.db", timeout=10),
        handler=on_event,
    )
    app.create_table()
    # app is a WSGI application; app.handle(method, headers, body) serves
    # any other framework.

The package depends on nothing beyond the standard library: bring sqlite3
or psycopg 3.
"""

from .dialect import Dialect, detect_dialect
from .errors import (
    BodyTooLarge,
    ConfigError,
    HandlerFailed,
    InvalidEvent,
    InvalidSignature,
    MethodNotAllowed,
    MissingHeader,
    NoMatch,
    NoSignature,
    NoTimestamp,
    ProcessingError,
    SecretNotStandard,
    StoreError,
    TimestampOutOfTolerance,
    UnknownDialect,
    WebhookError,
)
from .event import (
    HEADER_ACCOUNT_RELATIONSHIP,
    HEADER_DELIVERY_ID,
    HEADER_EVENT_ID,
    HEADER_EVENT_TYPE,
    HEADER_IDEMPOTENCY_KEY,
    RELATIONSHIP_MANAGED,
    RELATIONSHIP_OWN,
    Account,
    Data,
    Event,
    Headers,
    parse_event,
    read_headers,
)
from .receiver import DEFAULT_MAX_BODY_BYTES, Handler, Receiver, Response
from .schemes import SCHEME_ANY, SCHEME_FACTUAREA, SCHEME_STANDARD, SCHEMES, verify_request
from .signature import HEADER_NAME, SECRET_PREFIX, TOLERANCE, new_secret, sign, verify
from .standard import (
    ID_HEADER,
    SIGNATURE_HEADER,
    TIMESTAMP_HEADER,
    sign_standard,
    standard_compatible,
    standard_key,
    verify_standard,
)
from .store import DEFAULT_RETENTION, MANUAL_RESEND_RETENTION, create_table, purge

__version__ = "0.1.0"

__all__ = [
    "Account",
    "BodyTooLarge",
    "ConfigError",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_RETENTION",
    "Data",
    "Dialect",
    "Event",
    "HEADER_ACCOUNT_RELATIONSHIP",
    "HEADER_DELIVERY_ID",
    "HEADER_EVENT_ID",
    "HEADER_EVENT_TYPE",
    "HEADER_IDEMPOTENCY_KEY",
    "HEADER_NAME",
    "Handler",
    "HandlerFailed",
    "Headers",
    "ID_HEADER",
    "InvalidEvent",
    "InvalidSignature",
    "MANUAL_RESEND_RETENTION",
    "MethodNotAllowed",
    "MissingHeader",
    "NoMatch",
    "NoSignature",
    "NoTimestamp",
    "ProcessingError",
    "RELATIONSHIP_MANAGED",
    "RELATIONSHIP_OWN",
    "Receiver",
    "Response",
    "SCHEMES",
    "SCHEME_ANY",
    "SCHEME_FACTUAREA",
    "SCHEME_STANDARD",
    "SECRET_PREFIX",
    "SIGNATURE_HEADER",
    "SecretNotStandard",
    "StoreError",
    "TIMESTAMP_HEADER",
    "TOLERANCE",
    "TimestampOutOfTolerance",
    "UnknownDialect",
    "WebhookError",
    "create_table",
    "detect_dialect",
    "new_secret",
    "parse_event",
    "purge",
    "read_headers",
    "sign",
    "sign_standard",
    "standard_compatible",
    "standard_key",
    "verify",
    "verify_request",
    "verify_standard",
]
