"""The example receiver as a process, as the end-to-end test starts it, on each database."""

from __future__ import annotations

import http.client
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import unittest
from datetime import datetime, timezone
from typing import Any, Dict, List, Tuple

from .support import (
    ACCOUNT_ENVELOPE,
    KIT,
    OTHER_SECRET,
    SECRET,
    SQLiteDatabase,
    drop_postgres_database,
    event_body,
    factuarea_headers,
    new_id,
    new_postgres_database,
    standard_headers,
)

SERVER = os.path.join(KIT, "example", "server.py")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ExampleTests:
    """Start example/server.py, deliver to it, read webhook_effects."""

    assertEqual: Any
    assertIn: Any
    addCleanup: Any
    fail: Any

    def database_url(self) -> str:
        raise NotImplementedError

    def effects(self, event_id: str) -> List[Tuple[Any, ...]]:
        raise NotImplementedError

    def setUp(self) -> None:
        self.url = self.database_url()
        self.port = free_port()
        env = dict(os.environ)
        env.update(
            PORT=str(self.port),
            # Mid-rotation: the new secret first, the old one the tests sign with.
            WEBHOOK_SECRETS=OTHER_SECRET + "," + SECRET,
            WEBHOOK_SCHEME="any",
            DATABASE_URL=self.url,
            PYTHONPATH=os.path.join(KIT, "src"),
        )
        self.proc = subprocess.Popen(
            [sys.executable, SERVER], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.addCleanup(self._stop)
        ready, _, _ = select.select([self.proc.stdout], [], [], 30)
        line = self.proc.stdout.readline() if ready else ""  # type: ignore[union-attr]
        if line != "listening on 127.0.0.1:%d\n" % self.port:
            self.proc.kill()
            self.fail("the example did not start: stdout %r, stderr %r" % (line, self.proc.communicate()[1]))

    def _stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()

    def post(self, body: bytes, headers: Dict[str, str], path: str = "/webhooks") -> Tuple[int, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request("POST", path, body=body, headers=dict(headers, **{"Content-Type": "application/json"}))
            r = conn.getresponse()
            return r.status, r.read().decode("utf-8")
        finally:
            conn.close()

    def signed(self, body: bytes) -> Dict[str, str]:
        return factuarea_headers(body, datetime.now(timezone.utc))

    def test_example(self) -> None:
        event_id = new_id()
        body = event_body(event_id)
        self.assertEqual(self.post(body, self.signed(body)), (200, "processed\n"))
        self.assertEqual(self.post(body, self.signed(body)), (200, "already processed\n"))
        self.assertEqual(
            self.effects(event_id), [(event_id, "invoice.sent", "2026-09-23", None, "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42")]
        )

        # The account envelope, verified by the Standard Webhooks headers.
        account_id = "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31"
        now = datetime.now(timezone.utc)
        self.assertEqual(self.post(ACCOUNT_ENVELOPE, standard_headers(account_id, ACCOUNT_ENVELOPE, now)), (200, "processed\n"))
        self.assertEqual(self.effects(account_id)[0][3], "managed")

        # data.object.fail: the handler inserts, then raises; nothing stays.
        failing_id = new_id()
        failing = event_body(failing_id, fail=True)
        self.assertEqual(self.post(failing, self.signed(failing)), (500, "internal error\n"))
        self.assertEqual(self.effects(failing_id), [])

        # Concurrent copies of one event: one effect.
        copies_id = new_id()
        copies = event_body(copies_id)
        statuses: List[int] = []
        threads = [threading.Thread(target=lambda: statuses.append(self.post(copies, self.signed(copies))[0])) for _ in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(statuses, [200] * 10)
        self.assertEqual(len(self.effects(copies_id)), 1)

        self.assertEqual(self.post(body, {})[0], 401)
        self.assertEqual(self.post(b"{", self.signed(b"{"))[0], 400)
        self.assertEqual(self.post(body, self.signed(body), path="/other")[0], 404)

        # SIGTERM ends it.
        self.proc.send_signal(signal.SIGTERM)
        self.assertEqual(self.proc.wait(timeout=30), 0)


class SQLiteExampleTest(ExampleTests, unittest.TestCase):
    def database_url(self) -> str:
        self.db = SQLiteDatabase()
        self.addCleanup(self.db.close)
        return self.db.url()

    def effects(self, event_id: str) -> List[Tuple[Any, ...]]:
        import sqlite3

        conn = sqlite3.connect(self.db.path, timeout=30)
        try:
            q = "SELECT event_id, type, api_version, account_relationship, object_id FROM webhook_effects WHERE event_id = ?"
            return [tuple(r) for r in conn.execute(q, (event_id,))]
        finally:
            conn.close()


class PostgresExampleTest(ExampleTests, unittest.TestCase):
    def database_url(self) -> str:
        url = new_postgres_database()
        self.addCleanup(drop_postgres_database, url)
        return url

    def effects(self, event_id: str) -> List[Tuple[Any, ...]]:
        import psycopg

        with psycopg.connect(self.url) as conn:
            q = "SELECT event_id, type, api_version, account_relationship, object_id FROM webhook_effects WHERE event_id = %s"
            return [tuple(r) for r in conn.execute(q, (event_id,))]


if __name__ == "__main__":
    unittest.main()
