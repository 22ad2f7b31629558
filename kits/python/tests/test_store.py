"""create_table and purge on each database, and the connections they are given."""

from __future__ import annotations

import sqlite3
import sys
import unittest
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, List

from factuarea_webhooks import (
    DEFAULT_RETENTION,
    MANUAL_RESEND_RETENTION,
    ConfigError,
    Dialect,
    Receiver,
    UnknownDialect,
    create_table,
    detect_dialect,
    purge,
)

from .support import Clock, PostgresDatabase, SQLiteDatabase, count, event_body, factuarea_headers, new_id, quiet_logger

MADRID = timezone(timedelta(hours=2), "CEST")
AUCKLAND = timezone(timedelta(hours=12), "NZST")


class RetentionTest(unittest.TestCase):
    def test_retention(self) -> None:
        # The longest automatic retry span: 8 attempts, the 7 waits of the
        # schedule each 10 % longer.
        waits = [timedelta(minutes=m) for m in (1, 5, 30, 120, 720, 1440, 4320)]
        span = sum((w * 1.1 for w in waits), timedelta())
        self.assertLessEqual(span, timedelta(days=5, hours=2))
        self.assertGreater(DEFAULT_RETENTION, span)
        self.assertEqual(MANUAL_RESEND_RETENTION, timedelta(days=90))


class StoreTests:
    database: Callable[[], Any]
    dialect: Dialect
    assertEqual: Any
    assertRaises: Any
    addCleanup: Any

    def setUp(self) -> None:
        self.db = self.database()
        self.addCleanup(self.db.close)

    def connect(self) -> Any:
        conn = self.db.connect()
        self.addCleanup(conn.close)
        return conn

    def test_detect_dialect(self) -> None:
        self.assertEqual(detect_dialect(self.connect()), self.dialect)

    def test_create_table_schema(self) -> None:
        """The columns, by using them; and create_table runs again."""
        conn = self.connect()
        for _ in range(3):
            create_table(conn)
        ph = self.db.ph
        q = "INSERT INTO processed_webhook_events (event_id, received_at) VALUES (%s, %s)" % (ph, ph)
        cur = conn.cursor()
        cur.execute(q, ("01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31", "2026-09-28 10:16:01"))
        conn.commit()
        with self.assertRaises(Exception, msg="a second row with the same event_id"):
            cur.execute(q, ("01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31", "2026-09-28 10:16:01"))
        conn.rollback()
        with self.assertRaises(Exception, msg="a row without received_at"):
            cur.execute("INSERT INTO processed_webhook_events (event_id) VALUES ('01a0e783-aae8-7c2d-9f15-2b7d4e6a8c32')")
        conn.rollback()

    def test_purge(self) -> None:
        """Ids recorded at several ages, some by clocks in other zones; only those past the retention go."""
        conn = self.connect()
        create_table(conn)
        clock = Clock()
        receiver = Receiver(
            secrets="whsec_test", connect=self.db.connect, handler=lambda c, e: None, now=clock.now, logger=quiet_logger()
        )
        now = datetime.now(timezone.utc)
        ages = [
            ("8 days", (now - timedelta(days=8)).astimezone(AUCKLAND)),
            ("7 days and a minute", (now - timedelta(days=7, minutes=1)).astimezone(MADRID)),
            ("6 days 23 hours", (now - timedelta(days=7) + timedelta(hours=1)).astimezone(AUCKLAND)),
            ("1 day", (now - timedelta(days=1)).astimezone(MADRID)),
            ("now", now),
            ("91 days", now - timedelta(days=91)),
        ]
        ids: Dict[str, str] = {}
        for name, at in ages:
            clock.set(at)
            ids[name] = new_id()
            body = event_body(ids[name])
            r = receiver.handle("POST", factuarea_headers(body, at, "whsec_test"), body)
            self.assertEqual(r.status, 200, "%s: %s" % (name, r.body))

        def remaining() -> List[str]:
            return [name for name, _ in ages if count(self.db, "processed_webhook_events", ids[name]) == 1]

        self.assertEqual(purge(conn, MANUAL_RESEND_RETENTION), 1, "purge(90 days)")
        self.assertEqual(purge(conn, DEFAULT_RETENTION), 2, "purge(7 days)")
        self.assertEqual(remaining(), ["6 days 23 hours", "1 day", "now"])
        self.assertEqual(purge(conn), 0, "purge() defaults to 7 days")

        # Receiver.purge goes by the Receiver's clock: two days on, the
        # 6-days-23-hours id is past 7 days.
        clock.set(now + timedelta(days=2))
        self.assertEqual(receiver.purge(DEFAULT_RETENTION), 1)
        self.assertEqual(remaining(), ["1 day", "now"])
        # And purge takes an explicit now.
        self.assertEqual(purge(conn, DEFAULT_RETENTION, now=now + timedelta(days=8)), 2)

    def test_purge_bad_arguments(self) -> None:
        conn = self.connect()
        create_table(conn)
        for bad in (-timedelta(seconds=1), 7, "7 days"):
            with self.assertRaises(ConfigError, msg=repr(bad)):
                purge(conn, bad)  # type: ignore[arg-type]


class SQLiteStoreTest(StoreTests, unittest.TestCase):
    database = SQLiteDatabase
    dialect = Dialect.SQLITE

    def test_leaves_connection_mode_as_it_was(self) -> None:
        """create_table and purge on the customer's own connection restore its isolation level."""
        conn = sqlite3.connect(self.db.path)
        self.addCleanup(conn.close)
        conn.isolation_level = "DEFERRED"
        create_table(conn)
        purge(conn)
        self.assertEqual(conn.isolation_level, "DEFERRED")
        self.assertEqual(conn.in_transaction, False)

    @unittest.skipUnless(sys.version_info >= (3, 12), "sqlite3's autocommit attribute is Python 3.12 and later")
    def test_autocommit_false(self) -> None:
        """Python 3.12's autocommit=False keeps a transaction open: the kit still gets BEGIN IMMEDIATE."""
        opened: List[Any] = []

        def connect() -> Any:
            conn = sqlite3.connect(self.db.path, timeout=30, autocommit=False)  # type: ignore[call-arg]
            opened.append(conn)
            return conn

        conn = connect()
        create_table(conn)
        self.assertEqual(conn.autocommit, False)  # type: ignore[attr-defined]
        conn.close()
        receiver = Receiver(secrets="whsec_test", connect=connect, handler=lambda c, e: None, logger=quiet_logger())
        body = event_body(new_id())
        r = receiver.handle("POST", factuarea_headers(body, datetime.now(timezone.utc), "whsec_test"), body)
        self.assertEqual((r.status, r.body), (200, "processed\n"))
        self.assertEqual(count(self.db, "processed_webhook_events"), 1)


class PostgresStoreTest(StoreTests, unittest.TestCase):
    database = PostgresDatabase
    dialect = Dialect.POSTGRES

    def test_leaves_connection_idle(self) -> None:
        for autocommit in (False, True):
            conn = self.db.connect(autocommit=autocommit)
            self.addCleanup(conn.close)
            create_table(conn)
            purge(conn)
            self.assertEqual(conn.info.transaction_status, 0)
            self.assertEqual(conn.autocommit, autocommit)


class DetectDialectTest(unittest.TestCase):
    def test_unknown(self) -> None:
        with self.assertRaises(UnknownDialect) as cm:
            detect_dialect(object())
        self.assertIn("pass dialect=", str(cm.exception))


if __name__ == "__main__":
    unittest.main()
