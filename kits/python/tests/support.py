"""What the tests share: the databases, a settable clock, signed deliveries."""

from __future__ import annotations

import atexit
import json
import logging
import os
import secrets
import shutil
import sqlite3
import tempfile
import threading
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, Optional

from factuarea_webhooks import sign, sign_standard

HERE = os.path.dirname(os.path.abspath(__file__))
KIT = os.path.dirname(HERE)

#: Signs the tests' deliveries; standard base64 after whsec_, so that it
#: serves both schemes.
SECRET = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
#: Another endpoint's secret.
OTHER_SECRET = "whsec_//jx6uPc1c7HwLmyq6Sdlo+IgXpzbGVeV1BJQjs0LSY="

#: The server the PostgreSQL tests create their database on.
PG_ADMIN_URL = os.environ.get("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")


def load_vectors(name: str) -> Any:
    with open(os.path.join(HERE, "testdata", name), encoding="utf-8") as f:
        vectors = json.load(f)["vectors"]
    if not vectors:
        raise AssertionError("no vectors in " + name)
    return vectors


def quiet_logger() -> logging.Logger:
    """A logger that records nothing unless a test asks with assertLogs."""
    log = logging.getLogger("factuarea_webhooks.test")
    log.propagate = False
    if not log.handlers:
        log.addHandler(logging.NullHandler())
    return log


def new_id() -> str:
    return str(uuid.uuid4())


def event_body(event_id: str, **object_fields: Any) -> bytes:
    """A compact company envelope for event_id, as the sender writes it."""
    obj: Dict[str, Any] = {"object": "invoice", "id": "01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42", "total": "1210.00"}
    obj.update(object_fields)
    return json.dumps(
        {
            "id": event_id,
            "type": "invoice.sent",
            "api_version": "2026-09-23",
            "created": 1790590561,
            "livemode": True,
            "test": False,
            "correlation_id": "01a0e783-aa84-7b48-8c63-1a5e9d2f4b70",
            "data": {"type": "invoice.sent", "object": obj},
        },
        separators=(",", ":"),
    ).encode("utf-8")


ACCOUNT_ENVELOPE = (
    b'{"id":"01a0e783-aae8-7c2d-9f15-2b7d4e6a8c31","type":"invoice.sent","api_version":"2026-09-23",'
    b'"created":1790590561,"livemode":false,"test":false,"correlation_id":null,'
    b'"account":{"id":"01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a00"},"account_relationship":"managed",'
    b'"company_id":"01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a11",'
    b'"data":{"type":"invoice.sent","object":{"object":"invoice","id":"01931b3e-7c4a-7f2e-9a8b-3c5d6e7f8a42",'
    b'"name":"Fusteria Mart\xc3\xad, S.L. \xe2\x80\x94 Girona"}}}'
)


def factuarea_headers(body: bytes, at: datetime, *keys: str) -> Dict[str, str]:
    return {"Factuarea-Signature": sign(int(at.timestamp()), body, *(keys or (SECRET,)))}


def standard_headers(event_id: str, body: bytes, at: datetime, *keys: str) -> Dict[str, str]:
    ts = int(at.timestamp())
    return {
        "webhook-id": event_id,
        "webhook-timestamp": str(ts),
        "webhook-signature": sign_standard(event_id, ts, body, *(keys or (SECRET,))),
    }


class Clock:
    """A settable clock for Receiver(now=...)."""

    def __init__(self, at: Optional[datetime] = None) -> None:
        self._lock = threading.Lock()
        self._at = at or datetime.now(timezone.utc)

    def now(self) -> datetime:
        with self._lock:
            return self._at

    def set(self, at: datetime) -> None:
        with self._lock:
            self._at = at

    def add(self, d: timedelta) -> None:
        with self._lock:
            self._at += d


