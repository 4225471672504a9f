"""A small bounded mapping: caches must not grow with the number of rooms.

An entry may also be given a maximum age (`max_age`, seconds): caches of what
other processes can change (channel settings, when several instances share
the database) then reload it after that long instead of serving it for ever.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    def __init__(self, size: int, max_age: float | None = None) -> None:
        self.size = size
        self.max_age = max_age
        self._data: OrderedDict[K, tuple[V, float]] = OrderedDict()

    def get(self, key: K) -> V | None:
        entry = self._data.get(key)
        if entry is None:
            return None
        value, stored_at = entry
        if self.max_age is not None and time.monotonic() - stored_at > self.max_age:
            del self._data[key]
            return None
        self._data.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._data[key] = (value, time.monotonic())
        self._data.move_to_end(key)
        while len(self._data) > self.size:
            self._data.popitem(last=False)

    def pop(self, key: K) -> None:
        self._data.pop(key, None)

    def clear(self) -> None:
        self._data.clear()

    def __len__(self) -> int:
        return len(self._data)
