"""A verdict reaches its room promptly when the platform's edits are busy.

On Slack every edit of a workspace goes through one `chat.update` bucket while
new posts are paced per channel; a verdict whose edit of its progress post
would wait much longer than a new post is posted anew (bot/outbox.py). The
platform here is a fake that says how long its calls would wait
(`ReportsPace`) and finds its posts by their idempotency keys (`FindsPosts`),
as Slack does with message metadata; "crashes" stop the process between a
post reaching it and the outbox recording it.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Literal

import pytest
from engine_world import World, deadlock, make_world

from bot.clock import ManualClock
from bot.config import Settings
from bot.engine import Engine
from bot.models import ButtonClick, MessageKind, OutgoingMessage, RoomKey
from bot.outbox import EDIT_PATIENCE
from bot.ports import FindsPosts, ReportsPace, TransportError
from storage.sqlite import SqliteStorage

ROOM = "console:C1:T1"
LATER = timedelta(minutes=5)  # a restart comes after the crash


class Crash(BaseException):
    """The process dies here: nothing after it runs, nothing is recorded."""


class Workspace:
    """The platform's side: every message as it shows now, by id."""

    def __init__(self) -> None:
        self.shown: dict[str, OutgoingMessage] = {}
        self.keys: dict[str, str] = {}  # idempotency key -> message id

    def thread(self) -> list[OutgoingMessage]:
        return list(self.shown.values())


class BusyEdits:
    """A transport whose edits wait `edit_wait` seconds for their bucket while a
    new post goes out at once."""

    platform = "console"

    def __init__(self, workspace: Workspace, edit_wait: float) -> None:
        self.workspace = workspace
        self.edit_wait = edit_wait
        self.posts: list[OutgoingMessage] = []
        self.edits: list[tuple[str, OutgoingMessage]] = []
        self.looked_up: list[str | None] = []
        # (kind, what happens): "crash" after the platform took the post,
        # "fail" before it did (a transient error).
        self.trouble: dict[MessageKind, Literal["crash", "fail"]] = {}
        self.crash_after_edit = False

    def expected_wait(self, call: Literal["post", "edit"], room: RoomKey) -> float:
        return self.edit_wait if call == "edit" else 0.0

    async def post(self, room: RoomKey, message: OutgoingMessage) -> str:
        trouble = self.trouble.pop(message.kind, None)
        if trouble == "fail":
            raise TransportError("network: the post did not get through")
        message_id = f"p{len(self.workspace.shown) + 1}"
        self.workspace.shown[message_id] = message
        if message.idempotency_key:
            self.workspace.keys[message.idempotency_key] = message_id
        self.posts.append(message)
        if trouble == "crash":
            raise Crash
        return message_id

    async def edit(self, room: RoomKey, message_id: str, message: OutgoingMessage) -> None:
        self.workspace.shown[message_id] = message
        self.edits.append((message_id, message))
        if self.crash_after_edit:
            raise Crash

    async def post_private(self, room: RoomKey, user_id: str, text: str) -> None:
        pass

    async def find_post(self, room: RoomKey, message: OutgoingMessage, since: object) -> str | None:
        self.looked_up.append(message.idempotency_key)
        return self.workspace.keys.get(message.idempotency_key or "")


def test_the_fake_has_the_capabilities_the_outbox_asks_for() -> None:
    transport = BusyEdits(Workspace(), 0)
    assert isinstance(transport, ReportsPace) and isinstance(transport, FindsPosts)


async def busy_world(db: Path, workspace: Workspace, edit_wait: float) -> tuple[World, BusyEdits]:
    world = await make_world(db, quiet_close=False)
    transport = BusyEdits(workspace, edit_wait)
    world.engine.register_transport(transport)
    return world, transport


async def restart(db: Path, transport: BusyEdits, clock: ManualClock) -> World:
    """A new process on the same database and platform, started later."""
    storage = SqliteStorage(str(db))
    await storage.open()
    engine = Engine(Settings(_env_file=None, admin_ids=["boss"]), storage, clock)  # type: ignore[call-arg]
    engine.register_transport(transport)
    world = World(engine, storage, transport, clock)  # type: ignore[arg-type]
    engine.add_listener(world.events.append)
    await engine.start()
    await engine.drain()
    return world


def verdicts(workspace: Workspace) -> list[OutgoingMessage]:
    return [m for m in workspace.thread() if m.kind is MessageKind.VERDICT]


async def test_busy_edits_post_the_verdict_below_its_progress_post(tmp_path: Path) -> None:
    workspace = Workspace()
    world, transport = await busy_world(tmp_path / "b.db", workspace, EDIT_PATIENCE + 55)
    try:
        await deadlock(world)
        assert world.kinds() == ["deadlock", "verdict"]
        # the progress post, then the verdict as a new post; the progress post
        # is left as it was (it said only that the arbiter was reviewing)
        assert [m.kind for m in transport.posts] == [MessageKind.PROGRESS, MessageKind.VERDICT]
        assert transport.edits == []
        [progress, verdict] = workspace.thread()
        assert progress.kind is MessageKind.PROGRESS and verdict.escalation_id is not None
        rows = await world.storage._all("SELECT kind, status, platform_message_id FROM outbox"
                                        " ORDER BY id")
        assert rows == [{"kind": "progress", "status": "sent", "platform_message_id": "p1"},
                        {"kind": "verdict", "status": "sent", "platform_message_id": "p2"}]

        # The answer closes the buttons of the post that shows them: an edit of
        # the verdict (a decision is never posted anew, its buttons would stay).
        await world.engine.on_button(ButtonClick(
            platform="console", channel="C1", thread="T1", user_id="alice",
            escalation_id=verdict.escalation_id, option=1))
        await world.engine.drain()
        [(edited, decided)] = transport.edits
        assert edited == "p2" and decided.decided is not None and decided.decided.n == 1
        assert len(verdicts(workspace)) == 1
    finally:
        await world.storage.close()


