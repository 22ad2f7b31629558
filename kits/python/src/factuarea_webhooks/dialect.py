"""What differs between SQLite and PostgreSQL: SQL text and transactions.

The kit runs its own transaction on a DB-API connection: it begins it, and
commits or rolls it back. Python's drivers disagree on how: sqlite3 opens
transactions implicitly (and, in its default mode, only before a write, with
a lock taken late); psycopg opens one before the first statement unless the
connection is in autocommit mode, where nothing does. So each dialect says
how to begin, commit and roll back, whatever mode the connection is in.
"""

from __future__ import annotations

import enum
import sqlite3
from datetime import datetime
from typing import Any, List, Optional, Tuple

from .clock import as_utc
from .errors import HandlerFailed, StoreError, UnknownDialect

#: A DB-API 2 connection: sqlite3.Connection or psycopg.Connection.
Connection = Any

# libpq's PQtransactionStatus, as psycopg's conn.info.transaction_status.
_PQ_IDLE, _PQ_INTRANS, _PQ_INERROR = 0, 2, 3

# received_at on SQLite: fixed width, UTC, no zone, so that comparing two
# values as text (which is what SQLite does with a TIMESTAMP column holding
# text) orders them in time. It is also a format SQLite's date functions
# read, and the one the Go kit writes.
_SQLITE_TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f"

_CREATE_TABLE = """CREATE TABLE IF NOT EXISTS processed_webhook_events (
  event_id    CHAR(36)  NOT NULL PRIMARY KEY,
  received_at TIMESTAMP NOT NULL
)"""
_CREATE_INDEX = (
    "CREATE INDEX IF NOT EXISTS processed_webhook_events_received_at "
    "ON processed_webhook_events (received_at)"
)


class Dialect(enum.Enum):
    """The SQL dialect of the database that holds processed_webhook_events."""

    #: sqlite3 (SQLite 3.24 or later): ``?`` placeholders.
    SQLITE = "sqlite"
    #: psycopg 3: ``%s`` placeholders.
    POSTGRES = "postgres"

    @property
    def placeholder(self) -> str:
        """Return the driver's parameter placeholder."""
        return "?" if self is Dialect.SQLITE else "%s"

    def create_statements(self) -> List[str]:
        """Return the statements of create_table, as SPEC section 10 gives the table."""
        return [_CREATE_TABLE, _CREATE_INDEX]

    def insert_sql(self) -> str:
        """Record an event id, doing nothing when it is already there.

        The affected row count then tells a new event (1) from a repeat (0).
        """
        p = self.placeholder
        return (
            "INSERT INTO processed_webhook_events (event_id, received_at) "
            "VALUES (%s, %s) ON CONFLICT (event_id) DO NOTHING" % (p, p)
        )

    def purge_sql(self) -> str:
        """Delete the ids received before a moment."""
        return "DELETE FROM processed_webhook_events WHERE received_at < " + self.placeholder

    def time_arg(self, at: datetime) -> Any:
        """Return an aware datetime as the argument that stores or compares received_at.

        PostgreSQL gets a naive datetime in UTC: psycopg sends it as a
        timestamp without time zone, which the column keeps as it is (an
        aware one would be converted by the session's TimeZone). SQLite has
        no time type: it gets text in one fixed layout.
        """
        naive = as_utc(at).replace(tzinfo=None)
        if self is Dialect.SQLITE:
            return naive.strftime(_SQLITE_TIME_FORMAT)
        return naive

    def begin(self, conn: Connection) -> "Transaction":
        """Begin the kit's transaction on ``conn`` and return it."""
        tx = Transaction(self, conn)
        tx.begin()
        return tx


def detect_dialect(conn: Connection) -> Dialect:
    """Tell the dialect from the connection's driver: sqlite3 or psycopg 3.

    Raises UnknownDialect for any other driver, including a wrapper around
    one of these: pass the dialect explicitly then.
    """
    if isinstance(conn, sqlite3.Connection):
        return Dialect.SQLITE
    for cls in type(conn).__mro__:
        if cls.__module__.split(".")[0] == "psycopg":
            return Dialect.POSTGRES
    raise UnknownDialect(
        "cannot tell the SQL dialect of a %s.%s connection; pass dialect=Dialect.SQLITE or Dialect.POSTGRES"
        % (type(conn).__module__, type(conn).__qualname__)
    )


