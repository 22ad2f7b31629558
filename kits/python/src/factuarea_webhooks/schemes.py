"""Which signature a request is verified by: Factuarea-Signature or Standard Webhooks."""

from __future__ import annotations

from typing import Iterable, Union

from .clock import Instant
from .errors import ConfigError, MissingHeader
from .event import HeadersLike, header_dict
from .signature import HEADER_NAME, Body, verify
from .standard import ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, verify_standard

#: Verify Factuarea-Signature when the request has it, else the Standard
#: Webhooks headers. A request that has Factuarea-Signature is judged by it
#: alone: a wrong one is refused, whatever else the request carries.
SCHEME_ANY = "any"
#: Verify Factuarea-Signature only.
SCHEME_FACTUAREA = "factuarea"
#: Verify the Standard Webhooks headers only (SPEC section 15).
SCHEME_STANDARD = "standard"

SCHEMES = (SCHEME_ANY, SCHEME_FACTUAREA, SCHEME_STANDARD)


def check_scheme(scheme: str) -> str:
    """Return ``scheme`` if it is one of SCHEMES, else raise ConfigError."""
    if scheme not in SCHEMES:
        raise ConfigError("scheme must be one of %s, not %r" % (", ".join(map(repr, SCHEMES)), scheme))
    return scheme


def verify_request(
    headers: HeadersLike,
    body: Body,
    secrets: Union[str, Iterable[str]],
    scheme: str = SCHEME_ANY,
    now: Instant = None,
) -> str:
    """Verify a request's signature by ``scheme`` and return the scheme that verified it.

    Returns SCHEME_FACTUAREA or SCHEME_STANDARD. Raises an InvalidSignature
    subclass when the signature does not verify.
    """
    check_scheme(scheme)
    h = header_dict(headers)
    use = scheme
    if scheme == SCHEME_ANY:
        if HEADER_NAME.lower() in h:
            use = SCHEME_FACTUAREA
        elif SIGNATURE_HEADER in h:
            use = SCHEME_STANDARD
        else:
            raise MissingHeader("signature header is missing (neither %s nor %s)" % (HEADER_NAME, SIGNATURE_HEADER))
    if use == SCHEME_FACTUAREA:
        verify(h.get(HEADER_NAME.lower(), ""), body, secrets, now)
    else:
        verify_standard(
            h.get(ID_HEADER, ""),
            h.get(TIMESTAMP_HEADER, ""),
            h.get(SIGNATURE_HEADER, ""),
            body,
            secrets,
            now,
        )
    return use
