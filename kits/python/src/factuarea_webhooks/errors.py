"""The kit's exceptions, all under WebhookError.

Each exception that refuses a delivery carries the HTTP status the Receiver
answers with (``http_status``), so that code reading requests its own way
can answer as the Receiver does.
"""

from __future__ import annotations


class WebhookError(Exception):
    """Base class of every exception the kit raises."""

    #: The status the Receiver answers when this exception refuses a delivery.
    http_status: int = 500


class ConfigError(WebhookError, ValueError):
    """A Receiver, or a call of the kit, was given a wrong argument.

    The message names the argument.
    """


class UnknownDialect(ConfigError):
    """The SQL dialect cannot be told from the connection's module.

    Pass ``dialect=Dialect.SQLITE`` or ``Dialect.POSTGRES``.
    """


class MethodNotAllowed(WebhookError):
    """The request is not a POST (405)."""

    http_status = 405


class BodyTooLarge(WebhookError):
    """The body is over the Receiver's ``max_body_bytes`` (413)."""

    http_status = 413


class InvalidSignature(WebhookError):
    """The delivery's signature did not verify (401).

    The subclass names the check that failed.
    """

    http_status = 401


class MissingHeader(InvalidSignature):
    """The signature header (or webhook-id) is missing or empty."""


class NoTimestamp(InvalidSignature):
    """The header has no valid timestamp."""


class NoSignature(InvalidSignature):
    """The header has no well-formed v1 signature."""


class TimestampOutOfTolerance(InvalidSignature):
    """The timestamp is more than 300 seconds away from the receiver's clock."""


class NoMatch(InvalidSignature):
    """No v1 signature matches any of the secrets."""


class SecretNotStandard(InvalidSignature):
    """No secret can serve as a Standard Webhooks key.

    The part after ``whsec_`` must be standard base64. Secrets made before
    the format changed are unpadded base64url: rotate the endpoint's secret
    to get one that serves both schemes.
    """


class InvalidEvent(WebhookError, ValueError):
    """The body is not an event (400).

    Not a JSON object, or without an ``id`` in the canonical lowercase UUID
    form, or without a ``type``, or with a field of the wrong type.
    """

    http_status = 400


class ProcessingError(WebhookError):
    """Nothing was committed: the handler or the database failed (500).

    The sender retries the delivery later. ``__cause__`` holds the original
    exception.
    """

    http_status = 500


class HandlerFailed(ProcessingError):
    """Your handler raised, or left the transaction unusable; rolled back."""


class StoreError(ProcessingError):
    """The database failed to begin, record the event id or commit."""
