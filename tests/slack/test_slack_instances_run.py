"""Several `tribunal run` processes on one PostgreSQL database, in Slack HTTP
mode against the fake Web API and a fake OpenAI-compatible model server.

Each room's events are spread round-robin over the instances, as a load
balancer would: every deadlock gets exactly one verdict, every escalation
exactly one answer (also when the same digit answer reaches two instances),
no message is lost and no post is made twice, all within Slack's limits (the
fake counts every 429 against the test: the per-channel pacing is shared).
And an instance SIGKILLed in the middle of an arbitration: another finishes
it within the lease time plus one arbitration timeout.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import pytest

from tests.fakes.llm_servers import FakeLLMServer, Scripted
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack.conftest import (
    CHANNEL,
    block_action,
    encode_body,
    message_event,
    signed_headers,
    slash_command,
)
from tests.slack.slack_process import answers_health, slack_http_env
from tests.slack.test_slack_e2e_run import free_port, wait_until

pytestmark = pytest.mark.postgres

LEASE = 5.0  # TRIBUNAL_LEASE_SECONDS: its lowest allowed value
ARBITER_TIMEOUT = 4.0
ESCALATE = (
    "ESCALATE 접속 정보 없이 진행할지 사용자가 정해야 합니다.\n"
    "1. 목으로 진행 — 리뷰어 말대로 목(mock)으로 테스트합니다.\n"
    "2. 기다림 — 접속 정보를 받을 때까지 기다립니다.\n"
)
ASK = "로그인 버그 고쳐줘"
BLOCKED = "BLOCKED: DB 접속 정보가 없어 진행할 수 없습니다."
MOCK = "접속 정보 없이도 목(mock)으로 테스트할 수 있습니다."
CONFIRMED = "✅ 사용자 결정:"


class Instance:
    """One `tribunal run` process."""

    def __init__(self, n: int, api: FakeSlackAPI, database: str, llm: FakeLLMServer,
                 workdir: Path, http: aiohttp.ClientSession) -> None:
        self.n = n
        self.api = api
        self.database = database
        self.llm = llm
        self.workdir = workdir
        self.http = http
        self.port = free_port()
        self.proc: asyncio.subprocess.Process | None = None
        self.log = workdir / f"instance-{n}.log"

    async def start(self) -> None:
        env = slack_http_env(self.api, self.port, self.database)
        env.update({
            "TRIBUNAL_ARBITER_BACKEND": "openai",
            "TRIBUNAL_ARBITER_BASE_URL": self.llm.openai_base_url,
            "TRIBUNAL_ARBITER_MODEL": "test-model",
            "OPENAI_API_KEY": "sk-test-not-a-real-key",
            "TRIBUNAL_ARBITER_TIMEOUT": str(ARBITER_TIMEOUT),
            "TRIBUNAL_ARBITER_RETRIES": "0",
            "TRIBUNAL_LEASE_SECONDS": str(LEASE),
        })
        with self.log.open("wb") as log:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot", "run", cwd=self.workdir, env=env,
                stdout=asyncio.subprocess.DEVNULL, stderr=log)
        await wait_until(self._healthy, f"instance {self.n}'s HTTP endpoint", within=30)

    async def _healthy(self) -> bool:
        assert self.proc is not None
        if self.proc.returncode is not None:
            raise AssertionError(f"instance {self.n} exited:\n{self.output()}")
        return await answers_health(self.http, self.port)

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def send(self, body: dict[str, Any], *, retry: int | None = None) -> None:
        raw, ctype = encode_body(body)
        async with self.http.post(f"http://127.0.0.1:{self.port}/slack/events",
                                  data=raw.encode(),
                                  headers=signed_headers(raw, ctype, retry_num=retry)) as r:
            assert r.status == 200, (r.status, await r.text())

    async def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()

    async def stop(self) -> None:
        """SIGTERM, and a clean exit within the usual deadline."""
        if not self.alive:
            return
        assert self.proc is not None
        self.proc.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(self.proc.wait(), 20)
        except TimeoutError:
            self.proc.kill()
            await self.proc.wait()
            raise AssertionError(f"instance {self.n}: no clean exit:\n{self.output()}") from None
        assert self.proc.returncode == 0, self.output()


class Cluster:
    def __init__(self, instances: list[Instance], api: FakeSlackAPI, database: str) -> None:
        self.instances = instances
        self.api = api
        self.database = database

    def at(self, k: int) -> Instance:
        """The k-th delivery's instance, round-robin over the live ones."""
        live = [i for i in self.instances if i.alive]
        return live[k % len(live)]

    async def sql(self, statement: str, *args: Any) -> list[asyncpg.Record]:
        conn = await asyncpg.connect(self.database)
        try:
            return list(await conn.fetch(statement, *args))
        finally:
            await conn.close()

    def bot_posts(self, thread: str) -> list[dict[str, Any]]:
        """The bot's messages in the thread as they stand (edits applied), in
        order. (A call the fake refused is in its calls, not here.)"""
        found = [(ts, m) for (_, ts), m in self.api.messages.items()
                 if m.get("thread_ts") == thread and m.get("user") == self.api.bot_user_id]
        return [m for _, m in sorted(found, key=lambda item: float(item[0]))]

    def verdict(self, thread: str) -> tuple[str, dict[str, Any]] | None:
        """(ts, message) of the thread's post with buttons, if there is one."""
        for (_, ts), m in self.api.messages.items():
            if m.get("thread_ts") == thread and any(
                    b["type"] == "actions" for b in m.get("blocks", [])):
                return ts, m
        return None

    def confirmations(self, thread: str) -> list[str]:
        return [str(p.get("text", "")) for p in self.bot_posts(thread)
                if str(p.get("text", "")).startswith(CONFIRMED)]


