"""The Receiver as a WSGI application (PEP 3333): read the request, answer it."""

from __future__ import annotations

from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional

from .errors import BodyTooLarge

if TYPE_CHECKING:
    from .receiver import Receiver, Response

_CHUNK = 64 * 1024


def serve(receiver: "Receiver", environ: Dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """Answer the delivery in ``environ`` with ``receiver``."""
    method = environ.get("REQUEST_METHOD", "GET")
    headers = request_headers(environ)
    if method != "POST":
        return _send(start_response, receiver.handle(method, headers, b""))
    limit = receiver.max_body_bytes
    length = _content_length(environ)
    if length == -1:
        return _send(start_response, _plain(400, "invalid Content-Length"))
    if length is not None and length > limit:
        # Refused before reading a byte of it.
        too_large = BodyTooLarge("body too large: over %d bytes" % limit)
        return _send(start_response, receiver._refuse(too_large, None, headers))
    body = _read(environ["wsgi.input"], limit + 1 if length is None else length)
    return _send(start_response, receiver.handle(method, headers, body))


def request_headers(environ: Dict[str, Any]) -> Dict[str, str]:
    """Return the request's headers from a WSGI environ, keyed by lowercase name."""
    headers = {}
    for key, value in environ.items():
        if key.startswith("HTTP_"):
            headers[key[5:].replace("_", "-").lower()] = value
    return headers


def _content_length(environ: Dict[str, Any]) -> Optional[int]:
    """Return CONTENT_LENGTH, None when the body's end is the stream's, or -1 when invalid.

    PEP 3333 lets an application read without a length only when the server
    says the input ends (wsgi.input_terminated); otherwise the body is empty.
    """
    raw = str(environ.get("CONTENT_LENGTH") or "").strip()
    if raw == "":
        return None if environ.get("wsgi.input_terminated") else 0
    if not raw.isdigit() or not raw.isascii():
        return -1
    return int(raw)


def _read(stream: Any, n: int) -> bytes:
    """Read up to ``n`` bytes: a WSGI stream may return fewer per call."""
    parts: List[bytes] = []
    left = n
    while left > 0:
        chunk = stream.read(min(left, _CHUNK))
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _plain(status: int, msg: str) -> "Response":
    from .receiver import _reply

    return _reply(status, msg)


def _send(start_response: Callable[..., Any], r: "Response") -> Iterable[bytes]:
    body = r.body.encode("utf-8")
    headers = list(r.headers) + [("Content-Length", str(len(body)))]
    start_response("%d %s" % (r.status, HTTPStatus(r.status).phrase), headers)
    return [body]
