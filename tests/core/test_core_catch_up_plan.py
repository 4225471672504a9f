"""A catch-up's plan as its lease records it, and two plans merged: the one a
catch-up taking over unfinished work reads (`bot.catchup_leases`)."""

from __future__ import annotations

from datetime import UTC, datetime

from bot.catchup import CatchUpPlan, RoomMark
from bot.models import RoomKey


def mark(thread: str | None, message: str, minute: int, channel: str = "C1") -> RoomMark:
    return RoomMark(RoomKey("slack", channel, thread), message,
                    datetime(2026, 11, 29, 10, minute, tzinfo=UTC))


def test_a_plan_survives_its_json_text() -> None:
    plan = CatchUpPlan({"C1": mark("1.0", "C1:1.5", 5), "C:2": mark(None, "x", 7, "C:2")},
                       [mark("1.0", "C1:1.5", 5), mark(None, "x", 7, "C:2")])
    assert CatchUpPlan.from_json(plan.to_json()) == plan


def test_merged_plans_keep_the_earlier_mark_of_each_channel_and_room() -> None:
    left = CatchUpPlan({"C1": mark("1.0", "a", 1), "C2": mark(None, "b", 9, "C2")},
                       [mark("1.0", "a", 1), mark("2.0", "c", 2)])
    # Since then: live messages moved C1's latest message on, a new room opened.
    now = CatchUpPlan({"C1": mark("3.0", "d", 20), "C2": mark(None, "e", 4, "C2")},
                      [mark("3.0", "d", 20), mark("1.0", "f", 12)])
    merged = now.merged(left)
    assert merged.channels == {"C1": mark("1.0", "a", 1), "C2": mark(None, "e", 4, "C2")}
    # Every room once, from its earlier mark; the most recently active first.
    assert merged.rooms == [mark("3.0", "d", 20), mark("1.0", "a", 1), mark("2.0", "c", 2)]
    assert left.merged(now) == merged


def test_a_part_of_a_plan_is_its_channels() -> None:
    plan = CatchUpPlan({"C1": mark("1.0", "a", 1), "C2": mark(None, "b", 9, "C2")},
                       [mark("1.0", "a", 1), mark(None, "b", 9, "C2")])
    assert plan.part(lambda channel: channel == "C2") == CatchUpPlan(
        {"C2": mark(None, "b", 9, "C2")}, [mark(None, "b", 9, "C2")])
