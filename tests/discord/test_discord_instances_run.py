"""Two `tribunal run` processes on one PostgreSQL database against the fake
Discord (REST and gateway in this test, over real HTTP and websocket): only
the instance holding the lease `discord:gateway` connects to the gateway;
SIGKILLed, the other connects within the lease time and catches up what
was said while nobody listened; the room's deadlock gets one verdict. And
the holder killed in the middle of its catch-up: the other instance does it.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import asyncpg
import discord_payloads as P
import pytest
from discord_process import channel_config, run_env

from tests.fakes.discord_api import FakeDiscord
from tests.slack.test_slack_e2e_run import ROOT, free_port, wait_until

pytestmark = pytest.mark.postgres

LEASE = 5.0  # TRIBUNAL_LEASE_SECONDS: its lowest allowed value
BEAT = LEASE / 3  # the leases' heartbeat (bot.leases: thrice per lease)


class Run:
    """One `tribunal run` process, Discord only."""

    def __init__(self, n: int, fake: FakeDiscord, database: str, workdir: Path,
                 http: aiohttp.ClientSession, **env: str) -> None:
        self.n = n
        self.env = env
        self.fake = fake
        self.database = database
        self.workdir = workdir
        self.http = http
        self.port = free_port()
        self.proc: asyncio.subprocess.Process | None = None
        self.log = workdir / f"instance-{n}.log"

    async def start(self) -> None:
        env = run_env(self.fake, self.database, channel_config(self.workdir), self.port,
                      TRIBUNAL_LEASE_SECONDS=str(LEASE), **self.env)
        with self.log.open("wb") as log:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot", "run", cwd=self.workdir, env=env,
                stdout=asyncio.subprocess.DEVNULL, stderr=log)
        await wait_until(self._healthy, f"instance {self.n} up", within=30)

    async def _healthy(self) -> bool:
        assert self.proc is not None
        if self.proc.returncode is not None:
            raise AssertionError(f"instance {self.n} exited:\n{self.output()}")
        try:
            async with self.http.get(f"http://127.0.0.1:{self.port}/healthz") as r:
                return r.status == 200  # a standby is healthy: it posts over REST
        except aiohttp.ClientError:
            return False

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

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
            self.proc.kill()
            await self.proc.wait()
            raise AssertionError(f"instance {self.n}: no clean exit:\n{self.output()}") from None
        assert self.proc.returncode == 0, self.output()


async def sql(database: str, statement: str, *args: Any) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(database)
    try:
        return list(await conn.fetch(statement, *args))
    finally:
        await conn.close()


async def gateway_holder(database: str) -> int | None:
    """The pid of the instance holding `discord:gateway` now, if any."""
    rows = await sql(database, "SELECT i.pid FROM leases l JOIN instances i ON i.id = l.holder"
                               " WHERE l.name = 'discord:gateway' AND l.lease_until > $1",
                     time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()))
    return int(rows[0]["pid"]) if rows else None


def verdicts(fake: FakeDiscord) -> list[dict[str, Any]]:
    return [m for m in fake.channel_messages(P.THREAD) if m["components"]]


async def test_the_gateway_is_held_by_one_instance_and_taken_over_when_it_dies(
    fake_discord: FakeDiscord, postgres_database: str, tmp_path: Path
) -> None:
    async with aiohttp.ClientSession() as http:
        runs = [Run(n, fake_discord, postgres_database, tmp_path, http) for n in range(2)]
        await asyncio.gather(*(r.start() for r in runs))  # they migrate at once, safely
        try:
            async def one_connection() -> bool:
                return fake_discord.sessions() == [None] and (
                    await gateway_holder(postgres_database)) is not None

            await wait_until(one_connection, "one gateway connection")
            holder_pid = await gateway_holder(postgres_database)
            [holder] = [r for r in runs if r.proc is not None and r.proc.pid == holder_pid]
            [standby] = [r for r in runs if r is not holder]
            # A few beats later, still one.
            await asyncio.sleep(BEAT * 2)
            assert fake_discord.sessions() == [None]
            assert len(fake_discord.identify_payloads) == 1

            await fake_discord.say(P.message("결제 모듈 리팩터링 부탁해", author=P.ALICE))
            blocked = await fake_discord.say(
                P.message("BLOCKED: 결제 API 키가 없어 진행할 수 없습니다.", author=P.OWNER))

            async def stored() -> bool:
                return bool(await sql(postgres_database,
                                      "SELECT seq FROM messages WHERE message_id = $1",
                                      blocked["id"]))

            await wait_until(stored, "the live messages stored")

            await holder.kill()
            killed = time.monotonic()
            # Said while nobody listens: Discord keeps it, no event reaches anyone.
            missed = fake_discord.add_message(P.message(
                "키 없이도 샌드박스로 테스트할 수 있습니다.", author=P.REVIEWER))

            async def taken_over() -> bool:
                holder_now = await gateway_holder(postgres_database)
                assert standby.proc is not None
                return fake_discord.sessions() == [None] and holder_now == standby.proc.pid

            await wait_until(taken_over, "the standby on the gateway", within=LEASE * 3)
            took = time.monotonic() - killed
            assert took <= LEASE + BEAT + 3, took  # the lease, a beat, and a connect

            async def caught_up() -> list[asyncpg.Record]:
                return await sql(postgres_database,
                                 "SELECT role FROM messages WHERE message_id = $1", missed["id"])

            await wait_until(caught_up, "the reply said meanwhile caught up", within=10)
            assert [r["role"] for r in await caught_up()] == ["reviewer"]  # once

            async def decided() -> bool:
                return bool(verdicts(fake_discord))

            # The owner's BLOCKED gets its verdict (from whichever instance), once.
            await wait_until(decided, "the verdict", within=20)
            await asyncio.sleep(BEAT * 2)
            assert len(verdicts(fake_discord)) == 1
            [lease] = await sql(postgres_database, "SELECT fence FROM leases"
                                                   " WHERE name = 'discord:gateway'")
            assert lease["fence"] == 2
        finally:
            for run in runs:
                try:
                    await run.stop()
                finally:
                    await run.kill()
        # The clean stop released the lease.
        [lease] = await sql(postgres_database, "SELECT holder FROM leases"
                                               " WHERE name = 'discord:gateway'")
        assert lease["holder"] is None


async def test_a_catch_up_cut_by_a_kill_is_done_by_the_instance_that_takes_over(
    fake_discord: FakeDiscord, postgres_database: str, tmp_path: Path
) -> None:
    """The gateway's holder SIGKILLed while its catch-up waits for Discord: the
    other instance takes the gateway over, and with it the catch-up's lease
    (`catchup:discord`), and reads what was missed; stored once, judged once."""
    async with aiohttp.ClientSession() as http:
        seed = Run(0, fake_discord, postgres_database, tmp_path, http)
        await seed.start()
        try:
            first = await fake_discord.say(P.message("결제 모듈 리팩터링 부탁해", author=P.ALICE))

            async def seeded() -> bool:
                return bool(await sql(postgres_database,
                                      "SELECT seq FROM messages WHERE message_id = $1",
                                      first["id"]))

            await wait_until(seeded, "the first message stored")
        finally:
            await seed.stop()
        missed = [fake_discord.add_message(P.message(text, author=who))["id"] for text, who in (
            ("BLOCKED: 결제 API 키가 없어 진행할 수 없습니다.", P.OWNER),
            ("키 없이도 샌드박스로 테스트할 수 있습니다.", P.REVIEWER))]
        reads = lambda: fake_discord.find("GET", rf"/channels/{P.THREAD}/messages")  # noqa: E731
        gate = fake_discord.hold("GET", rf"/channels/{P.THREAD}/messages")
        holder = Run(1, fake_discord, postgres_database, tmp_path, http)
        standby = Run(2, fake_discord, postgres_database, tmp_path, http)
        try:
            await holder.start()

            async def reading() -> bool:
                return bool(fake_discord.held)

            await wait_until(reading, "the holder's catch-up reading")
            await standby.start()
            await asyncio.sleep(BEAT * 2)
            assert len(reads()) == 1  # the standby neither connects nor catches up

            async def lease() -> tuple[int | None, int, int]:
                [row] = await sql(postgres_database,
                                  "SELECT i.pid, l.fence, l.finished FROM leases l LEFT JOIN"
                                  " instances i ON i.id = l.holder"
                                  " WHERE l.name = 'catchup:discord'")
                return row["pid"], row["fence"], row["finished"]

            assert holder.proc is not None and await lease() == (holder.proc.pid, 2, 1)
            # `tribunal status` says who holds the gateway and the catch-up, until when.
            report = json.loads(await tribunal_status(postgres_database, "--json"))
            leases = {lease["name"]: lease for lease in report["leases"]}
            for name in ("discord:gateway", "catchup:discord"):
                assert (leases[name]["state"], leases[name]["pid"]) == ("held", holder.proc.pid)
                assert 0 < leases[name]["seconds_left"] <= LEASE
            text = await tribunal_status(postgres_database)
            assert f"  discord:gateway  held by {leases['discord:gateway']['holder']} (" in text

            await holder.kill()
            killed = time.monotonic()

            async def caught_up() -> bool:
                found = await sql(postgres_database,
                                  "SELECT message_id FROM messages WHERE message_id = ANY($1)",
                                  missed)
                return len(found) == len(missed)

            await wait_until(caught_up, "what was missed, read by the standby", within=LEASE * 3)
            assert time.monotonic() - killed <= LEASE + 2 * BEAT + 3
            assert len(reads()) == 2  # the holder's, cut short; the standby's

            async def finished() -> bool:
                return await lease() == (None, 3, 3)  # seed, holder, standby: it finished

            await wait_until(finished, "the standby's catch-up finished")

            async def decided() -> bool:
                return bool(verdicts(fake_discord))

            await wait_until(decided, "the verdict", within=20)
            await asyncio.sleep(BEAT * 2)
            assert len(verdicts(fake_discord)) == 1
            rows = await sql(postgres_database, "SELECT role FROM messages ORDER BY seq")
            assert [r["role"] for r in rows] == ["user", "owner", "reviewer"]  # each once
        finally:
            gate.set()
            await holder.kill()
            await standby.stop()


async def tribunal_status(database: str, *args: str) -> str:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TRIBUNAL_", "SLACK_", "DISCORD_"))}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "status", "--database", database, *args, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err
    return out.decode()


async def test_shard_ids_fixed_on_two_instances_are_warned_of_in_logs_health_and_status(
    fake_discord: FakeDiscord, postgres_database: str, tmp_path: Path
) -> None:
    """Each instance alone is fine (shard 0 of 2); together they both connect
    shard 0 and nobody runs shard 1. Both say so in their log and on /healthz
    (which stays 200), and so does `tribunal status`."""
    fixed = {"TRIBUNAL_DISCORD_SHARD_COUNT": "2", "TRIBUNAL_DISCORD_SHARD_IDS": "0"}
    async with aiohttp.ClientSession() as http:
        runs = [Run(n, fake_discord, postgres_database, tmp_path, http, **fixed)
                for n in range(2)]
        try:
            for run in runs:
                await run.start()
            assert sorted(map(tuple, fake_discord.sessions())) == [(0, 2), (0, 2)]  # type: ignore[arg-type]
            twice = "shard 0 of 2 is in TRIBUNAL_DISCORD_SHARD_IDS of 2 instances"
            nobody = "shard 1 of 2 run on no instance"

            async def warned() -> bool:
                return all(twice in run.output() and nobody in run.output() for run in runs)

            # The second at its start, the first at its next heartbeat.
            await wait_until(warned, "the warnings in both logs", within=BEAT * 3)
            for run in runs:
                assert run.output().count(twice) == 1  # once, not at every beat
                async with http.get(f"http://127.0.0.1:{run.port}/healthz") as r:
                    assert r.status == 200
                    health = await r.json()
                assert [w.split(" (")[0] for w in health["warnings"]] == [
                    f"{twice}", nobody]

            text = await tribunal_status(postgres_database)
            assert text.count("Discord shards 0 of 2 (fixed)") == 2, text
            assert sum(line.startswith("warning: ") for line in text.splitlines()) == 2, text
            assert f"warning: {twice}" in text and f"warning: {nobody}" in text
        finally:
            for run in runs:
                try:
                    await run.stop()
                finally:
                    await run.kill()
