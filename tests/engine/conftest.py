from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from engine_world import World, make_world


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    w = await make_world(tmp_path / "t.db", quiet_close=False)
    try:
        yield w
    finally:
        await w.engine.drain()
        await w.storage.close()
