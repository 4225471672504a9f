"""Discord shard settings of the live instances, checked together (`bot.shards`):
every case a warning names, and the settings that are fine."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.shards import problems, settings_of
from storage.base import DiscordShards, InstanceRow

NOW = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)
LEASE = 30.0


def instance(name: str, count: int | None = None, ids: tuple[int, ...] = (), *,
             discord: bool = True, seen: timedelta = timedelta()) -> InstanceRow:
    return InstanceRow(id=name, host="h", pid=len(name), started_at=NOW, last_seen=NOW - seen,
                       discord=DiscordShards(shard_count=count, shard_ids=list(ids))
                       if discord else None)


def check(*rows: InstanceRow) -> list[str]:
    return problems(rows, NOW, LEASE)


def test_settings_that_agree_say_nothing() -> None:
    assert check() == []
    assert check(instance("a"), instance("b")) == []  # unsharded, by the gateway's lease
    assert check(instance("a", 4), instance("b", 4), instance("c", 4)) == []  # by lease
    assert check(instance("a", 4, (0, 1)), instance("b", 4, (2, 3))) == []  # fixed, all
    assert check(instance("a", 4), instance("s", discord=False)) == []  # Slack only
    assert check(instance("a", 2, (0,))) != []  # shard 1 on nobody (below)


def test_two_counts_in_use_are_named_with_their_instances() -> None:
    [problem] = check(instance("a", 2), instance("b", 4), instance("c", 4, (0,)))
    assert problem.startswith("TRIBUNAL_DISCORD_SHARD_COUNT differs between the instances")
    assert "2 on a (h pid 1); 4 on b (h pid 1), c (h pid 1)" in problem
    assert "give every instance the same count" in problem
    # Sharded beside unsharded is two counts too.
    [problem] = check(instance("a"), instance("b", 2))
    assert "unset on a (h pid 1); 2 on b (h pid 1)" in problem


def test_a_shard_fixed_on_two_instances() -> None:
    found = check(instance("a", 3, (0, 1)), instance("b", 3, (1, 2)))
    assert found == ["shard 1 of 3 is in TRIBUNAL_DISCORD_SHARD_IDS of 2 instances "
                     "(a (h pid 1), b (h pid 1)): each connects it; name every shard on one "
                     "instance only"]


def test_shards_nobody_runs() -> None:
    [problem] = check(instance("a", 4, (0,)), instance("b", 4, (2,)))
    assert problem.startswith("shards 1, 3 of 4 run on no instance")
    assert "the guilds on them are not heard" in problem
    [problem] = check(instance("a", 2, (1,)))
    assert problem.startswith("shard 0 of 2 run on no instance")


def test_fixed_shards_beside_shares_by_lease() -> None:
    [problem] = check(instance("fixed", 4, (0, 1)), instance("leased", 4))
    assert problem.startswith("shards 0, 1 of 4 fixed by TRIBUNAL_DISCORD_SHARD_IDS on fixed")
    assert "while leased (h pid 6) share the shards by lease" in problem
    assert "set TRIBUNAL_DISCORD_SHARD_IDS on every instance or on none" in problem


def test_only_live_instances_count() -> None:
    dead = instance("dead", 2, seen=timedelta(seconds=LEASE + 1))
    assert check(instance("a", 4), dead) == []
    assert check(instance("a", 4, (0, 1, 2, 3)), instance("b", 4, (3,), seen=timedelta(
        seconds=LEASE))) != []  # at the lease's edge it is still alive


def test_settings_as_status_shows_them() -> None:
    assert settings_of(None) == "no Discord"
    assert settings_of(DiscordShards()) == "Discord unsharded"
    assert settings_of(DiscordShards(shard_count=4)) == (
        "Discord shards of 4 (all, or a share by lease)")
    assert settings_of(DiscordShards(shard_count=4, shard_ids=[2, 0])) == (
        "Discord shards 2,0 of 4 (fixed)")