class SQLiteDatabase:
    """A new SQLite file in a temporary directory.

    Each connection has a busy timeout, so that concurrent deliveries wait
    for the single writer, and foreign keys on, for the commit-failure test.
    """

    name = "sqlite"
    ph = "?"

    def __init__(self) -> None:
        self._dir = tempfile.mkdtemp(prefix="factuarea-py-")
        self.path = os.path.join(self._dir, "receiver.db")

    def connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=30)
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    def url(self) -> str:
        return "sqlite:" + self.path

    def close(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise AssertionError(
            "the PostgreSQL tests need psycopg 3 (Debian: apt-get install python3-psycopg; "
            "run them with /usr/bin/python3, which sees Debian's packages): %s" % exc
        ) from None
    return psycopg


class _TestDatabase:
    """One PostgreSQL database per test run, with a random name, dropped at exit."""

    _lock = threading.Lock()
    _url: Optional[str] = None
    _name: Optional[str] = None

    @classmethod
    def url(cls) -> str:
        with cls._lock:
            if cls._url is None:
                psycopg = _psycopg()
                name = "factuarea_py_" + secrets.token_hex(6)
                try:
                    with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as admin:
                        admin.execute('CREATE DATABASE "%s"' % name)
                except psycopg.OperationalError as exc:
                    raise AssertionError(
                        "the PostgreSQL tests need a server at %s (TEST_DATABASE_URL): %s" % (PG_ADMIN_URL, exc)
                    ) from None
                atexit.register(cls._drop, name)
                base = PG_ADMIN_URL.rsplit("/", 1)[0]
                cls._name, cls._url = name, base + "/" + name
            return cls._url

    @staticmethod
    def _drop(name: str) -> None:
        psycopg = _psycopg()
        with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
            admin.execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % name)


def new_postgres_database() -> str:
    """Create a database of its own (for a process under test) and return its URL.

    The caller drops it with drop_postgres_database.
    """
    psycopg = _psycopg()
    name = "factuarea_py_" + secrets.token_hex(6)
    with psycopg.connect(PG_ADMIN_URL, autocommit=True, connect_timeout=5) as admin:
        admin.execute('CREATE DATABASE "%s"' % name)
    return PG_ADMIN_URL.rsplit("/", 1)[0] + "/" + name + "?sslmode=disable"


def drop_postgres_database(url: str) -> None:
    name = url.rsplit("/", 1)[1].split("?")[0]
    _TestDatabase._drop(name)


class PostgresDatabase:
    """A schema of its own in the run's test database, dropped by close()."""

    name = "postgres"
    ph = "%s"

    def __init__(self) -> None:
        self._psycopg = _psycopg()
        self._url = _TestDatabase.url()
        self.schema = "t_" + secrets.token_hex(6)
        with self._psycopg.connect(self._url, autocommit=True) as conn:
            conn.execute("CREATE SCHEMA " + self.schema)

    def connect(self, **kwargs: Any) -> Any:
        return self._psycopg.connect(self._url, options="-c search_path=" + self.schema, **kwargs)

    def close(self) -> None:
        with self._psycopg.connect(self._url, autocommit=True) as conn:
            conn.execute("DROP SCHEMA %s CASCADE" % self.schema)


BACKENDS = {"sqlite": SQLiteDatabase, "postgres": PostgresDatabase}


def count(db: Any, table: str, event_id: Optional[str] = None) -> int:
    """Return the rows of table (for event_id when given), on a connection of its own."""
    conn = db.connect()
    try:
        cur = conn.cursor()
        if event_id is None:
            cur.execute("SELECT COUNT(*) FROM " + table)
        else:
            cur.execute("SELECT COUNT(*) FROM %s WHERE event_id = %s" % (table, db.ph), (event_id,))
        n = int(cur.fetchone()[0])
        cur.close()
        return n
    finally:
        conn.close()


def execute(db: Any, sql: str, params: tuple = ()) -> None:
    """Run one statement and commit it, on a connection of its own."""
    conn = db.connect()
    try:
        cur = conn.cursor()
        cur.execute(sql, params)
        cur.close()
        conn.commit()
    finally:
        conn.close()
