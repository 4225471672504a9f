"""`tribunal status [--json]` reads the database, on both backends (a subprocess)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest

from bot.clock import SystemClock
from bot.finding import Finding, FindingStatus
from bot.state import RoomState
from storage.backends import storage_for
from storage.base import DiscordShards, EscalationRow, InstanceRow, Storage

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "status.db")
    else:
        yield request.getfixturevalue("postgres_database")


async def status(database: str, *args: str, via_env: bool = False) -> tuple[int, str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TRIBUNAL_", "SLACK_", "DISCORD_", "OPENAI_", "ANTHROPIC_"))}
    env["PYTHONPATH"] = str(ROOT)
    env["TRIBUNAL_LEASE_SECONDS"] = "30"
    extra = list(args)
    if via_env:
        env["TRIBUNAL_DATABASE"] = database
    else:
        extra += ["--database", database]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "status", *extra, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode or 0, out.decode(), err.decode()


async def fill(store: Storage) -> None:
    now = SystemClock().now()
    findings = [
        Finding(label="F1", author="rev", summary="null session in login()"),
        Finding(label="F2", author="rev", summary="fixed one", status=FindingStatus.FIXED),
        Finding(label="F3", author="rev2", summary="reopened", status=FindingStatus.CONTESTED),
    ]
    open_task = RoomState(task_active=True, findings=findings)
    async with store.transaction() as tx:
        await tx.save_instance(InstanceRow(id="live", host="h1", pid=10, started_at=now,
                                           last_seen=now))
        await tx.save_instance(InstanceRow(id="dead", host="h2", pid=11,
                                           started_at=now - timedelta(hours=1),
                                           last_seen=now - timedelta(minutes=5)))
        await tx.save_room_state("slack:C1:1", "slack", "C1", "1",
                                 open_task.model_dump_json(), now)
        await tx.save_room_state("slack:C1:2", "slack", "C1", "2",
                                 RoomState(task_active=True, approved=True).model_dump_json(), now)
        for n in range(12):
            arbitration = await tx.create_arbitration("slack:C1:1", n, "no_progress", {}, now)
            await tx.update_arbitration(arbitration, status="done", verdict="ESCALATE",
                                        source="llm", finished_at=now)
        await tx.create_escalation(EscalationRow(
            id=arbitration, room_id="slack:C1:1", options=[{"n": 1, "label": "a"}],
            allowed=["u"], status="pending", created_at=now))


async def test_status_reports_instances_rooms_findings_escalations_arbitrations(
    database: str,
) -> None:
    store = storage_for(database)
    await store.open()
    try:
        await fill(store)
    finally:
        await store.close()

    code, out, err = await status(database, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["instances_alive"] == 1
    assert {(i["id"], i["alive"]) for i in report["instances"]} == {("live", True),
                                                                    ("dead", False)}
    assert report["rooms"] == {"count": 2, "open_task": 1}
    [room] = report["open_findings"]
    assert room["room"] == "slack:C1:1"
    assert [(f["label"], f["status"]) for f in room["findings"]] == [("F1", "open"),
                                                                    ("F3", "contested")]
    assert [(e["id"], e["room"]) for e in report["pending_escalations"]] == [(12, "slack:C1:1")]
    arbitrations = report["arbitrations"]
    assert [a["id"] for a in arbitrations] == list(range(12, 2, -1))  # the last 10, newest first
    assert {(a["room"], a["trigger"], a["verdict"], a["source"]) for a in arbitrations} == {
        ("slack:C1:1", "no_progress", "ESCALATE", "llm")}
    assert all(a["time"] for a in arbitrations)

    code, text, err = await status(database, via_env=True)
    assert code == 0, err
    assert "instances alive: 1 of 2" in text
    assert "rooms: 2 (1 with an open task)" in text
    assert "open findings: 2" in text and "F3 (contested) reopened" in text
    assert "pending escalations: 1" in text and "last arbitrations: 10" in text


async def test_status_of_an_unusable_database_says_why(tmp_path: Path) -> None:
    code, _, err = await status(str(tmp_path / "missing" / "x.db"))
    assert code == 2 and "does not exist" in err


async def test_status_shows_discord_shard_settings_and_warns_where_they_disagree(
    database: str,
) -> None:
    store = storage_for(database)
    await store.open()
    try:
        now = SystemClock().now()
        async with store.transaction() as tx:
            for name, shards in (("fixed", DiscordShards(shard_count=4, shard_ids=[0, 1])),
                                 ("leased", DiscordShards(shard_count=4)),
                                 ("slack", None)):
                await tx.save_instance(InstanceRow(id=name, host="h1", pid=10, started_at=now,
                                                   last_seen=now, discord=shards))
    finally:
        await store.close()

    code, out, err = await status(database, "--json")
    assert code == 0, err
    report = json.loads(out)
    assert {i["id"]: i["discord"] for i in report["instances"]} == {
        "fixed": {"shard_count": 4, "shard_ids": [0, 1]},
        "leased": {"shard_count": 4, "shard_ids": []}, "slack": None}
    [warning] = report["warnings"]
    assert warning.startswith("shards 0, 1 of 4 fixed by TRIBUNAL_DISCORD_SHARD_IDS on fixed")

    code, text, err = await status(database)
    assert code == 0, err
    lines = text.splitlines()
    assert any(line.startswith("  fixed  h1 pid 10  alive") and line.endswith(
        ", Discord shards 0,1 of 4 (fixed)") for line in lines), text
    assert any(line.startswith("  leased  ") and line.endswith(
        ", Discord shards of 4 (all, or a share by lease)") for line in lines), text
    assert any(line.startswith("  slack  ") and "Discord" not in line for line in lines), text
    assert f"warning: {warning}" in lines


async def test_status_shows_who_holds_each_lease_and_until_when(database: str) -> None:
    store = storage_for(database)
    await store.open()
    now = SystemClock().now()
    try:
        async with store.transaction() as tx:
            await tx.save_instance(InstanceRow(id="live", host="h1", pid=10, started_at=now,
                                               last_seen=now, discord=DiscordShards()))
            await tx.save_instance(InstanceRow(id="old", host="h2", pid=11, started_at=now,
                                               last_seen=now))
            # The gateway: claimed three times, held by "live" for a while yet.
            for _ in range(3):
                await tx.claim_lease("discord:gateway", "live", now, now + timedelta(seconds=25))
            # A shard whose holder stopped renewing it a minute ago.
            await tx.claim_lease("discord:shard:1", "old", now - timedelta(minutes=2),
                                 now - timedelta(minutes=1))
            # Slack's catch-up: done; a Discord catch-up held by an instance now gone.
            slack = await tx.claim_lease("catchup:slack", "old", now, now + timedelta(seconds=30))
            assert slack is not None
            await tx.release_lease("catchup:slack", "old", slack.fence, finished=True)
            await tx.claim_lease("catchup:discord", "gone", now, now + timedelta(seconds=30))
    finally:
        await store.close()

    code, out, err = await status(database, "--json")
    assert code == 0, err
    leases = {lease["name"]: lease for lease in json.loads(out)["leases"]}
    assert sorted(leases) == ["catchup:discord", "catchup:slack", "discord:gateway",
                              "discord:shard:1"]
    gateway = leases["discord:gateway"]
    assert (gateway["state"], gateway["holder"], gateway["host"], gateway["pid"],
            gateway["token"]) == ("held", "live", "h1", 10, 3)
    assert gateway["until"] == (now + timedelta(seconds=25)).isoformat()
    assert 0 < gateway["seconds_left"] <= 25
    shard = leases["discord:shard:1"]
    assert (shard["state"], shard["holder"], shard["pid"]) == ("ran out", "old", 11)
    assert shard["seconds_left"] < -50
    assert (leases["catchup:slack"]["state"], leases["catchup:slack"]["finished"],
            leases["catchup:slack"]["holder"]) == ("free", True, None)
    gone = leases["catchup:discord"]
    assert (gone["state"], gone["holder"], gone["host"]) == ("ran out", "gone", None)

    code, text, err = await status(database)
    assert code == 0, err
    lines = text.splitlines()
    start = lines.index("leases: 4 (1 held)")
    assert lines[start + 1:start + 5] == [
        f"  catchup:discord  ran out: gone, no longer registered, until "
        f"{gone['until']} (token 1)",
        "  catchup:slack  free (token 1, finished)",
        f"  discord:gateway  held by live (h1 pid 10) until {gateway['until']} "
        f"({gateway_left(lines)} s left, token 3)",
        f"  discord:shard:1  ran out: old (h2 pid 11), until {shard['until']} (token 1)",
    ]


def gateway_left(lines: list[str]) -> str:
    """The seconds left as this run of `tribunal status` printed them."""
    [line] = [line for line in lines if line.startswith("  discord:gateway  held by live")]
    left = line.split("(")[-1].split(" s left")[0]
    assert 0 < float(left) <= 25, line
    return left
