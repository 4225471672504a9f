"""Which channels are watched, who plays which role there, and room settings.

Settings resolve room -> channel -> global default (environment / TOML).
Lookups are cached (bounded) because they happen for every message; every
change made here goes through `invalidate*` so the cache never serves stale
bindings, and while other instances share the database (`share`) entries
also expire, so their changes arrive within `SHARED_MAX_AGE`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from bot.config import RETIRED, TUNABLE, Settings, usable_room_settings
from bot.lru import LRU
from bot.models import Role, RoomKey
from storage.base import Storage

log = logging.getLogger(__name__)

__all__ = ["TUNABLE", "ChannelDirectory", "ChannelInfo", "channel_scope"]


# With several instances, how stale a cached channel or room setting changed
# through another instance may be (seconds): one read per room this often.
SHARED_MAX_AGE = 2.0


def channel_scope(platform: str, channel: str) -> str:
    return f"{platform}:{channel}"


@dataclass(slots=True)
class ChannelInfo:
    watched: bool = False
    paused: bool = False
    owner: list[str] = field(default_factory=list)
    reviewer: list[str] = field(default_factory=list)
    approvers: list[str] = field(default_factory=list)
    settings: dict[str, Any] = field(default_factory=dict)

    def role_of(self, ids: list[str]) -> Role:
        if any(i in self.owner for i in ids):
            return Role.OWNER
        if any(i in self.reviewer for i in ids):
            return Role.REVIEWER
        return Role.USER


class ChannelDirectory:
    def __init__(self, settings: Settings, storage: Storage) -> None:
        self.storage = storage
        self.file = settings.file_config()
        self.defaults = settings.room_defaults()
        self.global_approvers = list(self.file.approvers)
        self._channels: LRU[str, ChannelInfo] = LRU(4096)
        self._rooms: LRU[str, dict[str, Any]] = LRU(4096)
        # room id -> the language set for that room or its channel, "" when
        # only the global default applies (the humans' language then wins).
        self._languages: LRU[str, str] = LRU(4096)

    def share(self, shared: bool) -> None:
        """Other instances share the database (or no longer do): what they change
        reaches this one's cache within `SHARED_MAX_AGE`; alone, every change
        comes through `invalidate*` and the cache keeps its entries."""
        age = SHARED_MAX_AGE if shared else None
        for cache in (self._channels, self._rooms, self._languages):
            cache.max_age = age

    async def get(self, platform: str, channel: str) -> ChannelInfo:
        key = channel_scope(platform, channel)
        info = self._channels.get(key)
        if info is None:
            info = await self._load(platform, channel)
            self._channels.put(key, info)
        return info

    async def _load(self, platform: str, channel: str) -> ChannelInfo:
        info = ChannelInfo(approvers=list(self.global_approvers))
        for binding in self.file.channels:
            if binding.platform == platform and binding.channel == channel:
                info.owner, info.reviewer = list(binding.owner), list(binding.reviewer)
                info.approvers += binding.approvers
        stored = await self.storage.get_bindings(platform, channel)
        info.owner = stored.get("owner", info.owner)
        info.reviewer = stored.get("reviewer", info.reviewer)
        scope = channel_scope(platform, channel)
        info.settings = await self.storage.get_settings("channel", scope)
        tunables, notes = usable_room_settings(info.settings)
        for note in notes:
            log.warning("stored setting of channel %s: %s", scope, note)
        info.settings = {
            k: v for k, v in info.settings.items() if k not in TUNABLE and k not in RETIRED
        } | tunables
        info.paused = bool(info.settings.get("paused", False))
        info.watched = bool(info.owner or info.reviewer or info.settings.get("watched"))
        return info

    async def room_settings(self, room: RoomKey) -> dict[str, Any]:
        values = self._rooms.get(room.id)
        if values is None:
            channel = await self.get(room.platform, room.channel)
            values = dict(self.defaults)
            values.update({k: v for k, v in channel.settings.items() if k in TUNABLE})
            room_values, notes = usable_room_settings(
                await self.storage.get_settings("room", room.id)
            )
            for note in notes:
                log.warning("stored setting of room %s: %s", room.id, note)
            values.update(room_values)
            self._rooms.put(room.id, values)
            configured = room_values.get("language", channel.settings.get("language"))
            self._languages.put(room.id, str(configured or ""))
        return values

    async def configured_language(self, room: RoomKey) -> str | None:
        """The `language` set on the room or its channel (a transcript's room line),
        not the global default: a configured language beats the humans' own."""
        configured = self._languages.get(room.id)
        if configured is None:  # never computed, or evicted apart from the values
            self._rooms.pop(room.id)
            await self.room_settings(room)
            configured = self._languages.get(room.id)
        return configured or None

    def invalidate(self, platform: str, channel: str) -> None:
        self._channels.pop(channel_scope(platform, channel))
        self._rooms.clear()  # room values embed the channel's
        self._languages.clear()

    def invalidate_room(self, room: RoomKey) -> None:
        self._rooms.pop(room.id)
        self._languages.pop(room.id)
