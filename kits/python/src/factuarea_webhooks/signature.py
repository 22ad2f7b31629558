"""The Factuarea-Signature header: ``t=<unix seconds>,v1=<hex HMAC>``.

``v1 = hex(HMAC-SHA256(key = the whole secret string's UTF-8 bytes,
message = "<t>." + raw body))``. During a secret rotation the header carries
one ``v1`` per live secret, the new one first.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets as _random
from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Tuple, Union

from .clock import Instant, unix_seconds
from .errors import (
    ConfigError,
    MissingHeader,
    NoMatch,
    NoSignature,
    NoTimestamp,
    TimestampOutOfTolerance,
)

#: The HTTP header that carries the signature.
HEADER_NAME = "Factuarea-Signature"

#: How far, in seconds, a signature's timestamp may be from the receiver's
#: clock, in either direction, before it is refused as a replay.
TOLERANCE = 300

#: Every endpoint secret starts with this.
SECRET_PREFIX = "whsec_"

# The largest timestamp Go's strconv.ParseInt accepts, so that the kits agree
# on which headers are well formed.
_INT64_MAX = (1 << 63) - 1

# Written out rather than left to int() and bytes.fromhex(), which accept
# underscores, whitespace and non-ASCII digits that the sender never writes.
_DECIMAL = re.compile(r"[+-]?[0-9]+")
_HEX_SHA256 = re.compile(r"[0-9a-fA-F]{64}")

Body = Union[bytes, bytearray, memoryview]


def _timestamp(text: str) -> Optional[int]:
    """Return a header's timestamp in unix seconds, or None when it is not one.

    A timestamp is a decimal from 1 to the int64 maximum. Shared by
    Factuarea-Signature's ``t=`` and webhook-timestamp, so that both accept
    what Go's strconv.ParseInt does and nothing more.
    """
    if not _DECIMAL.fullmatch(text):
        return None
    n = int(text)
    return n if 0 < n <= _INT64_MAX else None


@dataclass(frozen=True)
class ParsedHeader:
    """A parsed Factuarea-Signature header."""

    #: The ``t=`` element: unix seconds of the attempt.
    timestamp: int
    #: The decoded ``v1=`` signatures, in header order.
    v1: Tuple[bytes, ...]


def new_secret() -> str:
    """Return a new endpoint secret.

    ``whsec_`` and 32 random bytes in standard base64 with padding, the
    format that serves both Factuarea-Signature and Standard Webhooks.
    """
    return SECRET_PREFIX + base64.b64encode(_random.token_bytes(32)).decode("ascii")


def compute(secret: str, timestamp: int, body: Body) -> bytes:
    """Return the raw v1 HMAC of ``body`` at ``timestamp`` with ``secret``."""
    mac = hmac.new(secret.encode("utf-8"), digestmod=hashlib.sha256)
    mac.update(str(timestamp).encode("ascii"))
    mac.update(b".")
    mac.update(bytes(body))
    return mac.digest()


def sign(timestamp: int, body: Body, *secrets: str) -> str:
    """Return the header value for ``body``: one v1 per secret, in order."""
    parts = ["t=%d" % timestamp]
    parts.extend("v1=" + compute(s, timestamp, body).hex() for s in secrets)
    return ",".join(parts)


def parse(header: str) -> ParsedHeader:
    """Read a header value.

    Elements it does not know (other schemes, such as ``v0=``) and malformed
    ``v1`` values are ignored, so that new schemes can be added without
    breaking receivers. Raises MissingHeader, NoTimestamp or NoSignature.
    """
    if header.strip() == "":
        raise MissingHeader("signature header is missing")
    timestamp = None
    v1: List[bytes] = []
    for part in header.split(","):
        key, eq, value = part.strip().partition("=")
        if not eq:
            continue
        if key == "t":
            n = _timestamp(value)
            if timestamp is not None or n is None:
                raise NoTimestamp("signature header has no valid timestamp")
            timestamp = n
        elif key == "v1" and _HEX_SHA256.fullmatch(value):
            v1.append(bytes.fromhex(value))
    if timestamp is None:
        raise NoTimestamp("signature header has no valid timestamp")
    if not v1:
        raise NoSignature("signature header has no v1 signature")
    return ParsedHeader(timestamp, tuple(v1))


def verify(header: str, body: Body, secrets: Union[str, Iterable[str]], now: Instant = None) -> None:
    """Check a Factuarea-Signature header against the raw request body.

    Verify the bytes as received, before any JSON decoding: re-encoding
    changes them. Accepts when the timestamp is within TOLERANCE of ``now``
    (the current time by default) and any v1 signature matches any of the
    secrets (pass the new and the old one during a rotation). Signatures are
    compared in constant time.

    Raises an InvalidSignature subclass naming the check that failed:
    MissingHeader, NoTimestamp, NoSignature, TimestampOutOfTolerance or
    NoMatch; ConfigError when no secret is given.
    """
    keys = _secret_list(secrets)
    parsed = parse(header)
    if not within(parsed.timestamp, unix_seconds(now)):
        raise TimestampOutOfTolerance("signature timestamp is outside the tolerance")
    # Every pair is compared, matching or not, so that the time taken does
    # not tell which signature matched.
    matched = False
    for secret in keys:
        want = compute(secret, parsed.timestamp, body)
        for got in parsed.v1:
            if hmac.compare_digest(got, want):
                matched = True
    if not matched:
        raise NoMatch("no v1 signature matches the secret")


def within(timestamp: int, now: int, tolerance: int = TOLERANCE) -> bool:
    """Report whether unix seconds ``timestamp`` and ``now`` are at most ``tolerance`` apart."""
    return abs(timestamp - now) <= tolerance


def _secret_list(secrets: Union[str, Iterable[str]]) -> Sequence[str]:
    """Return the secrets as a list: one string counts as one secret."""
    keys = [secrets] if isinstance(secrets, str) else list(secrets)
    if not keys:
        raise ConfigError("no secret to verify with")
    for s in keys:
        if not isinstance(s, str) or s == "":
            raise ConfigError("secrets must be non-empty strings (whsec_...)")
    return keys
