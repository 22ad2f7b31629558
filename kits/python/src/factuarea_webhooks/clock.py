"""Instants as the kit takes them: an aware datetime, unix seconds, or now."""

from __future__ import annotations

import math
import time
from datetime import datetime, timezone
from typing import Optional, Union

#: A moment: an aware datetime (a naive one is taken as UTC), unix seconds,
#: or None for the current time.
Instant = Optional[Union[datetime, int, float]]


def utc_now() -> datetime:
    """Return the current time as an aware UTC datetime: the default clock."""
    return datetime.now(timezone.utc)


def as_utc(at: Instant) -> datetime:
    """Return ``at`` as an aware UTC datetime."""
    if at is None:
        return utc_now()
    if isinstance(at, datetime):
        if at.tzinfo is None:
            return at.replace(tzinfo=timezone.utc)
        return at.astimezone(timezone.utc)
    return datetime.fromtimestamp(at, timezone.utc)


def unix_seconds(at: Instant) -> int:
    """Return ``at`` in whole unix seconds, rounded down as Go's Time.Unix does."""
    if at is None:
        return math.floor(time.time())
    if isinstance(at, datetime):
        return math.floor(as_utc(at).timestamp())
    return math.floor(at)
