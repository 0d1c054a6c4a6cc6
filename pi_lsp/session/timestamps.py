"""Timestamps as pi writes and reads them.

Entries carry ISO-8601 strings with milliseconds and ``Z`` (JavaScript's ``Date.toISOString()``);
messages inside entries carry Unix milliseconds. Reading follows JavaScript's ``new Date(text)``
closely enough for every timestamp pi writes: anything unparseable is ``None`` (JavaScript's NaN).
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime, timedelta

_ISO = re.compile(
    r"^(?P<year>[+-]\d{6}|\d{4})-(?P<month>\d{2})-(?P<day>\d{2})"
    r"(?:T(?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:\.(?P<fraction>\d+))?)?"
    r"(?P<zone>Z|[+-]\d{2}:\d{2})?)?$"
)


def now_iso() -> str:
    """The current time as ``Date.toISOString()`` prints it: ``2026-05-02T09:14:03.127Z``."""
    return epoch_ms_to_iso(now_ms())


def now_ms() -> int:
    """The current time in Unix milliseconds (``Date.now()``)."""
    return time.time_ns() // 1_000_000


def epoch_ms_to_iso(epoch_ms: int) -> str:
    """Format Unix milliseconds as ``Date.toISOString()`` does."""
    moment = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{epoch_ms % 1000:03d}Z"


def file_name_timestamp(iso_timestamp: str) -> str:
    """The timestamp part of a session file name: ``:`` and ``.`` replaced by ``-``."""
    return iso_timestamp.replace(":", "-").replace(".", "-")


def iso_to_epoch_ms(text: object) -> int | None:
    """``new Date(text).getTime()`` for ISO date-time
    strings; ``None`` where JavaScript gives NaN."""
    if not isinstance(text, str):
        return None
    if len(text) == 24 and _TO_ISO_STRING.match(text):
        return _to_iso_string_epoch_ms(text)
    return _any_iso_epoch_ms(text)


def _any_iso_epoch_ms(text: str) -> int | None:
    match = _ISO.match(text)
    if not match:
        return None
    parts = match.groupdict()
    try:
        moment = datetime(
            int(parts["year"]),
            int(parts["month"]),
            int(parts["day"]),
            int(parts["hour"] or 0),
            int(parts["minute"] or 0),
            int(parts["second"] or 0),
            tzinfo=UTC,
        )
    except ValueError:
        return None
    milliseconds = int((parts["fraction"] or "0")[:3].ljust(3, "0"))
    epoch_ms = _utc_epoch_ms(moment) + milliseconds
    zone = parts["zone"]
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        epoch_ms -= sign * (int(zone[1:3]) * 60 + int(zone[4:6])) * 60_000
    elif not zone and parts["hour"] is not None:
        # JavaScript reads a date-time without a zone as local time.
        offset = datetime.fromtimestamp(epoch_ms / 1000).astimezone().utcoffset() or timedelta(0)
        epoch_ms -= int(offset.total_seconds() * 1000)
    return epoch_ms


_TO_ISO_STRING = re.compile(
    r"\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z"
)
"""What ``Date.toISOString()`` writes, nearly every timestamp of a session: the C parser reads it
(a tree view sorts the branches at each of hundreds of branch points by their time)."""


def _to_iso_string_epoch_ms(text: str) -> int | None:
    try:
        moment = datetime.fromisoformat(text)  # refuses what ``datetime()`` refuses (Feb 30)
    except ValueError:
        return None
    return _utc_epoch_ms(moment) + moment.microsecond // 1000


def _utc_epoch_ms(moment: datetime) -> int:
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1000
