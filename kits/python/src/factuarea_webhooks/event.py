"""The event a delivery carries, and the headers beside it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, Mapping, Optional, Tuple, Union

from .errors import InvalidEvent

#: Header names of a delivery, besides Factuarea-Signature. Only the body is
#: signed: the kit reads the event id from the body, and these headers are
#: there for routing and logs.
HEADER_EVENT_ID = "Factuarea-Event-Id"
HEADER_EVENT_TYPE = "Factuarea-Event-Type"
HEADER_DELIVERY_ID = "Factuarea-Delivery-Id"
HEADER_ACCOUNT_RELATIONSHIP = "Factuarea-Account-Relationship"
HEADER_IDEMPOTENCY_KEY = "Idempotency-Key"

#: Values of Event.account_relationship: the event belongs to the endpoint's
#: own account, or to an account that the endpoint's account provisioned.
RELATIONSHIP_OWN = "own"
RELATIONSHIP_MANAGED = "managed"

# The kit insists on the canonical form because the id is compared as a
# string: an uppercase copy would not be a duplicate.
_CANONICAL_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

#: Request headers as frameworks hand them over: a mapping (a dict, Django's
#: request.headers, Werkzeug's Headers) or (name, value) pairs.
HeadersLike = Union[Mapping[str, str], Iterable[Tuple[str, str]]]


@dataclass
class Account:
    """The account an event belongs to, in an account endpoint's envelope."""

    id: str


@dataclass
class Data:
    """The event's ``data``.

    In api_version 2026-09-23 it is ``{"type", "object"}``; in 2025-06-01 it
    is ``{"object"}`` and ``type`` is None.
    """

    #: Repeats the event type (2026-09-23 and later).
    type: Optional[str] = None
    #: The resource (an invoice, an account, ...) as decoded JSON; its shape
    #: depends on the type and the version.
    object: Any = None


@dataclass
class Headers:
    """The delivery's headers besides the signature. They are not signed."""

    #: Factuarea-Event-Id, equal to the body's id.
    event_id: Optional[str] = None
    #: Factuarea-Event-Type, equal to the body's type.
    event_type: Optional[str] = None
    #: Factuarea-Delivery-Id: one event sent to one endpoint. Two endpoints
    #: get two; it is not a deduplication key.
    delivery_id: Optional[str] = None
    #: Factuarea-Account-Relationship, on account endpoints only.
    account_relationship: Optional[str] = None
    #: Idempotency-Key, equal to the event id.
    idempotency_key: Optional[str] = None
    #: webhook-id (Standard Webhooks endpoints), equal to the event id.
    webhook_id: Optional[str] = None


@dataclass
class Event:
    """A parsed delivery body; both envelopes parse into it.

    A company endpoint's, and an account endpoint's, which adds ``account``,
    ``account_relationship`` and ``company_id``.
    """

    #: The event id, a canonical lowercase UUID, the same in every copy of
    #: the event: the deduplication key.
    id: str
    #: The event type, such as "invoice.sent"; "ping" for a test event.
    type: str
    #: The payload version the endpoint is pinned to, such as "2026-09-23".
    api_version: Optional[str] = None
    #: When the event was registered (UTC, second precision); the same in
    #: every copy, unlike the signature's timestamp.
    created: Optional[datetime] = None
    #: False for events of the test mode; True when the body omits it.
    livemode: bool = True
    #: True only for the event of an endpoint's "send test event".
    test: bool = False
    #: Links the events caused by one operation; not a key.
    correlation_id: Optional[str] = None
    #: The account the event belongs to, on an account endpoint.
    account: Optional[Account] = None
    #: RELATIONSHIP_OWN or RELATIONSHIP_MANAGED on an account endpoint.
    account_relationship: Optional[str] = None
    #: The company the event is about, on an account endpoint; None for an
    #: account.* event about no company.
    company_id: Optional[str] = None
    #: The object the event is about.
    data: Data = field(default_factory=Data)
    #: The whole body, decoded.
    payload: Dict[str, Any] = field(default_factory=dict, repr=False)
    #: The whole body as received, for callers that store it.
    raw: bytes = field(default=b"", repr=False)
    #: The delivery's headers. The Receiver sets them; parse_event leaves
    #: them empty.
    headers: Headers = field(default_factory=Headers)


