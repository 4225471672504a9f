"""Catch-up by lease: `tribunal run` processes on one PostgreSQL database, in
Slack HTTP mode against the fake Web API (real HTTP both ways).

Two instances starting together after downtime: one of them holds the lease
`catchup:slack` and reads Slack's history; the other does not repeat it (the
fake counts every `conversations.history` and `conversations.replies`).
And the holder SIGKILLed in the middle of its catch-up: once its lease runs
out the other takes it over, from where the dead one meant to read (its
recorded plan), though live messages have been stored since.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest

from tests.fakes.slack_api import FakeSlackAPI
from tests.slack.conftest import CHANNEL, encode_body, message_event, signed_headers
from tests.slack.slack_process import answers_health, slack_http_env
from tests.slack.test_slack_e2e_run import free_port, wait_until

pytestmark = pytest.mark.postgres

LEASE = 5.0  # TRIBUNAL_LEASE_SECONDS: its lowest allowed value
BEAT = LEASE / 3  # the leases' heartbeat
OLD = "1795946600.000100"  # a task begun before the downtime
NEW = "1795946700.000100"  # a thread begun during it
LIVE = "1795946800.000100"  # a thread begun after the instances are back
OWNER = {"user": None, "bot_id": "BOWNER", "subtype": "bot_message"}
REVIEWER = {"user": "UREVIEWER", "bot_id": "BREVIEW"}


class Run:
    """One `tribunal run` process (Slack HTTP mode, arbiter `none`)."""

    def __init__(self, name: str, api: FakeSlackAPI, database: str, workdir: Path,
                 http: aiohttp.ClientSession) -> None:
        self.name = name
        self.api = api
        self.database = database
        self.workdir = workdir
        self.http = http
        self.port = free_port()
        self.proc: asyncio.subprocess.Process | None = None
        self.log = workdir / f"{name}.log"

    async def start(self) -> Run:
        config = self.workdir / "tribunal.toml"
        config.write_text(f'[[channels]]\nplatform = "slack"\nchannel = "{CHANNEL}"\n'
                          'owner = ["BOWNER"]\nreviewer = ["UREVIEWER"]\n', encoding="utf-8")
        env = slack_http_env(self.api, self.port, self.database,
                             TRIBUNAL_CONFIG=str(config), TRIBUNAL_ARBITER_BACKEND="none",
                             TRIBUNAL_LEASE_SECONDS=str(LEASE))
        with self.log.open("ab") as log:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot", "run", cwd=self.workdir, env=env,
                stdout=asyncio.subprocess.DEVNULL, stderr=log)
        await wait_until(self._healthy, f"{self.name}'s HTTP endpoint", within=30)
        return self

    async def _healthy(self) -> bool:
        assert self.proc is not None
        if self.proc.returncode is not None:
            raise AssertionError(f"{self.name} exited:\n{self.output()}")
        return await answers_health(self.http, self.port)

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    async def say(self, text: str, **fields: Any) -> None:
        """Posted in Slack (the fake keeps it) and delivered to this instance."""
        body = message_event(text, **fields)
        self.api.add_message(CHANNEL, body["event"])
        raw, ctype = encode_body(body)
        async with self.http.post(f"http://127.0.0.1:{self.port}/slack/events",
                                  data=raw.encode(), headers=signed_headers(raw, ctype)) as r:
            assert r.status == 200, await r.text()

    async def kill(self) -> None:
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()

    async def stop(self) -> None:
        assert self.proc is not None
        if self.proc.returncode is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.proc.wait(), 20)
        except TimeoutError:
            await self.kill()
            raise AssertionError(f"{self.name}: no clean exit:\n{self.output()}") from None
        assert self.proc.returncode == 0, self.output()


async def sql(database: str, statement: str, *args: Any) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(database)
    try:
        return list(await conn.fetch(statement, *args))
    finally:
        await conn.close()


def missed(api: FakeSlackAPI, text: str, ts: str, thread: str, **who: Any) -> None:
    """Posted while no instance ran: Slack has it, no event was delivered."""
    event = message_event(text, ts=ts, thread_ts=None if ts == thread else thread,
                          **who)["event"]
    api.add_message(CHANNEL, event)


def verdicts(api: FakeSlackAPI, thread: str) -> list[str]:
    return [m["ts"] for m in api.messages.values() if m.get("thread_ts") == thread
            and any(b["type"] == "actions" for b in m.get("blocks", []))]


def catch_up_replies(api: FakeSlackAPI) -> list[str]:
    """The threads read by catch-ups (the outbox's own look-ups ask for metadata)."""
    return [str(c.args["ts"]) for c in api.calls_to("conversations.replies")
            if "include_all_metadata" not in c.args]


async def catch_up_lease(database: str) -> tuple[str | None, int, int]:
    """(holder's pid or None, fence, finished) of `catchup:slack`."""
    [row] = await sql(database, "SELECT l.fence, l.finished, i.pid FROM leases l LEFT JOIN"
                                " instances i ON i.id = l.holder WHERE l.name = 'catchup:slack'")
    return row["pid"], row["fence"], row["finished"]


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


async def seeded(api: FakeSlackAPI, database: str, tmp_path: Path,
                 http: aiohttp.ClientSession) -> None:
    """A task begun in OLD, stored; then every instance down while the owner
    and reviewer answer in OLD and a new task runs into a wall in NEW."""
    seed = await Run("seed", api, database, tmp_path, http).start()
    try:
        await seed.say("결제 모듈 리팩터링 부탁해", ts=OLD)

        async def stored() -> bool:
            return bool(await sql(database, "SELECT seq FROM messages WHERE processed = 1"))

        await wait_until(stored, "the first message applied")
    finally:
        await seed.stop()
    missed(api, "BLOCKED: 결제 API 키가 없어 진행할 수 없습니다.", "1795946601.000200", OLD,
           **OWNER)
    missed(api, "키 없이도 샌드박스로 테스트할 수 있습니다.", "1795946602.000300", OLD, **REVIEWER)
    missed(api, "로그 수집기 설정해줘", NEW, NEW)
    missed(api, "BLOCKED: 수집기 서버 접근 권한이 없습니다.", "1795946701.000200", NEW, **OWNER)
    missed(api, "권한 없이 로컬에서 먼저 해볼 수 있습니다.", "1795946702.000300", NEW, **REVIEWER)


async def judged_once(api: FakeSlackAPI, database: str) -> None:
    async def judged() -> bool:
        return bool(verdicts(api, OLD)) and bool(verdicts(api, NEW)) and not await sql(
            database, "SELECT seq FROM messages WHERE processed = 0") and not await sql(
            database, "SELECT id FROM outbox WHERE status = 'pending'")

    await wait_until(judged, "both rooms judged", within=30)
    assert len(verdicts(api, OLD)) == 1 and len(verdicts(api, NEW)) == 1
    for thread in (OLD, NEW):
        rows = await sql(database, "SELECT message_id FROM messages WHERE room_id = $1",
                         f"slack:{CHANNEL}:{thread}")
        assert len(rows) == 3, rows  # each once


async def test_of_two_instances_starting_together_one_reads_the_history(
    slack_api: FakeSlackAPI, postgres_database: str, tmp_path: Path,
    http: aiohttp.ClientSession,
) -> None:
    await seeded(slack_api, postgres_database, tmp_path, http)
    before = len(slack_api.calls_to("conversations.history"))
    gate = slack_api.hold("conversations.history")  # the reader waits on its first call
    runs = [Run(f"instance-{n}", slack_api, postgres_database, tmp_path, http)
            for n in range(2)]
    await asyncio.gather(*(r.start() for r in runs))
    try:
        await slack_api.until(lambda: slack_api.held, within=10)
        # Both are up and some beats go by: the other instance found the
        # catch-up held and read nothing. (The holder reads the open task's
        # replies beside the channel's history.)
        await asyncio.sleep(2 * BEAT)
        assert len(slack_api.calls_to("conversations.history")) == before + 1
        assert catch_up_replies(slack_api) == [OLD]
        holder, fence, finished = await catch_up_lease(postgres_database)
        assert holder in {r.pid for r in runs} and (fence, finished) == (1 + 1, 1)
        gate.set()

        await judged_once(slack_api, postgres_database)

        async def finished() -> bool:
            return await catch_up_lease(postgres_database) == (None, 2, 2)

        # Finished, by its one claim; the other forgot it and never claims it.
        await wait_until(finished, "the catch-up finished")
        await asyncio.sleep(2 * BEAT)
        assert await catch_up_lease(postgres_database) == (None, 2, 2)
        assert len(slack_api.calls_to("conversations.history")) == before + 1
        assert sorted(catch_up_replies(slack_api)) == [OLD, NEW]  # each thread read once
    finally:
        gate.set()
        for run in runs:
            await run.stop()


async def test_a_holder_killed_mid_catch_up_is_taken_over_once_its_lease_runs_out(
    slack_api: FakeSlackAPI, postgres_database: str, tmp_path: Path,
    http: aiohttp.ClientSession,
) -> None:
    await seeded(slack_api, postgres_database, tmp_path, http)
    gate = slack_api.hold("conversations.history")
    holder = await Run("holder", slack_api, postgres_database, tmp_path, http).start()
    other: Run | None = None
    try:
        await slack_api.until(lambda: slack_api.held, within=10)
        [held] = slack_api.held
        other = await Run("other", slack_api, postgres_database, tmp_path, http).start()
        await asyncio.sleep(2 * BEAT)
        assert (await catch_up_lease(postgres_database))[0] == holder.pid
        assert catch_up_replies(slack_api) == [OLD]  # the holder's, beside its history
        # Live messages reach the other instance meanwhile: the channel's latest
        # stored message is now past NEW, begun while nobody listened.
        await other.say("배포 스크립트 점검해줘", ts=LIVE)

        async def live_stored() -> bool:
            return bool(await sql(postgres_database,
                                  "SELECT seq FROM messages WHERE message_id LIKE $1",
                                  f"%{LIVE}%"))

        await wait_until(live_stored, "the live message stored")

        await holder.kill()  # its catch-up dies waiting for Slack's answer
        killed = time.monotonic()
        reads = len(slack_api.calls_to("conversations.history"))

        async def taken_over() -> bool:
            return len(slack_api.calls_to("conversations.history")) > reads

        await wait_until(taken_over, "the other instance's catch-up", within=LEASE * 3)
        took = time.monotonic() - killed
        assert took <= LEASE + BEAT + 2, took  # the lease, a beat, and a little
        # From where the dead holder meant to read, not from the live message.
        retaken = slack_api.calls_to("conversations.history")[-1]
        assert retaken.args.get("oldest") == held.args.get("oldest") == OLD

        await judged_once(slack_api, postgres_database)

        async def finished() -> bool:
            pid, fence, done = await catch_up_lease(postgres_database)
            return pid is None and fence == done

        await wait_until(finished, "the takeover's catch-up finished")  # paced: Tier 3
        # The takeover reads OLD again from the holder's mark (what the holder
        # stored of it is dropped), NEW, found from the holder's channel mark,
        # and LIVE, an open task by now.
        assert sorted(catch_up_replies(slack_api)) == sorted([OLD, OLD, NEW, LIVE])
        # Claimed by the seed, the holder and the other instance; the last finished it.
        assert await catch_up_lease(postgres_database) == (None, 3, 3)
    finally:
        gate.set()
        await holder.kill()
        if other is not None:
            await other.stop()