async def test_an_edit_that_waits_little_still_replaces_the_progress_post(
    tmp_path: Path,
) -> None:
    workspace = Workspace()
    world, transport = await busy_world(tmp_path / "q.db", workspace, EDIT_PATIENCE - 1)
    try:
        await deadlock(world)
        assert [m.kind for m in transport.posts] == [MessageKind.PROGRESS]
        [(edited, verdict)] = transport.edits
        assert edited == "p1" and verdict.kind is MessageKind.VERDICT
        assert [m.kind for m in workspace.thread()] == [MessageKind.VERDICT]
    finally:
        await world.storage.close()


async def test_a_crash_after_the_verdict_was_posted_anew_does_not_show_it_twice(
    tmp_path: Path,
) -> None:
    db, workspace = tmp_path / "c.db", Workspace()
    world, transport = await busy_world(db, workspace, 60)
    transport.trouble[MessageKind.VERDICT] = "crash"
    try:
        await deadlock(world)  # dies between Slack taking the verdict and recording it
    finally:
        await world.storage.close()
    [row] = [p for p in transport.posts if p.kind is MessageKind.VERDICT]
    assert row.idempotency_key is not None

    # The next start finds it by its key, whatever the edits' pace now: it is
    # recorded as sent, neither posted again nor edited into the progress post.
    again = BusyEdits(workspace, edit_wait=0)
    second = await restart(db, again, ManualClock(world.clock.now() + LATER))
    try:
        assert again.looked_up == [row.idempotency_key]
        assert again.posts == [] and again.edits == []
        assert [m.kind for m in workspace.thread()] == [MessageKind.PROGRESS,
                                                        MessageKind.VERDICT]
        assert await second.storage.pending_rooms(["console"]) == []
        rows = await second.storage._all("SELECT platform_message_id FROM outbox"
                                         " WHERE kind = 'verdict'")
        assert rows == [{"platform_message_id": workspace.keys[row.idempotency_key]}]
    finally:
        await second.storage.close()


@pytest.mark.parametrize("trouble", ["edited, then a crash", "a crash before the post"])
async def test_a_verdict_that_may_have_been_sent_is_never_posted_anew_after_a_restart(
    tmp_path: Path, trouble: str,
) -> None:
    """Before the crash the edit went through, or nothing did: either way the
    next start does not find the verdict posted anew, and edits its progress
    post however busy edits are. A new post would show the verdict twice had
    the edit gone through (an edit carries no key to find it by)."""
    db, workspace = tmp_path / "t.db", Workspace()
    world, transport = await busy_world(db, workspace, edit_wait=0)
    if trouble == "edited, then a crash":
        transport.crash_after_edit = True
    else:
        world.engine.outbox.flush = _crash_when_a_verdict_is_due(world)  # type: ignore[method-assign]
    try:
        await deadlock(world)
    finally:
        await world.storage.close()
    shown = [m.kind for m in workspace.thread()]
    assert shown == ([MessageKind.VERDICT] if trouble == "edited, then a crash"
                     else [MessageKind.PROGRESS])

    again = BusyEdits(workspace, edit_wait=EDIT_PATIENCE + 55)
    second = await restart(db, again, ManualClock(world.clock.now() + LATER))
    try:
        assert len(again.looked_up) == 1 and again.posts == []
        [(edited, verdict)] = again.edits
        assert edited == "p1" and verdict.kind is MessageKind.VERDICT
        assert [m.kind for m in workspace.thread()] == [MessageKind.VERDICT]
        assert await second.storage.pending_rooms(["console"]) == []
    finally:
        await second.storage.close()


async def test_a_verdict_whose_new_post_failed_is_edited_in_at_its_retry(tmp_path: Path) -> None:
    workspace = Workspace()
    world, transport = await busy_world(tmp_path / "f.db", workspace, EDIT_PATIENCE + 55)
    transport.trouble[MessageKind.VERDICT] = "fail"
    try:
        await deadlock(world)
        assert [m.kind for m in workspace.thread()] == [MessageKind.PROGRESS]
        world.clock.advance(60)  # past the backoff
        await world.engine.tick()
        assert len(transport.looked_up) == 1  # looked for first, not found
        [(edited, verdict)] = transport.edits
        assert edited == "p1" and verdict.kind is MessageKind.VERDICT
        assert [m.kind for m in workspace.thread()] == [MessageKind.VERDICT]
    finally:
        await world.storage.close()


def _crash_when_a_verdict_is_due(world: World):  # type: ignore[no-untyped-def]
    """The outbox's flush, dying once the room's verdict is queued (before it is sent)."""
    real = world.engine.outbox.flush

    async def flush(room_id: str | None = None) -> None:
        pending = await world.storage.pending_outbox(ROOM)
        if any(p.kind == "verdict" for p in pending):
            raise Crash
        await real(room_id)

    return flush