def parse_event(body: Union[bytes, bytearray, memoryview, str]) -> Event:
    """Parse a delivery body.

    Raises InvalidEvent when the body is not a JSON object in UTF-8, has no
    ``id`` in the canonical lowercase UUID form or no ``type``, or has a
    known field of the wrong type. Unknown fields are ignored, so that new
    fields do not break receivers.
    """
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    try:
        doc = json.loads(raw.decode("utf-8"), parse_constant=_refuse_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise InvalidEvent("invalid event: %s" % exc) from None
    if not isinstance(doc, dict):
        raise InvalidEvent("invalid event: the body is not a JSON object")
    event_id = _optional(doc, "id", str)
    if not event_id:
        raise InvalidEvent("invalid event: no id")
    if not _CANONICAL_UUID.fullmatch(event_id):
        raise InvalidEvent("invalid event: id is not a canonical lowercase UUID")
    event_type = _optional(doc, "type", str)
    if not event_type:
        raise InvalidEvent("invalid event: no type")
    account = _optional(doc, "account", dict)
    data = _optional(doc, "data", dict)
    livemode = _optional(doc, "livemode", bool)
    return Event(
        id=event_id,
        type=event_type,
        api_version=_optional(doc, "api_version", str),
        created=_created(doc),
        livemode=True if livemode is None else livemode,
        test=bool(_optional(doc, "test", bool)),
        correlation_id=_optional(doc, "correlation_id", str),
        account=Account(id=_optional(account, "id", str) or "") if account is not None else None,
        account_relationship=_optional(doc, "account_relationship", str),
        company_id=_optional(doc, "company_id", str),
        data=Data(type=_optional(data, "type", str), object=data.get("object")) if data is not None else Data(),
        payload=doc,
        raw=raw,
    )


def read_headers(headers: HeadersLike) -> Headers:
    """Return the Factuarea headers of a request's headers."""
    h = header_dict(headers)
    return Headers(
        event_id=h.get(HEADER_EVENT_ID.lower()),
        event_type=h.get(HEADER_EVENT_TYPE.lower()),
        delivery_id=h.get(HEADER_DELIVERY_ID.lower()),
        account_relationship=h.get(HEADER_ACCOUNT_RELATIONSHIP.lower()),
        idempotency_key=h.get(HEADER_IDEMPOTENCY_KEY.lower()),
        webhook_id=h.get("webhook-id"),
    )


def header_dict(headers: HeadersLike) -> Dict[str, str]:
    """Return headers keyed by lowercase name; the first of repeated names wins."""
    pairs = headers.items() if hasattr(headers, "items") else headers
    out: Dict[str, str] = {}
    for name, value in pairs:
        key = str(name).lower()
        if key not in out:
            out[key] = value if isinstance(value, str) else str(value)
    return out


def _optional(doc: Mapping[str, Any], name: str, kind: type) -> Any:
    """Return doc[name] when it is of ``kind``, None when absent or null.

    Any other type is not an event of ours (Go's decoder refuses it too).
    """
    value = doc.get(name)
    if value is None:
        return None
    if kind is not bool and isinstance(value, bool) or not isinstance(value, kind):
        raise InvalidEvent("invalid event: %s is not %s" % (name, _KIND_NAMES[kind]))
    return value


_KIND_NAMES = {str: "a string", bool: "a boolean", dict: "a JSON object", int: "an integer"}


def _created(doc: Mapping[str, Any]) -> Optional[datetime]:
    """Return ``created`` as a UTC datetime, or None when absent, null or 0."""
    seconds = _optional(doc, "created", int)
    if not seconds:
        return None
    try:
        return datetime.fromtimestamp(seconds, timezone.utc)
    except (OverflowError, OSError, ValueError):
        raise InvalidEvent("invalid event: created is out of range") from None


def _refuse_constant(name: str) -> Any:
    """Refuse NaN and Infinity, which are not JSON."""
    raise ValueError("%s is not valid JSON" % name)
