"""processed_webhook_events: create it, record ids in it, purge it."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Optional

from .clock import Instant, as_utc
from .dialect import Connection, Dialect, Transaction, detect_dialect
from .errors import ConfigError, StoreError

#: How long to keep processed event ids when nobody resends deliveries by
#: hand. Automatic retries of one delivery span at most 5 days 2 hours (8
#: attempts, waits of 1 min to 3 days adding up to 4 days 14 hours, each
#: varied by up to 10 %), so 7 days covers every automatic retry with margin.
DEFAULT_RETENTION = timedelta(days=7)

#: How long to keep processed event ids when you resend deliveries by hand:
#: a replay may send an event up to 90 days old, the longest resend window,
#: and it carries the same id. An id is 36 characters, so 90 days of them is
#: cheap.
MANUAL_RESEND_RETENTION = timedelta(days=90)


def create_table(conn: Connection, dialect: Optional[Dialect] = None) -> None:
    """Create processed_webhook_events and its received_at index if they do not exist.

    ::

        CREATE TABLE processed_webhook_events (
          event_id    CHAR(36)  NOT NULL PRIMARY KEY,
          received_at TIMESTAMP NOT NULL
        );
        CREATE INDEX processed_webhook_events_received_at ON processed_webhook_events (received_at);

    It runs in a transaction of its own on ``conn`` and commits it.
    """
    d = dialect or detect_dialect(conn)
    tx = d.begin(conn)
    try:
        for statement in d.create_statements():
            try:
                tx.execute(statement)
            except Exception as exc:
                raise StoreError("create table: %s" % exc) from exc
        tx.commit()
    finally:
        tx.rollback()


def purge(
    conn: Connection,
    older_than: timedelta = DEFAULT_RETENTION,
    now: Instant = None,
    dialect: Optional[Dialect] = None,
) -> int:
    """Delete the ids received more than ``older_than`` before ``now``; return how many.

    Run it on a schedule (daily is plenty) with DEFAULT_RETENTION, or
    MANUAL_RESEND_RETENTION if you resend deliveries by hand. An id purged
    too early lets a late copy of its event run the handler again. ``now``
    is the current time by default. It runs in a transaction of its own on
    ``conn`` and commits it.
    """
    if not isinstance(older_than, timedelta):
        raise ConfigError("older_than must be a datetime.timedelta, such as DEFAULT_RETENTION")
    if older_than < timedelta(0):
        raise ConfigError("older_than must not be negative")
    d = dialect or detect_dialect(conn)
    before = as_utc(now) - older_than
    tx = d.begin(conn)
    try:
        try:
            n = tx.execute(d.purge_sql(), (d.time_arg(before),))
        except Exception as exc:
            raise StoreError("purge: %s" % exc) from exc
        tx.commit()
        return n
    finally:
        tx.rollback()


def record(tx: Transaction, event_id: str, now: datetime) -> bool:
    """Insert the event id in ``tx`` and report whether it is new.

    False means a copy of the event was already processed, or was being
    processed by a transaction that has committed since this one waited for
    it.
    """
    d = tx.dialect
    try:
        return tx.execute(d.insert_sql(), (event_id, d.time_arg(now))) == 1
    except Exception as exc:
        raise StoreError("record event id: %s" % exc) from exc
