"""Gateway payloads for tests, built from the JSON fixtures (shaped like Discord's docs)."""

from __future__ import annotations

import copy
import itertools
import json
import time
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"

GUILD = "1000"
CHANNEL = "1100"  # watched: owner/reviewer bound here
OTHER_CHANNEL = "1200"  # not watched
THREAD = "1101"  # a thread under CHANNEL
BOT = "900"
APP = "901"
OWNER = "2001"
REVIEWER = "2002"
STRANGER_BOT = "2003"
ALICE = "3001"  # the human who starts the task
ADMIN = "3002"  # has Manage Server
MALLORY = "3003"  # a member who is neither

MEMBER_PERMS = "3072"  # VIEW_CHANNEL | SEND_MESSAGES
ADMIN_PERMS = str(3072 | (1 << 5))  # + MANAGE_GUILD

_ids = itertools.count(1)
_EPOCH_MS = 1420070400000


def load(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def next_id() -> str:
    """A snowflake of now, so message.created_at is the real time (turn timing uses it)."""
    return str(((int(time.time() * 1000) - _EPOCH_MS) << 22) + (next(_ids) % 4096))


def user(user_id: str, *, bot: bool = False) -> dict[str, Any]:
    names = {OWNER: "owner-bot", REVIEWER: "reviewer-bot", STRANGER_BOT: "other-bot",
             ALICE: "alice", ADMIN: "admin", MALLORY: "mallory", BOT: "tribunal"}
    data: dict[str, Any] = {"id": user_id, "username": names.get(user_id, f"u{user_id}"),
                            "discriminator": "0", "global_name": None, "avatar": None}
    if bot:
        data["bot"] = True
    return data


def guild_create() -> dict[str, Any]:
    return load("guild_create.json")


def message(
    text: str,
    *,
    author: str = ALICE,
    bot: bool | None = None,
    channel: str = THREAD,
    message_id: str | None = None,
) -> dict[str, Any]:
    data = load("message_create.json")
    is_bot = bot if bot is not None else author in (OWNER, REVIEWER, STRANGER_BOT, BOT)
    data.update(id=message_id or next_id(), channel_id=channel, content=text,
                author=user(author, bot=is_bot))
    return data


def _with_member(data: dict[str, Any], user_id: str, permissions: str) -> dict[str, Any]:
    data["member"]["user"] = user(user_id)
    data["member"]["permissions"] = permissions
    return data


def _in_channel(data: dict[str, Any], channel: str) -> None:
    data["channel_id"] = channel
    if channel != THREAD:
        data["channel"] = {"id": channel, "type": 0, "name": "agents", "guild_id": GUILD,
                           "position": 0, "permission_overwrites": [], "nsfw": False,
                           "parent_id": None, "flags": 0, "rate_limit_per_user": 0}


def button_click(
    stored_message: dict[str, Any],
    custom_id: str,
    *,
    clicker: str = ALICE,
    permissions: str = MEMBER_PERMS,
) -> dict[str, Any]:
    """A component interaction on a message the fake server stored when we posted it."""
    data = _with_member(load("interaction_component.json"), clicker, permissions)
    data.update(id=next_id(), token=f"tok-{next_id()}", message=copy.deepcopy(stored_message))
    data["data"]["custom_id"] = custom_id
    _in_channel(data, stored_message["channel_id"])
    return data


def slash(
    sub: str,
    options: dict[str, Any] | None = None,
    *,
    invoker: str = ALICE,
    permissions: str = MEMBER_PERMS,
    channel: str = THREAD,
) -> dict[str, Any]:
    """`/arbiter <sub> [options]` as an APPLICATION_COMMAND interaction."""
    data = _with_member(load("interaction_command.json"), invoker, permissions)
    data.update(id=next_id(), token=f"tok-{next_id()}")
    opts = [{"name": k, "type": 4 if isinstance(v, int) else 3, "value": v}
            for k, v in (options or {}).items()]
    data["data"]["options"] = [{"name": sub, "type": 1, "options": opts}]
    _in_channel(data, channel)
    return data
