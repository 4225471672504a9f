"""The replay transcript format (JSON Lines). Pure parsing.

A bad line raises `TranscriptError` naming its line number; the caller stops
there, having already processed (and stored) every line before it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, field_validator

from bot.config import Language, RoomSettings, explain
from bot.models import Role
from bot.repair import RepairedStr

MAX_LINE = 1_000_000


class TranscriptError(ValueError):
    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


# A transcript is text entering the core like a platform's messages: every str
# in it is repaired (bot.repair) before anything stores it.


class RoomLine(BaseModel):
    type: Literal["room"]
    room: RepairedStr = Field(min_length=1, max_length=200)
    language: Language | None = None
    roles: dict[Literal["owner", "reviewer"], list[RepairedStr]] = Field(default_factory=dict)
    # Checked here, before anything is stored: a bad value stops the replay at
    # this line instead of reaching the room.
    settings: RoomSettings = Field(default_factory=RoomSettings)

    @field_validator("roles", mode="before")
    @classmethod
    def _listify(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return {k: [v] if isinstance(v, str) else v for k, v in value.items()}
        return value


class MessageLine(BaseModel):
    type: Literal["message"]
    id: RepairedStr | None = Field(default=None, min_length=1, max_length=200)
    author: RepairedStr = Field(min_length=1, max_length=200)
    role: Role | None = None
    ts: datetime | None = None
    text: RepairedStr

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: Any) -> Any:
        return str(value) if isinstance(value, int) else value

    @field_validator("ts")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value


TranscriptLine = RoomLine | MessageLine


def parse_line(raw: str, line: int) -> TranscriptLine | None:
    """One line -> a room or message entry; None for a blank line."""
    if not raw.strip():
        return None
    if len(raw) > MAX_LINE:
        raise TranscriptError(line, f"line longer than {MAX_LINE} characters")
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise TranscriptError(line, f"invalid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise TranscriptError(line, "expected a JSON object")
    kind = data.get("type")
    try:
        if kind == "room":
            return RoomLine.model_validate(data)
        if kind == "message":
            return MessageLine.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "line"
        model = RoomLine if kind == "room" else MessageLine
        raise TranscriptError(line, f"{where}: {explain(first, model=model)}") from None
    raise TranscriptError(line, f"unknown type {str(kind)[:40]!r} (expected 'room' or 'message')")