@pytest.fixture
async def llm() -> AsyncIterator[FakeLLMServer]:
    async with FakeLLMServer(default=Scripted(text=ESCALATE)) as server:
        yield server


async def start_cluster(n: int, api: FakeSlackAPI, database: str, llm: FakeLLMServer,
                        tmp_path: Path, http: aiohttp.ClientSession) -> Cluster:
    instances = [Instance(i, api, database, llm, tmp_path, http) for i in range(n)]
    await asyncio.gather(*(i.start() for i in instances))  # they migrate at once, safely
    cluster = Cluster(instances, api, database)
    await instances[0].send(slash_command("roles owner:BOWNER reviewer:<@UREVIEWER|rev>",
                                          user="UADMIN", response_url=api.response_url()))

    async def bound() -> bool:
        return bool(api.responses)

    await wait_until(bound, "the /arbiter roles reply")
    assert "✅" in api.responses[0]["text"]
    return cluster


def thread_of(room: int) -> str:
    return f"17959464{room:02d}.000100"


def room_events(room: int) -> list[dict[str, Any]]:
    """A human asks, the owner is blocked, the reviewer answers: a deadlock."""
    thread = thread_of(room)
    return [
        message_event(ASK, ts=thread),
        message_event(BLOCKED, user=None, bot_id="BOWNER", subtype="bot_message",
                      thread_ts=thread, ts=f"17959464{room:02d}.000200"),
        message_event(MOCK, user="UREVIEWER", bot_id="BREVIEW", thread_ts=thread,
                      ts=f"17959464{room:02d}.000300"),
    ]


def idempotency_key(post: dict[str, Any]) -> str:
    metadata = post.get("metadata")
    if isinstance(metadata, str):
        metadata = json.loads(metadata)
    assert isinstance(metadata, dict), post
    return str(metadata["event_payload"]["key"])


async def stop_all(cluster: Cluster) -> None:
    problems = []
    for instance in cluster.instances:
        try:
            await instance.stop()
        except AssertionError as exc:
            problems.append(str(exc))
    assert not problems, problems


