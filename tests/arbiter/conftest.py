"""Shared fixtures for the arbiter tests: fake LLM servers and a fake sleep."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # so `tests.fakes` imports whatever the rootdir setup
    sys.path.insert(0, str(ROOT))

from tests.arbiter.arbiter_helpers import Sleeps  # noqa: E402
from tests.fakes.llm_servers import FakeLLMServer  # noqa: E402


@pytest.fixture
async def llm() -> AsyncIterator[FakeLLMServer]:
    async with FakeLLMServer() as server:
        yield server


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()
