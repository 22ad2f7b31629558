"""The Standard Webhooks headers (https://www.standardwebhooks.com).

An endpoint can ask for them beside Factuarea-Signature::

    webhook-id: <event id>
    webhook-timestamp: <unix seconds of the attempt>
    webhook-signature: v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>." + raw body)>

The key is the standard-base64 decoding of what follows ``whsec_``, whereas
Factuarea-Signature keys with the whole secret string: one secret serves
both. During a rotation the header holds one ``v1,`` entry per live secret,
separated by a space, the new one first.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from typing import Iterable, List, Union

from .clock import Instant, unix_seconds
from .errors import (
    MissingHeader,
    NoMatch,
    NoSignature,
    NoTimestamp,
    SecretNotStandard,
    TimestampOutOfTolerance,
)
from .signature import SECRET_PREFIX, Body, _secret_list, _timestamp, within

#: The Standard Webhooks header names, lowercase as the specification
#: writes them (HTTP header names are case-insensitive).
ID_HEADER = "webhook-id"
TIMESTAMP_HEADER = "webhook-timestamp"
SIGNATURE_HEADER = "webhook-signature"

_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def standard_key(secret: str) -> bytes:
    """Return the Standard Webhooks HMAC key of a secret.

    Raises SecretNotStandard when what follows ``whsec_`` is not canonical,
    padded standard base64 (secrets made before the format changed are
    unpadded base64url: rotate to get a compatible one).
    """
    if not secret.startswith(SECRET_PREFIX):
        raise SecretNotStandard("the secret does not start with whsec_")
    rest = secret[len(SECRET_PREFIX):]
    key = _b64decode(rest)
    # Strict, as Go's base64.StdEncoding.Strict(): the text must be the
    # canonical encoding of its bytes, so that every kit accepts the same
    # secrets.
    if not key or base64.b64encode(key).decode("ascii") != rest:
        raise SecretNotStandard("the secret is not standard base64 after whsec_")
    return key


def standard_compatible(secret: str) -> bool:
    """Report whether ``secret`` can sign and verify Standard Webhooks headers."""
    try:
        standard_key(secret)
    except SecretNotStandard:
        return False
    return True


def compute_standard(key: bytes, msg_id: str, timestamp: int, body: Body) -> bytes:
    """Return the raw Standard Webhooks HMAC of ``body`` for ``msg_id`` at ``timestamp``."""
    mac = hmac.new(key, digestmod=hashlib.sha256)
    mac.update(msg_id.encode("utf-8"))
    mac.update(b".")
    mac.update(str(timestamp).encode("ascii"))
    mac.update(b".")
    mac.update(bytes(body))
    return mac.digest()


def sign_standard(msg_id: str, timestamp: int, body: Body, *secrets: str) -> str:
    """Return the webhook-signature value: one ``v1,<base64>`` per secret, in order."""
    entries = []
    for s in secrets:
        mac = compute_standard(standard_key(s), msg_id, timestamp, body)
        entries.append("v1," + base64.b64encode(mac).decode("ascii"))
    return " ".join(entries)


def verify_standard(
    msg_id: str,
    timestamp: str,
    signature: str,
    body: Body,
    secrets: Union[str, Iterable[str]],
    now: Instant = None,
) -> None:
    """Check the three Standard Webhooks header values against the raw body.

    The timestamp must be within 300 seconds of ``now`` (the current time by
    default), in either direction, and at least one ``v1,`` signature must
    match one of the secrets, compared in constant time. Entries of other
    versions are ignored.

    Raises the same InvalidSignature subclasses as verify, and
    SecretNotStandard when no secret can be used as a Standard Webhooks key.
    """
    keys = _secret_list(secrets)
    if signature.strip() == "" or msg_id == "":
        raise MissingHeader("webhook-id or webhook-signature header is missing")
    t = _timestamp(timestamp.strip())
    if t is None:
        raise NoTimestamp("webhook-timestamp header is not a valid timestamp")
    sigs: List[bytes] = []
    for entry in signature.split():
        if not entry.startswith("v1,"):
            continue
        sig = _b64decode(entry[3:])
        if len(sig) == hashlib.sha256().digest_size:
            sigs.append(sig)
    if not sigs:
        raise NoSignature("webhook-signature header has no v1 signature")
    if not within(t, unix_seconds(now)):
        raise TimestampOutOfTolerance("webhook-timestamp is outside the tolerance")
    matched = usable = False
    for secret in keys:
        try:
            key = standard_key(secret)
        except SecretNotStandard:
            continue
        usable = True
        want = compute_standard(key, msg_id, t, body)
        for got in sigs:
            if hmac.compare_digest(got, want):
                matched = True
    if not usable:
        raise SecretNotStandard("no secret is standard base64 after whsec_: rotate the endpoint's secret")
    if not matched:
        raise NoMatch("no v1 signature matches the secret")


def _b64decode(text: str) -> bytes:
    """Decode padded standard base64, or return b"" when it is not that."""
    if not _BASE64.fullmatch(text) or len(text) % 4:
        return b""
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return b""
