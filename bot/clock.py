"""Time as a dependency, so tests and replays never wait for real seconds."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Protocol

from bot.models import utcnow


class Clock(Protocol):
    def now(self) -> datetime: ...


class SystemClock:
    def now(self) -> datetime:
        return utcnow()


class ManualClock:
    """A clock that moves only when told to (tests, replays)."""

    def __init__(self, start: datetime | None = None) -> None:
        self._now = start or utcnow()

    def now(self) -> datetime:
        return self._now

    def set(self, moment: datetime) -> None:
        self._now = moment

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)
