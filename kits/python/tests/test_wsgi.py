"""The Receiver as a WSGI application, behind a real wsgiref server."""

from __future__ import annotations

import http.client
import io
import socketserver
import threading
import unittest
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional, Tuple
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from factuarea_webhooks import Receiver
from factuarea_webhooks.wsgi import request_headers

from .support import SQLiteDatabase, count, event_body, execute, factuarea_headers, new_id, quiet_logger


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


class _ThreadingServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class WSGITest(unittest.TestCase):
    def setUp(self) -> None:
        self.db = SQLiteDatabase()
        self.addCleanup(self.db.close)

        def on_event(conn: Any, event: Any) -> None:
            conn.execute("INSERT INTO effects (event_id) VALUES (?)", (event.id,))

        self.receiver = Receiver(secrets="whsec_test", connect=self.db.connect, handler=on_event, logger=quiet_logger())
        self.receiver.create_table()
        execute(self.db, "CREATE TABLE effects (event_id CHAR(36) NOT NULL)")
        self.server = make_server("127.0.0.1", 0, self.receiver, server_class=_ThreadingServer, handler_class=_Quiet)
        self.port = self.server.server_address[1]
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(thread.join)
        self.addCleanup(self.server.server_close)
        self.addCleanup(self.server.shutdown)

    def request(self, method: str, body: bytes = b"", headers: Optional[Dict[str, str]] = None) -> Tuple[int, str, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, "/factuarea/webhook", body=body, headers=headers or {})
            r = conn.getresponse()
            return r.status, r.read().decode("utf-8"), r
        finally:
            conn.close()

    def signed(self, body: bytes) -> Dict[str, str]:
        h = factuarea_headers(body, datetime.now(timezone.utc), "whsec_test")
        h["Content-Type"] = "application/json"
        return h

    def test_deliveries(self) -> None:
        event_id = new_id()
        body = event_body(event_id)
        self.assertEqual(self.request("POST", body, self.signed(body))[:2], (200, "processed\n"))
        self.assertEqual(self.request("POST", body, self.signed(body))[:2], (200, "already processed\n"))
        status, text, r = self.request("POST", body, {})
        self.assertEqual(status, 401, text)
        self.assertEqual(r.getheader("Content-Type"), "text/plain; charset=utf-8")
        status, text, r = self.request("GET")
        self.assertEqual((status, r.getheader("Allow")), (405, "POST"))
        self.assertEqual(self.request("POST", b"{", self.signed(b"{"))[0], 400)
        self.assertEqual(count(self.db, "effects", event_id), 1)

    def test_too_large_refused_before_reading(self) -> None:
        """A Content-Length over the limit is refused at once, without reading the body."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        self.addCleanup(conn.close)
        conn.putrequest("POST", "/factuarea/webhook")
        conn.putheader("Content-Length", str(self.receiver.max_body_bytes + 1))
        conn.endheaders()  # and no body: the answer comes anyway
        r = conn.getresponse()
        self.assertEqual(r.status, 413)
        self.assertIn("too large", r.read().decode())

    def test_environ(self) -> None:
        """What a server may hand over: no length, a terminated stream, a bad length."""
        body = event_body(new_id())
        headers = self.signed(body)
        environ_headers = {"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()}
        self.assertEqual(request_headers(environ_headers)["factuarea-signature"], headers["Factuarea-Signature"])

        def call(extra: Dict[str, Any]) -> Tuple[str, List[Tuple[str, str]], bytes]:
            got: Dict[str, Any] = {}

            def start_response(status: str, response_headers: List[Tuple[str, str]]) -> None:
                got["status"], got["headers"] = status, response_headers

            environ: Dict[str, Any] = {"REQUEST_METHOD": "POST", "wsgi.input": io.BytesIO(body)}
            environ.update(environ_headers)
            environ.update(extra)
            out = b"".join(self.receiver(environ, start_response))
            return got["status"], got["headers"], out

        self.assertEqual(call({"CONTENT_LENGTH": str(len(body))})[0], "200 OK")
        # Without a length the body is empty (PEP 3333), unless the server
        # says the stream ends with it.
        self.assertEqual(call({})[0], "401 Unauthorized")
        self.assertEqual(call({"wsgi.input_terminated": True})[2], b"already processed\n")
        status, response_headers, out = call({"CONTENT_LENGTH": "12a"})
        self.assertEqual((status, out), ("400 Bad Request", b"invalid Content-Length\n"))
        self.assertIn(("Content-Length", str(len(out))), response_headers)


if __name__ == "__main__":
    unittest.main()