@pytest.mark.parametrize("n", [2, 3])
async def test_instances_behind_a_round_robin_balancer_post_everything_once(
    n: int, slack_api: FakeSlackAPI, postgres_database: str, llm: FakeLLMServer,
    tmp_path: Path,
) -> None:
    rooms = n + 1
    async with aiohttp.ClientSession() as http:
        cluster = await start_cluster(n, slack_api, postgres_database, llm, tmp_path, http)
        try:
            # Every room's events go round-robin over the instances, rooms at once.
            sent = 0

            async def converse(room: int) -> None:
                nonlocal sent
                for k, event in enumerate(room_events(room)):
                    await cluster.at(room + k).send(event)
                    sent += 1

            await asyncio.gather(*(converse(r) for r in range(rooms)))

            async def all_escalated() -> bool:
                return all(cluster.verdict(thread_of(r)) for r in range(rooms))

            await wait_until(all_escalated, "an ESCALATE verdict in every room", within=40)

            # The answers. Room 0: the same digit reaches two instances (a
            # balancer retrying on another one, and Slack's own retry).
            # Room 1: a digit and a click for the other option at once, on two
            # instances. The others: a click each.
            answers: list[tuple[Instance, dict[str, Any], int | None]] = []
            digit = message_event("1", thread_ts=thread_of(0), ts=f"17959464{0:02d}.000900")
            answers += [(cluster.at(0), digit, None), (cluster.at(1), digit, None),
                        (cluster.at(2), digit, 1)]
            for room in range(1, rooms):
                found = cluster.verdict(thread_of(room))
                assert found is not None
                ts, message = found
                values = [e["value"] for b in message["blocks"] if b["type"] == "actions"
                          for e in b["elements"]]
                click = block_action(values[1], user="UALICE", thread_ts=thread_of(room),
                                     message_ts=ts, response_url=slack_api.response_url())
                answers.append((cluster.at(room + 1), click, None))
                if room == 1:
                    answers.append((cluster.at(room), message_event(
                        "1", thread_ts=thread_of(room), ts=f"17959464{room:02d}.000900"), None))
                    sent += 1
            sent += 1  # room 0's digit, stored once however often it arrives
            await asyncio.gather(*(i.send(body, retry=retry) for i, body, retry in answers))

            async def all_answered() -> bool:
                return all(cluster.confirmations(thread_of(r)) for r in range(rooms))

            await wait_until(all_answered, "a decision confirmed in every room", within=30)

            async def settled() -> bool:
                pending = await cluster.sql(
                    "SELECT (SELECT count(*) FROM outbox WHERE status = 'pending')"
                    " + (SELECT count(*) FROM messages WHERE processed = 0)"
                    " + (SELECT count(*) FROM actions WHERE processed = 0) AS n")
                return int(pending[0]["n"]) == 0

            await wait_until(settled, "every post sent and every event applied", within=20)
            await asyncio.sleep(2 * LEASE / 3 + 1)  # a heartbeat's recovery finds nothing more
        finally:
            await stop_all(cluster)

    # Exactly one verdict and one decision per room; nothing posted twice.
    for room in range(rooms):
        thread = thread_of(room)
        posts = cluster.bot_posts(thread)
        texts = [str(p.get("text", "")) for p in posts]
        assert len(cluster.confirmations(thread)) == 1, texts
        keys = [idempotency_key(p) for p in posts]
        assert len(set(keys)) == len(keys), keys
        assert len(posts) == 2, texts  # the verdict (the progress message, edited), the decision
        assert texts[0].startswith("ESCALATE")
    arbitrations = await cluster.sql(
        "SELECT room_id, status, verdict, fence FROM arbitrations ORDER BY id")
    assert sorted(r["room_id"] for r in arbitrations) == sorted(
        f"slack:{CHANNEL}:{thread_of(r)}" for r in range(rooms))
    assert {(r["status"], r["verdict"], r["fence"]) for r in arbitrations} == {
        ("done", "ESCALATE", 1)}
    escalations = await cluster.sql(
        "SELECT room_id, status, answer_option FROM escalations ORDER BY room_id")
    assert [r["status"] for r in escalations] == ["answered"] * rooms
    assert escalations[0]["answer_option"] == 1  # room 0: the digit, once
    stored = await cluster.sql("SELECT count(*) AS n FROM messages WHERE processed = 1")
    assert stored[0]["n"] == sent  # every event stored once and applied
    assert len(llm.requests) == rooms  # one model call per deadlock
    assert await cluster.sql("SELECT id FROM instances") == []  # all left cleanly


async def test_an_instance_killed_mid_arbitration_is_taken_over_within_the_lease(
    slack_api: FakeSlackAPI, postgres_database: str, llm: FakeLLMServer, tmp_path: Path,
) -> None:
    llm.push(Scripted(hang=True))  # the first model call never answers
    async with aiohttp.ClientSession() as http:
        cluster = await start_cluster(2, slack_api, postgres_database, llm, tmp_path, http)
        try:
            for k, event in enumerate(room_events(0)):
                await cluster.at(k).send(event)

            async def thinking() -> bool:
                return len(llm.requests) == 1

            await wait_until(thinking, "the model call", within=20)
            [holder] = await cluster.sql(
                "SELECT a.status, i.pid FROM arbitrations a JOIN instances i"
                " ON i.id = a.claimed_by")
            assert holder["status"] == "running"
            victim = next(i for i in cluster.instances
                          if i.proc is not None and i.proc.pid == holder["pid"])
            assert cluster.bot_posts(thread_of(0)), "the progress message goes out first"
            await victim.kill()
            killed = time.monotonic()

            async def escalated() -> bool:
                return cluster.verdict(thread_of(0)) is not None

            await wait_until(escalated, "the verdict from the other instance",
                             within=LEASE + ARBITER_TIMEOUT + 10)
            took = time.monotonic() - killed
            assert took < LEASE + ARBITER_TIMEOUT, took

            # The survivor goes on: the human's answer is taken and confirmed.
            survivor = cluster.at(0)
            await survivor.send(message_event("2", thread_ts=thread_of(0),
                                              ts="1795946400.000900"))

            async def confirmed() -> bool:
                return bool(cluster.confirmations(thread_of(0)))

            await wait_until(confirmed, "the decision confirmed")
        finally:
            await stop_all(cluster)

    posts = cluster.bot_posts(thread_of(0))
    assert len(posts) == 2, posts  # the verdict (the progress message, edited), the decision
    assert str(posts[0]["text"]).startswith("ESCALATE")
    assert len({idempotency_key(p) for p in posts}) == 2
    assert len(llm.requests) == 2  # the model call was made again; no post was
    [row] = await cluster.sql("SELECT status, verdict, fence, claimed_by FROM arbitrations")
    assert (row["status"], row["verdict"], row["fence"]) == ("done", "ESCALATE", 2)
    assert [r["status"] for r in await cluster.sql("SELECT status FROM escalations")] == [
        "answered"]
    # The dead instance stays registered until an operator's tools (or its
    # host's next start) clear it; the survivor left cleanly.
    assert [r["pid"] for r in await cluster.sql("SELECT pid FROM instances")] == [holder["pid"]]
