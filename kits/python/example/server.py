"""The example receiver: the kit behind the standard library's WSGI server.

It uses the kit as a customer would, and is what the cross-kit end-to-end
test starts. Environment:

  PORT             listen on 127.0.0.1:$PORT
  WEBHOOK_SECRETS  the endpoint's secrets, comma-separated, new first
  WEBHOOK_SCHEME   any (default), factuarea or standard
  DATABASE_URL     sqlite:/absolute/path.db or postgres://user@host:port/db

Run it from the repository with the kit on the path:

  PYTHONPATH=kits/python/src PORT=9000 WEBHOOK_SECRETS=whsec_... \\
    DATABASE_URL=sqlite:/tmp/receiver.db python3 kits/python/example/server.py

PostgreSQL needs psycopg 3 (Debian: python3-psycopg, seen by /usr/bin/python3).
"""

from __future__ import annotations

import logging
import os
import signal
import socketserver
import sqlite3
import sys
import threading
from typing import Any, Callable, Dict, Iterable, Tuple
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from factuarea_webhooks import ConfigError, Event, Receiver, create_table

# The effect of each event: no unique key, so that a double effect would show.
EFFECTS_TABLE = """CREATE TABLE IF NOT EXISTS webhook_effects (
  event_id             VARCHAR(64)  NOT NULL,
  type                 VARCHAR(200) NOT NULL,
  api_version          VARCHAR(20)  NOT NULL,
  account_relationship VARCHAR(10),
  object_id            VARCHAR(64)
)"""


class HandlerFailure(Exception):
    """What the handler raises for an event whose data.object.fail is true."""


def connector(url: str) -> Tuple[Callable[[], Any], str]:
    """Return a function that opens a new connection to url, and its placeholder."""
    if url.startswith("sqlite:"):
        path = url[len("sqlite:"):]
        if not os.path.isabs(path):
            raise SystemExit("DATABASE_URL: want sqlite:<absolute path>, got %r" % url)
        # timeout is SQLite's busy timeout: a delivery waits that long for
        # another delivery's transaction instead of failing at once.
        return (lambda: sqlite3.connect(path, timeout=30)), "?"
    if url.startswith(("postgres://", "postgresql://")):
        try:
            import psycopg
        except ImportError:
            raise SystemExit("DATABASE_URL is PostgreSQL, and psycopg 3 is not installed (Debian: python3-psycopg)")
        return (lambda: psycopg.connect(url)), "%s"
    raise SystemExit("DATABASE_URL: want sqlite:<absolute path> or postgres://... (the Python kit has no MySQL dialect), got %r" % url)


def main() -> None:
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    port = int(os.environ.get("PORT", "9000"))
    secrets = [s.strip() for s in os.environ.get("WEBHOOK_SECRETS", "").split(",") if s.strip()]
    if not secrets:
        raise SystemExit("WEBHOOK_SECRETS is required: the endpoint's secrets, comma-separated, new first")
    connect, ph = connector(os.environ.get("DATABASE_URL", ""))

    def on_event(conn: Any, event: Event) -> None:
        obj = event.data.object if isinstance(event.data.object, dict) else {}
        object_id = obj.get("id")
        cur = conn.cursor()
        cur.execute(
            "INSERT INTO webhook_effects (event_id, type, api_version, account_relationship, object_id) "
            "VALUES (%s)" % ", ".join([ph] * 5),
            (
                event.id,
                event.type,
                event.api_version or "",
                event.account_relationship,
                object_id if isinstance(object_id, str) else None,
            ),
        )
        cur.close()
        if obj.get("fail") is True:
            # Raised after the insert: the kit rolls back both rows and
            # answers 500.
            raise HandlerFailure("data.object.fail is true")

    try:
        receiver = Receiver(
            secrets=secrets,
            connect=connect,
            handler=on_event,
            scheme=os.environ.get("WEBHOOK_SCHEME", "any") or "any",
        )
    except ConfigError as exc:
        raise SystemExit("WEBHOOK_SECRETS or WEBHOOK_SCHEME: %s" % exc)

    conn = connect()
    try:
        create_table(conn)
        cur = conn.cursor()
        cur.execute(EFFECTS_TABLE)
        cur.close()
        conn.commit()
    finally:
        conn.close()

    def app(environ: Dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") == "/webhooks":
            return receiver(environ, start_response)
        start_response("404 Not Found", [("Content-Type", "text/plain; charset=utf-8")])
        return [b"not found\n"]

    server = make_server("127.0.0.1", port, app, server_class=ThreadingWSGIServer, handler_class=QuietHandler)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    print("listening on 127.0.0.1:%d" % port, flush=True)
    stop.wait()
    server.shutdown()
    server.server_close()


class ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    """One thread per request, so that concurrent deliveries are concurrent."""

    daemon_threads = True
    # The probe sends many copies at once; the default backlog of 5 would
    # make some of them wait for a retransmission.
    request_queue_size = 128


class QuietHandler(WSGIRequestHandler):
    """No access log: the kit logs every refused delivery to stderr."""

    def log_message(self, format: str, *args: Any) -> None:
        pass


if __name__ == "__main__":
    main()
