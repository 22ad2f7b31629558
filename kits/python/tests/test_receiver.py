"""The Receiver on each database: the answer table, repeats, rollbacks, concurrency."""

from __future__ import annotations

import json
import threading
import time
import unittest
from datetime import timedelta
from typing import Any, Callable, Dict, List, Optional

from factuarea_webhooks import (
    DEFAULT_MAX_BODY_BYTES,
    Dialect,
    Event,
    Receiver,
    Response,
    create_table,
    sign,
)

from .support import (
    ACCOUNT_ENVELOPE,
    OTHER_SECRET,
    SECRET,
    Clock,
    PostgresDatabase,
    SQLiteDatabase,
    count,
    event_body,
    execute,
    factuarea_headers,
    new_id,
    quiet_logger,
    standard_headers,
)


class ReceiverTests:
    """The suite; each subclass runs it on one database."""

    database: Callable[[], Any]
    dialect: Dialect

    # unittest.TestCase's methods, for the type checker.
    assertEqual: Any
    assertIn: Any
    assertNotIn: Any
    assertTrue: Any
    assertFalse: Any
    assertIsNotNone: Any
    subTest: Any
    addCleanup: Any
    assertLogs: Any
    fail: Any

    def setUp(self) -> None:
        self.db = self.database()
        self.addCleanup(self.db.close)
        self.clock = Clock()
        self.runs = 0
        self.runs_lock = threading.Lock()
        self.on_event: Callable[[Any, Event], None] = self.record_effect
        conn = self.db.connect()
        try:
            for _ in range(2):  # it can run again
                create_table(conn)
        finally:
            conn.close()
        execute(self.db, "CREATE TABLE effects (event_id CHAR(36) NOT NULL)")
        self.receiver = self.new_receiver()

    def new_receiver(self, **kwargs: Any) -> Receiver:
        args: Dict[str, Any] = dict(
            secrets=[SECRET], connect=self.db.connect, handler=self.handler, now=self.clock.now, logger=quiet_logger()
        )
        args.update(kwargs)
        return Receiver(**args)

    def handler(self, conn: Any, event: Event) -> None:
        with self.runs_lock:
            self.runs += 1
        self.on_event(conn, event)

    def record_effect(self, conn: Any, event: Event) -> None:
        cur = conn.cursor()
        cur.execute("INSERT INTO effects (event_id) VALUES (%s)" % self.db.ph, (event.id,))
        cur.close()

    def deliver(self, body: bytes, headers: Optional[Dict[str, str]] = None, method: str = "POST") -> Response:
        if headers is None:
            headers = factuarea_headers(body, self.clock.now())
        return self.receiver.handle(method, headers, body)

    def assert_answer(self, r: Response, status: int, body: str) -> None:
        self.assertEqual((r.status, r.body), (status, body + "\n"), "got %d %r, want %d %r" % (r.status, r.body, status, body))

    # The recipe.

    def test_concurrent_deliveries(self) -> None:
        """One event delivered 16 times at once: all answer 200, the handler runs once."""

        def slow(conn: Any, event: Event) -> None:
            # Hold the transaction open a moment so that the other copies
            # arrive while the first is still uncommitted.
            time.sleep(0.02)
            self.record_effect(conn, event)

        self.on_event = slow
        copies = 16
        event_id = new_id()
        body = event_body(event_id)
        start = threading.Barrier(copies)
        answers: List[Optional[Response]] = [None] * copies

        def one(i: int) -> None:
            headers = factuarea_headers(body, self.clock.now())
            headers["Factuarea-Delivery-Id"] = "delivery-%d" % i
            start.wait()
            answers[i] = self.receiver.handle("POST", headers, body)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(copies)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for i, r in enumerate(answers):
            self.assertIsNotNone(r)
            assert r is not None
            self.assertEqual(r.status, 200, "copy %d: got %d %r, want 200" % (i, r.status, r.body))
        bodies = sorted(r.body for r in answers if r is not None)
        self.assertEqual(bodies, ["already processed\n"] * (copies - 1) + ["processed\n"])
        self.assertEqual(self.runs, 1, "handler runs")
        self.assertEqual(count(self.db, "effects", event_id), 1, "effects")
        self.assertEqual(count(self.db, "processed_webhook_events", event_id), 1, "processed ids")

    def test_repeat(self) -> None:
        event_id = new_id()
        self.assert_answer(self.deliver(event_body(event_id)), 200, "processed")
        self.clock.add(timedelta(hours=1))
        self.assert_answer(self.deliver(event_body(event_id)), 200, "already processed")
        self.assertEqual(self.runs, 1)
        # Another event about the same invoice has its own id: not a repeat.
        self.assert_answer(self.deliver(event_body(new_id())), 200, "processed")
        self.assertEqual(self.runs, 2)

    def test_retry_after_failure(self) -> None:
        """A handler that fails once: 500 leaves nothing, not even the id; the retry runs it again."""

        def flaky(conn: Any, event: Event) -> None:
            # The effect is written before the failure, so the test shows
            # that the rollback removes it.
            self.record_effect(conn, event)
            if self.runs == 1:
                raise RuntimeError("the ledger is locked")

        self.on_event = flaky
        event_id = new_id()
        body = event_body(event_id)
        with self.assertLogs(quiet_logger(), "ERROR") as logs:
            r = self.deliver(body)
        self.assert_answer(r, 500, "internal error")
        self.assertIn("the ledger is locked", "\n".join(logs.output), "the log says why")
        self.assertIn("RuntimeError", "\n".join(logs.output), "the log has the traceback")
        self.assertEqual(count(self.db, "effects", event_id), 0)
        self.assertEqual(count(self.db, "processed_webhook_events", event_id), 0)

        self.clock.add(timedelta(minutes=1))  # the first wait of the schedule
        self.assert_answer(self.deliver(body), 200, "processed")
        self.clock.add(timedelta(minutes=1))
        self.assert_answer(self.deliver(body), 200, "already processed")
        self.assertEqual(self.runs, 2, "handler runs: the failure and the retry")
        self.assertEqual(count(self.db, "effects", event_id), 1)

    def test_commit_fails(self) -> None:
        """A foreign key checked only at commit: 500, and the id is not recorded."""
        execute(self.db, "CREATE TABLE parents (id INTEGER PRIMARY KEY)")
        execute(
            self.db,
            "CREATE TABLE children (parent_id INTEGER REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED)",
        )

        def orphan(conn: Any, event: Event) -> None:
            conn.cursor().execute("INSERT INTO children (parent_id) VALUES (42)")

        self.on_event = orphan
        event_id = new_id()
        self.assert_answer(self.deliver(event_body(event_id)), 500, "internal error")
        self.assertEqual(self.runs, 1)
        self.assertEqual(count(self.db, "processed_webhook_events", event_id), 0)
        self.assertEqual(count(self.db, "children"), 0)
        # The connection of the failed delivery is gone, and the next one
        # finds the database usable.
        self.on_event = self.record_effect
        self.assert_answer(self.deliver(event_body(event_id)), 200, "processed")

    def test_handler_ends_transaction(self) -> None:
        """A handler that commits on its own is a bug the kit reports with a 500."""
        self.on_event = lambda conn, event: conn.commit()
        self.assert_answer(self.deliver(event_body(new_id())), 500, "internal error")

    def test_refusals(self) -> None:
        """Every refusal: the status, a body that says which check failed, no run, no id."""
        self.on_event = self.record_effect
        now = self.clock.now()
        event_id = new_id()
        good = event_body(event_id)

        def signed(body: bytes) -> Dict[str, str]:
            return factuarea_headers(body, now)

        big = b'{"id":"%s","type":"invoice.sent","pad":"%s"}' % (event_id.encode(), b"x" * DEFAULT_MAX_BODY_BYTES)
        cases = [
            ("no signature", "POST", good, {}, 401, "header is missing"),
            ("wrong secret", "POST", good, factuarea_headers(good, now, OTHER_SECRET), 401, "no v1 signature matches"),
            ("body changed after signing", "POST", good + b" ", signed(good), 401, "no v1 signature matches"),
            ("an hour old", "POST", good, factuarea_headers(good, now - timedelta(hours=1)), 401, "outside the tolerance"),
            ("from the future", "POST", good, factuarea_headers(good, now + timedelta(minutes=10)), 401, "outside the tolerance"),
            ("garbage header", "POST", good, {"Factuarea-Signature": "t=abc,v1=zz"}, 401, "no valid timestamp"),
            ("not JSON", "POST", good[:40], signed(good[:40]), 400, "invalid event"),
            ("not UTF-8", "POST", b'{"id":"\xff"}', signed(b'{"id":"\xff"}'), 400, "invalid event"),
            ("array", "POST", b"[]", signed(b"[]"), 400, "invalid event"),
            ("no id", "POST", b'{"type":"invoice.sent"}', signed(b'{"type":"invoice.sent"}'), 400, "no id"),
            ("uppercase id", "POST", good.replace(event_id.encode(), event_id.upper().encode()),
             signed(good.replace(event_id.encode(), event_id.upper().encode())), 400, "not a canonical lowercase UUID"),
            ("no type", "POST", b'{"id":"%s"}' % event_id.encode(), signed(b'{"id":"%s"}' % event_id.encode()), 400, "no type"),
            ("GET", "GET", b"", {}, 405, "not allowed"),
            ("PUT", "PUT", good, signed(good), 405, "not allowed"),
            ("lowercase post", "post", good, signed(good), 405, "not allowed"),
            ("too large", "POST", big, signed(big), 413, "too large"),
        ]
        for name, method, body, headers, status, in_body in cases:
            with self.subTest(name):
                r = self.receiver.handle(method, headers, body)
                self.assertEqual(r.status, status, "got %d %r, want %d" % (r.status, r.body, status))
                self.assertIn(in_body, r.body)
                self.assertIn(("Content-Type", "text/plain; charset=utf-8"), r.headers)
                if status == 405:
                    self.assertIn(("Allow", "POST"), r.headers)
        self.assertEqual(self.runs, 0, "handler runs")
        self.assertEqual(count(self.db, "processed_webhook_events"), 0, "processed ids")

    def test_handler_sees_event(self) -> None:
        """The parsed account envelope, the headers, and a transaction that holds the id.

        The endpoint is mid-rotation: the Receiver knows the new and the old
        secret, and the sender still signs with the old one.
        """
        seen: Dict[str, Any] = {}

        def look(conn: Any, event: Event) -> None:
            cur = conn.cursor()
            cur.execute("SELECT COUNT(*) FROM processed_webhook_events WHERE event_id = %s" % self.db.ph, (event.id,))
            seen["in_tx"] = cur.fetchone()[0]
            seen["event"] = event

        self.on_event = look
        self.receiver = self.new_receiver(secrets=[OTHER_SECRET, SECRET])
        event_id = "01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31"
        headers = factuarea_headers(ACCOUNT_ENVELOPE, self.clock.now())
        headers.update(
            {
                "Factuarea-Event-Id": event_id,
                "Factuarea-Event-Type": "invoice.sent",
                "Factuarea-Delivery-Id": "01a0e783-abe2-7a3f-b5d8-4e9a6c1b7d23",
                "Idempotency-Key": event_id,
                "Factuarea-Account-Relationship": "managed",
            }
        )
        self.assert_answer(self.receiver.handle("POST", headers, ACCOUNT_ENVELOPE), 200, "processed")
        self.assertEqual(seen["in_tx"], 1, "id rows seen in the handler's transaction")
        ev: Event = seen["event"]
        self.assertEqual(ev.id, event_id)
        self.assertEqual(ev.account.id if ev.account else None, "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a00")
        self.assertEqual(ev.headers.delivery_id, "01a0e783-abe2-7a3f-b5d8-4e9a6c1b7d23")
        self.assertEqual(ev.headers.account_relationship, "managed")
        self.assertEqual(ev.headers.idempotency_key, event_id)
        self.assertEqual(ev.raw, ACCOUNT_ENVELOPE)

    # The two schemes.

    def test_standard_webhooks(self) -> None:
        """The Standard Webhooks headers verify a delivery, and dedupe with Factuarea's copy."""
        event_id = new_id()
        body = event_body(event_id)
        self.assert_answer(self.deliver(body, standard_headers(event_id, body, self.clock.now())), 200, "processed")
        self.assert_answer(self.deliver(body), 200, "already processed")
        self.assertEqual(self.runs, 1)

    def test_scheme_any_does_not_fall_back(self) -> None:
        """A present but wrong Factuarea-Signature is refused, even beside valid Standard Webhooks headers."""
        event_id = new_id()
        body = event_body(event_id)
        headers = standard_headers(event_id, body, self.clock.now())
        headers["Factuarea-Signature"] = sign(int(self.clock.now().timestamp()), body, OTHER_SECRET)
        r = self.deliver(body, headers)
        self.assertEqual(r.status, 401, r.body)
        self.assertIn("no v1 signature matches", r.body)
        headers["Factuarea-Signature"] = ""
        self.assertEqual(self.deliver(body, headers).status, 401, "an empty Factuarea-Signature is present")
        self.assertEqual(self.runs, 0)

    def test_scheme_factuarea(self) -> None:
        self.receiver = self.new_receiver(scheme="factuarea")
        event_id = new_id()
        body = event_body(event_id)
        r = self.deliver(body, standard_headers(event_id, body, self.clock.now()))
        self.assertEqual(r.status, 401, r.body)
        self.assertIn("header is missing", r.body)
        self.assert_answer(self.deliver(body), 200, "processed")

    def test_scheme_standard(self) -> None:
        self.receiver = self.new_receiver(scheme="standard")
        event_id = new_id()
        body = event_body(event_id)
        r = self.deliver(body)  # Factuarea-Signature only
        self.assertEqual(r.status, 401, r.body)
        self.assertIn("missing", r.body)
        now = self.clock.now()
        cases = [
            ("wrong secret", standard_headers(event_id, body, now, OTHER_SECRET), 401, "no v1 signature matches"),
            ("an hour old", standard_headers(event_id, body, now - timedelta(hours=1)), 401, "outside the tolerance"),
            ("webhook-id of another event", standard_headers(new_id(), body, now), 400, "webhook-id is not the body's id"),
        ]
        for name, headers, status, in_body in cases:
            with self.subTest(name):
                r = self.deliver(body, headers)
                self.assertEqual(r.status, status, r.body)
                self.assertIn(in_body, r.body)
        self.assertEqual(self.runs, 0)
        # A rotation: two entries, the new secret first; the Receiver knows the old one.
        self.assert_answer(self.deliver(body, standard_headers(event_id, body, now, OTHER_SECRET, SECRET)), 200, "processed")

    # Connections.

    def test_connection_per_delivery(self) -> None:
        """Each delivery opens its own connection, and the Receiver closes it."""
        opened: List[Any] = []

        def connect() -> Any:
            conn = self.db.connect()
            opened.append(conn)
            return conn

        self.receiver = self.new_receiver(connect=connect)
        self.deliver(event_body(new_id()))
        self.deliver(event_body(new_id()))
        self.assertEqual(len(opened), 2)
        for conn in opened:
            with self.assertRaises(Exception, msg="the connection is still open"):
                conn.cursor().execute("SELECT 1")

    def test_connection_in_a_transaction(self) -> None:
        """A factory that leaves a transaction open gets a 500, and nothing commits."""

        def connect() -> Any:
            conn = self.db.connect()
            if self.dialect is Dialect.SQLITE:
                conn.isolation_level = None
                conn.execute("BEGIN")
            else:
                conn.cursor().execute("SELECT 1")
            return conn

        self.receiver = self.new_receiver(connect=connect)
        event_id = new_id()
        with self.assertLogs(quiet_logger(), "ERROR") as logs:
            self.assert_answer(self.deliver(event_body(event_id)), 500, "internal error")
        self.assertIn("already in a transaction", "\n".join(logs.output))
        self.assertEqual(self.runs, 0)
        self.assertEqual(count(self.db, "processed_webhook_events", event_id), 0)

    def test_connect_fails(self) -> None:
        def connect() -> Any:
            raise OSError("no route to the database")

        self.receiver = self.new_receiver(connect=connect)
        with self.assertLogs(quiet_logger(), "ERROR") as logs:
            self.assert_answer(self.deliver(event_body(new_id())), 500, "internal error")
        self.assertIn("connect: no route to the database", "\n".join(logs.output))

    def test_receiver_create_table_and_purge(self) -> None:
        self.receiver.create_table()
        self.deliver(event_body(new_id()))
        self.assertEqual(self.receiver.purge(timedelta(0)), 0, "an id received now is not older than now")
        self.clock.add(timedelta(seconds=1))
        self.assertEqual(self.receiver.purge(timedelta(0)), 1)


