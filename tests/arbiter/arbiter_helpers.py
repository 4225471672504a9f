"""Builders shared by the arbiter tests (contexts, settings, a fake sleep)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from bot.arbiter.base import ArbitrationContext, ContextMessage, ContextTurn
from bot.config import Settings
from bot.models import Role, RoomKey, Status, Trigger

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)

OWNER_TEXT = (
    "STEP_DONE `src/auth/login.py`의 세션 만료 버그를 고쳤습니다. "
    "pytest tests/test_login.py 12개 통과, 로그 첨부했습니다."
)
REVIEWER_TEXT = (
    "NEEDS_CONTEXT `login.py:42`에서 토큰 갱신이 여전히 실패합니다. "
    "테스트가 만료 케이스를 다루지 않습니다."
)


class Sleeps:
    """Injected backoff sleep: records the delays, never waits."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def make_ctx(
    *,
    owner: str = OWNER_TEXT,
    reviewer: str = REVIEWER_TEXT,
    humans: list[str] | None = None,
    language: str = "ko",
    trigger: Trigger = Trigger.NO_PROGRESS,
    extra_turns: int = 0,
    **fields: Any,
) -> ArbitrationContext:
    """A small deadlock: one human request, alternating owner/reviewer turns."""
    humans = ["로그인 세션 만료 버그 고쳐줘"] if humans is None else humans
    msgs = [
        ContextMessage(role=Role.USER, author="alice", ts=T0 + timedelta(seconds=i), text=h)
        for i, h in enumerate(humans)
    ]
    turns: list[ContextTurn] = []
    start = T0 + timedelta(minutes=1)
    for i in range(extra_turns):
        role = Role.OWNER if i % 2 == 0 else Role.REVIEWER
        turns.append(
            ContextTurn(
                role=role,
                author=f"{role.value}-bot",
                started_at=start + timedelta(seconds=i),
                text=f"earlier turn {i}: 같은 주장을 반복합니다.",
            )
        )
    base = start + timedelta(seconds=extra_turns)
    turns.append(ContextTurn(role=Role.OWNER, author="owner-bot", started_at=base, text=owner))
    turns.append(
        ContextTurn(
            role=Role.REVIEWER,
            author="reviewer-bot",
            started_at=base + timedelta(seconds=1),
            text=reviewer,
            status=Status.NEEDS_CONTEXT,
        )
    )
    defaults: dict[str, Any] = {
        "room": RoomKey("console", "r1"),
        "language": language,
        "trigger": trigger,
        "evidence": {"similarity": 0.91, "compared": ["t3", "t5"]},
        "rounds": 3,
        "stalled_rounds": 2,
        "task_started_at": T0,
        "human_messages": msgs,
        "agent_turns": turns,
    }
    defaults.update(fields)
    return ArbitrationContext(**defaults)


def make_settings(**overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "config": None,
        "language": "ko",
        "arbiter_backend": "openai",
        "arbiter_model": "fake-model",
        "arbiter_api_key": "sk-test-secret",
        "arbiter_timeout": 2.0,
        "arbiter_retries": 2,
        "arbiter_concurrency": 4,
        "moa_allow_private": True,
    }
    values.update(overrides)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]
