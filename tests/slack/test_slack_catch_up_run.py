"""Catch-up after downtime: messages posted to Slack while `tribunal run` was
down (in an existing thread and in a new one) are judged after it restarts,
in order, once. Real process, real HTTP to the fake Web API."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.slack_api import FakeSlackAPI
from tests.slack.conftest import CHANNEL, message_event
from tests.slack.test_slack_crash_run import Run, rows
from tests.slack.test_slack_e2e_run import wait_until
from tests.slack.test_slack_exactly_once_run import api, escalate, say  # noqa: F401

THREAD = "1795946400.000100"  # escalate() opens it
OLD = "1795946600.000100"  # a task begun before the downtime
NEW = "1795946700.000100"  # a thread begun during it


def missed(fake: FakeSlackAPI, text: str, ts: str, thread: str, **who: object) -> None:
    """Posted while the bot was down: Slack has it, no event was delivered."""
    event = message_event(text, ts=ts, thread_ts=None if ts == thread else thread,
                          **who)["event"]  # type: ignore[arg-type]
    fake.add_message(CHANNEL, event)


def verdicts(fake: FakeSlackAPI, thread: str) -> list[str]:
    return [m["ts"] for m in fake.messages.values() if m.get("thread_ts") == thread
            and any(b["type"] == "actions" for b in m.get("blocks", []))]


async def test_messages_missed_while_down_are_judged_after_restart_in_order_once(
    api: FakeSlackAPI, tmp_path: Path  # noqa: F811
) -> None:
    database = tmp_path / "run.db"
    run = Run(api, database, tmp_path)
    await run.start()
    try:
        await escalate(run, api)  # binds the agents; THREAD waits for a human
        await say(run, api, "결제 모듈 리팩터링 부탁해", ts=OLD)
        await say(run, api, "BLOCKED: 결제 API 키가 없어 진행할 수 없습니다.", user=None,
                  bot_id="BOWNER", subtype="bot_message", thread_ts=OLD, ts="1795946601.000200")

        async def stored() -> bool:
            return not rows(database, "SELECT seq FROM messages WHERE processed = 0")

        await wait_until(stored, "the owner's message applied")
    finally:
        await run.kill()

    # Down: the reviewer answers in OLD (closing the owner's BLOCKED turn), and
    # a new task runs into the same wall in NEW.
    reviewer = {"user": "UREVIEWER", "bot_id": "BREVIEW"}
    owner = {"user": None, "bot_id": "BOWNER", "subtype": "bot_message"}
    missed(api, "키 없이도 샌드박스로 테스트할 수 있습니다.", "1795946602.000300", OLD, **reviewer)
    missed(api, "로그 수집기 설정해줘", NEW, NEW)
    missed(api, "BLOCKED: 수집기 서버 접근 권한이 없습니다.", "1795946701.000200", NEW, **owner)
    missed(api, "권한 없이 로컬에서 먼저 해볼 수 있습니다.", "1795946702.000300", NEW, **reviewer)

    for attempt in range(2):  # the second start finds nothing new
        run = Run(api, database, tmp_path)
        await run.start()
        try:
            async def judged() -> bool:
                return bool(verdicts(api, OLD)) and bool(verdicts(api, NEW)) and not rows(
                    database, "SELECT seq FROM messages WHERE processed = 0") and not rows(
                    database, "SELECT id FROM outbox WHERE status = 'pending'")

            await wait_until(judged, "both rooms judged")
            if attempt:
                async def read_again() -> bool:
                    return len(api.calls_to("conversations.replies")) >= 4

                await wait_until(read_again, "the second catch-up")
        finally:
            await run.kill()

    assert len(verdicts(api, OLD)) == 1 and len(verdicts(api, NEW)) == 1
    for thread, count in ((OLD, 3), (NEW, 3)):
        stored = rows(database, "SELECT message_id, ts, role, turn_no FROM messages WHERE "
                                f"room_id = 'slack:{CHANNEL}:{thread}' ORDER BY ts")
        assert len(stored) == count, stored  # each once
        agent_turns = [turn for _, _, role, turn in stored if role != "user"]
        assert agent_turns == sorted(agent_turns) and len(set(agent_turns)) == 2  # ts order
    assert sorted(rows(database, "SELECT room_id, trigger FROM arbitrations")) == sorted([
        (f"slack:{CHANNEL}:{room}", "blocked") for room in (THREAD, OLD, NEW)])