class SQLiteReceiverTest(ReceiverTests, unittest.TestCase):
    database = SQLiteDatabase
    dialect = Dialect.SQLITE

    def test_without_busy_timeout_sqlite_refuses_with_500(self) -> None:
        """No busy timeout: a delivery that finds the writer busy answers 500 (and is retried), never 200 twice."""
        self.receiver = self.new_receiver(connect=lambda: __import__("sqlite3").connect(self.db.path, timeout=0))
        holder = self.db.connect()
        holder.isolation_level = None
        holder.execute("BEGIN IMMEDIATE")
        try:
            self.assert_answer(self.deliver(event_body(new_id())), 500, "internal error")
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        self.assertEqual(self.runs, 0)

    def test_failed_statement_caught_by_handler(self) -> None:
        """On SQLite a failed statement leaves the transaction usable: a handler may catch it."""

        def careful(conn: Any, event: Event) -> None:
            try:
                conn.execute("INSERT INTO no_such_table VALUES (1)")
            except Exception:
                pass
            self.record_effect(conn, event)

        self.on_event = careful
        event_id = new_id()
        self.assert_answer(self.deliver(event_body(event_id)), 200, "processed")
        self.assertEqual(count(self.db, "effects", event_id), 1)


class PostgresReceiverTest(ReceiverTests, unittest.TestCase):
    database = PostgresDatabase
    dialect = Dialect.POSTGRES

    def test_failed_statement_caught_by_handler(self) -> None:
        """A handler that catches a failed statement leaves an aborted transaction: 500, nothing recorded.

        psycopg's commit() of an aborted transaction rolls back without an
        error: without the kit's check this would answer 200 for an effect
        that never happened, and the sender would not retry.
        """

        def careless(conn: Any, event: Event) -> None:
            self.record_effect(conn, event)
            try:
                conn.execute("INSERT INTO no_such_table VALUES (1)")
            except Exception:
                pass

        self.on_event = careless
        event_id = new_id()
        self.assert_answer(self.deliver(event_body(event_id)), 500, "internal error")
        self.assertEqual(count(self.db, "processed_webhook_events", event_id), 0)
        self.assertEqual(count(self.db, "effects", event_id), 0)

    def test_savepoint_in_handler(self) -> None:
        """psycopg's conn.transaction() inside the handler is a savepoint of the kit's transaction."""

        def nested(conn: Any, event: Event) -> None:
            self.record_effect(conn, event)
            try:
                with conn.transaction():
                    conn.execute("INSERT INTO no_such_table VALUES (1)")
            except Exception:
                pass

        self.on_event = nested
        event_id = new_id()
        self.assert_answer(self.deliver(event_body(event_id)), 200, "processed")
        self.assertEqual(count(self.db, "effects", event_id), 1)

    def test_autocommit_connection(self) -> None:
        """A connection in autocommit mode still gets one transaction: a failure rolls back both rows."""
        self.receiver = self.new_receiver(connect=lambda: self.db.connect(autocommit=True))

        def failing(conn: Any, event: Event) -> None:
            self.record_effect(conn, event)
            if json.loads(event.raw)["data"]["object"].get("fail"):
                raise RuntimeError("fail")

        self.on_event = failing
        event_id = new_id()
        self.assert_answer(self.deliver(event_body(event_id, fail=True)), 500, "internal error")
        self.assertEqual(count(self.db, "effects", event_id), 0)
        self.assertEqual(count(self.db, "processed_webhook_events", event_id), 0)
        self.assert_answer(self.deliver(event_body(event_id)), 200, "processed")
        self.assert_answer(self.deliver(event_body(event_id)), 200, "already processed")
        self.assertEqual(count(self.db, "effects", event_id), 1)

    def test_pool(self) -> None:
        """A psycopg ConnectionPool: concurrent copies of one id, one effect; the pool's connections stay usable."""
        from psycopg_pool import ConnectionPool

        pool = ConnectionPool(self.db._url, kwargs={"options": "-c search_path=" + self.db.schema}, min_size=1, max_size=4, open=True)
        self.addCleanup(pool.close)
        self.receiver = self.new_receiver(connect=None, pool=pool)
        event_id = new_id()
        body = event_body(event_id, fail=True)

        def failing(conn: Any, event: Event) -> None:
            self.record_effect(conn, event)
            if self.runs == 1:
                raise RuntimeError("fail")

        self.on_event = failing
        self.assert_answer(self.deliver(body), 500, "internal error")
        answers: List[int] = []
        threads = [threading.Thread(target=lambda: answers.append(self.deliver(body).status)) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(answers, [200] * 8)
        self.assertEqual(self.runs, 2)
        self.assertEqual(count(self.db, "effects", event_id), 1)
        with pool.connection() as conn:
            self.assertEqual(conn.info.transaction_status, 0, "a connection back in the pool is idle")


if __name__ == "__main__":
    unittest.main()