class Transaction:
    """The kit's transaction on one connection.

    On SQLite it takes the write lock up front (BEGIN IMMEDIATE), so that a
    second delivery of the same id waits, within the connection's busy
    timeout, for the first to commit, and then finds the id: it can never
    read a stale table and insert too. On PostgreSQL the primary key does
    it: the second insert waits for the first transaction.
    """

    def __init__(self, dialect: Dialect, conn: Connection) -> None:
        self.dialect = dialect
        self.conn = conn
        self._restore: Optional[Tuple[str, Any]] = None
        self._explicit = False
        self._open = False

    def begin(self) -> None:
        try:
            if self.dialect is Dialect.SQLITE:
                self._begin_sqlite()
            else:
                self._begin_postgres()
        except Exception as exc:
            self._restore_mode()
            if isinstance(exc, StoreError):
                raise
            raise StoreError("begin: %s" % exc) from exc
        self._open = True

    def _begin_sqlite(self) -> None:
        conn = self.conn
        # Python 3.12 and later: with autocommit=False, sqlite3 keeps a
        # transaction always open, which cannot be made IMMEDIATE; switching
        # to autocommit commits that (empty) transaction. Otherwise,
        # isolation_level=None stops sqlite3 from opening and committing
        # transactions behind the kit's back.
        autocommit = getattr(conn, "autocommit", None)
        if autocommit is False:
            self._restore = ("autocommit", False)
            conn.autocommit = True
        elif conn.in_transaction:
            raise StoreError("the connection is already in a transaction: commit or roll it back first")
        elif conn.isolation_level is not None:
            self._restore = ("isolation_level", conn.isolation_level)
            conn.isolation_level = None
        conn.execute("BEGIN IMMEDIATE")

    def _begin_postgres(self) -> None:
        conn = self.conn
        if conn.info.transaction_status != _PQ_IDLE:
            raise StoreError("the connection is already in a transaction: commit or roll it back first")
        # Without autocommit the driver begins before the first statement;
        # with it, nothing does, and the insert of the id would commit alone.
        if conn.autocommit:
            self._explicit = True
            self.execute("BEGIN")

    def execute(self, sql: str, params: Tuple[Any, ...] = ()) -> int:
        """Run one statement in the transaction and return its row count."""
        cur = self.conn.cursor()
        try:
            cur.execute(sql, params)
            return int(cur.rowcount)
        finally:
            cur.close()

    def check_open(self) -> None:
        """Raise HandlerFailed unless the transaction is still open and usable.

        A handler that committed would have committed the id on its own; one
        that caught a failed statement on PostgreSQL leaves an aborted
        transaction whose COMMIT would roll back silently and answer 200 for
        an effect that never happened.
        """
        if self.dialect is Dialect.SQLITE:
            if not self.conn.in_transaction:
                raise HandlerFailed("the handler ended the transaction (commit or rollback): leave that to the kit")
            return
        status = self.conn.info.transaction_status
        if status == _PQ_INERROR:
            raise HandlerFailed("a statement failed in the handler and PostgreSQL aborted the transaction")
        if status != _PQ_INTRANS:
            raise HandlerFailed("the handler ended the transaction (commit or rollback): leave that to the kit")

    def commit(self) -> None:
        try:
            if self.dialect is Dialect.SQLITE:
                self.conn.execute("COMMIT")
            elif self._explicit:
                self.execute("COMMIT")
            else:
                self.conn.commit()
        except Exception as exc:
            raise StoreError("commit: %s" % exc) from exc
        self._open = False
        self._restore_mode()

    def rollback(self) -> None:
        """Roll back unless committed; never raises a second error."""
        if not self._open:
            return
        self._open = False
        try:
            if self.dialect is Dialect.SQLITE:
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
            elif self._explicit:
                if self.conn.info.transaction_status != _PQ_IDLE:
                    self.execute("ROLLBACK")
            else:
                self.conn.rollback()
        except Exception:
            # The connection is broken; the database rolls back what it
            # had, and the caller reports the first error.
            pass
        self._restore_mode()

    def _restore_mode(self) -> None:
        if self._restore is not None:
            name, value = self._restore
            self._restore = None
            try:
                setattr(self.conn, name, value)
            except Exception:
                pass
