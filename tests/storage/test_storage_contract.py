"""The storage contract: what every backend of `storage/base.py` does, tested
once and run against each (SQLite on a real file, PostgreSQL on a real
server). A backend-specific test belongs beside its backend, not here."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from storage.base import (
    DatabaseUnusable,
    EscalationRow,
    InstanceRow,
    MessageRow,
    Storage,
    Transaction,
)
from storage.schema import latest_version, migrations
from tests.storage.conftest import Backend

NOW = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)


def message(message_id: str, *, room: str = "slack:C1:1.0", role: str = "user",
            text: str = "hi", turn_no: int | None = None, processed: bool = True,
            platform: str = "slack", author: str = "U1") -> MessageRow:
    return MessageRow(platform=platform, message_id=message_id, room_id=room, author=author,
                      role=role, text=text, ts=NOW, turn_no=turn_no, processed=processed)


def escalation(escalation_id: int, room: str = "r", *, at: datetime = NOW) -> EscalationRow:
    return EscalationRow(id=escalation_id, room_id=room,
                         options=[{"n": 1, "label": "a"}, {"n": 2, "label": "b"}],
                         allowed=["u"], status="pending", created_at=at)


async def register(tx: Transaction, *ids: str) -> None:
    for instance_id in ids:
        await tx.save_instance(InstanceRow(id=instance_id, host="h", pid=1, started_at=NOW,
                                           last_seen=NOW))


class TestStorageContract:
    # --- opening and units of work -------------------------------------------------

    async def test_migrations_apply_once(self, backend: Backend, store: Storage) -> None:
        await store.close()
        await backend.open()  # re-opening applies nothing twice
        versions = await backend.sql("SELECT version FROM schema_version ORDER BY version")
        assert [v for (v,) in versions] == [n for n, _ in migrations()]

    async def test_a_migration_missed_below_the_highest_is_applied(
        self, backend: Backend, store: Storage
    ) -> None:
        # Two branches merged: a database already at 008 never saw 007.
        await store.close()
        await backend.sql("DELETE FROM schema_version WHERE version = 7")
        await backend.sql("DROP TABLE pacing")
        for column in ("claimed_by", "lease_until", "fence"):
            await backend.sql(f"ALTER TABLE arbitrations DROP COLUMN {column}")
        await backend.open()
        versions = await backend.sql("SELECT version FROM schema_version ORDER BY version")
        assert [v for (v,) in versions] == [n for n, _ in migrations()]
        assert await backend.sql("SELECT COUNT(*) FROM pacing") == [(0,)]
        assert await backend.sql("SELECT COUNT(fence) FROM arbitrations") == [(0,)]

    async def test_instances_starting_together_migrate_once(self, backend: Backend) -> None:
        stores = await asyncio.gather(*(backend.open() for _ in range(4)))
        versions = await backend.sql("SELECT version FROM schema_version ORDER BY version")
        assert [v for (v,) in versions] == [n for n, _ in migrations()]
        async with stores[3].transaction() as tx:
            assert await tx.insert_message(message("m1")) is not None
        await backend.close_all()

    async def test_a_newer_schema_is_refused_and_left_untouched(self, backend: Backend) -> None:
        store = await backend.open()
        await store.close()
        known = latest_version()
        await backend.sql(f"INSERT INTO schema_version (version) VALUES ({known + 5})")
        with pytest.raises(DatabaseUnusable, match=f"schema version {known + 5}, newer than"):
            await backend.storage().open()
        versions = await backend.sql("SELECT MAX(version) FROM schema_version")
        assert versions == [(known + 5,)]

    async def test_a_failed_unit_of_work_leaves_nothing(self, store: Storage) -> None:
        with pytest.raises(RuntimeError):
            async with store.transaction() as tx:
                await tx.set_setting("channel", "x", "paused", True)
                await tx.insert_message(message("m1"))
                raise RuntimeError("boom")
        assert await store.get_settings("channel", "x") == {}
        assert await store.human_messages("slack:C1:1.0", 0, 5) == ([], 0)

    async def test_reads_inside_a_unit_of_work_go_through_the_unit(self, store: Storage) -> None:
        # The core reads through its unit of work, never through Storage in the
        # middle of one (that read would not see the unit's writes on one
        # backend and would wait for its own connection on another): refused.
        async with store.transaction() as tx:
            await tx.set_setting("channel", "x", "paused", True)
            outbox_id = await tx.enqueue("slack:C1:1.0", "notice", {"text": "t"}, NOW)
            row = await tx.get_outbox(outbox_id)
            assert row is not None and row.status == "pending"
            with pytest.raises(RuntimeError):
                await store.get_settings("channel", "x")
        assert await store.get_settings("channel", "x") == {"paused": True}

    async def test_units_of_work_of_many_tasks_all_land(self, store: Storage) -> None:
        async def one(i: int) -> None:
            async with store.transaction() as tx:
                await tx.insert_message(message(f"m{i}", room=f"slack:C1:{i % 3}"))
                await tx.enqueue(f"slack:C1:{i % 3}", "notice", {"i": i}, NOW)

        await asyncio.gather(*(one(i) for i in range(30)))
        counts = [len(await store.pending_outbox(f"slack:C1:{r}", limit=100)) for r in range(3)]
        assert counts == [10, 10, 10]

    # --- messages -----------------------------------------------------------------

    async def test_messages_are_deduplicated_by_platform_room_and_id(self, store: Storage) -> None:
        row = message("C1:1.0")
        async with store.transaction() as tx:
            first = await tx.insert_message(row)
            again = await tx.insert_message(row.model_copy(update={"text": "changed"}))
        async with store.transaction() as tx:
            other_platform = await tx.insert_message(row.model_copy(update={"platform": "discord"}))
            other_room = await tx.insert_message(row.model_copy(update={"room_id": "slack:C2:1"}))
        assert first is not None and again is None
        assert other_platform is not None and other_room is not None
        assert first < other_platform < other_room  # seq grows in insertion order
        kept, _ = await store.human_messages("slack:C1:1.0", 0, 5)
        assert [(m.platform, m.text) for m in kept] == [("slack", "hi"), ("discord", "hi")]

    async def test_text_round_trips_exactly(self, store: Storage) -> None:
        text = "반올림 위치 😀 'quote' \"double\" \\ back ; -- not a comment\n\ttab ٩(◕‿◕)۶"
        async with store.transaction() as tx:
            await tx.insert_message(message("m1", text=text, author="작성자"))
        [row], _ = await store.human_messages("slack:C1:1.0", 0, 5)
        assert (row.text, row.author, row.ts) == (text, "작성자", NOW)

    async def test_unprocessed_messages_until_marked(self, store: Storage) -> None:
        async with store.transaction() as tx:
            a = await tx.insert_message(message("a", processed=False))
            await tx.insert_message(message("b", room="slack:C2:1", processed=False))
            await tx.insert_message(message("c"))
        assert [m.message_id for m in await store.unprocessed_messages()] == ["a", "b"]
        assert [m.message_id for m in await store.unprocessed_messages("slack:C2:1")] == ["b"]
        # Not applied yet: the arbiter's context does not show it.
        humans, _ = await store.human_messages("slack:C1:1.0", 0, 5)
        assert [m.message_id for m in humans] == ["c"]
        assert a is not None
        async with store.transaction() as tx:
            await tx.mark_processed(a, epoch=3, turn_no=None)
        assert [m.message_id for m in await store.unprocessed_messages()] == ["b"]
        humans, _ = await store.human_messages("slack:C1:1.0", 0, 5)
        assert [(m.message_id, m.epoch) for m in humans] == [("a", 3), ("c", 0)]

    async def test_context_queries_are_bounded(self, store: Storage) -> None:
        async with store.transaction() as tx:
            for i in range(30):
                role = "owner" if i % 2 == 0 else "reviewer"
                await tx.insert_message(message(f"a{i}", room="r", role=role, author=role,
                                                text=f"turn {i}", turn_no=i + 1))
            for i in range(5):
                await tx.insert_message(message(f"h{i}", room="r", author="alice",
                                                text=f"human {i}"))
        rows, omitted = await store.agent_turn_messages("r", 8)
        assert [r.turn_no for r in rows] == list(range(23, 31)) and omitted == 22
        # The human window is bounded like agent turns: the task's first human
        # message, the latest `limit`, and how many lie between them.
        humans, left_out = await store.human_messages("r", 0, 3)
        assert [h.text for h in humans] == ["human 0", "human 2", "human 3", "human 4"]
        assert left_out == 1
        since = humans[2].seq
        humans, left_out = await store.human_messages("r", since, 3)
        assert [h.text for h in humans] == ["human 3", "human 4"] and left_out == 0
        assert await store.agent_turn_messages("empty", 8) == ([], 0)

    async def test_agent_turns_keep_every_message_of_a_turn(self, store: Storage) -> None:
        async with store.transaction() as tx:
            await tx.insert_message(message("o1", room="r", role="owner", turn_no=1))
            await tx.insert_message(message("o2", room="r", role="owner", turn_no=1))
            await tx.insert_message(message("h", room="r"))
            await tx.insert_message(message("v1", room="r", role="reviewer", turn_no=2))
        rows, earlier = await store.agent_turn_messages("r", 2)
        assert [r.message_id for r in rows] == ["o1", "o2", "v1"] and earlier == 0
        rows, earlier = await store.agent_turn_messages("r", 1)
        assert [r.message_id for r in rows] == ["v1"] and earlier == 1

    # --- rooms --------------------------------------------------------------------

    async def test_room_state_is_upserted(self, store: Storage) -> None:
        assert await store.load_room_state("slack:C1:1") is None
        async with store.transaction() as tx:
            await tx.save_room_state("slack:C1:1", "slack", "C1", "1", '{"open_turn": null}', NOW)
            await tx.save_room_state("slack:C1:2", "slack", "C1", "2", "{}",
                                     NOW + timedelta(seconds=5))
            await tx.save_room_state("discord:D:x", "discord", "D", None,
                                     '{"open_turn": {"role": "owner"}}', NOW)
        assert await store.latest_room("slack", "C1") == "slack:C1:2"
        async with store.transaction() as tx:
            await tx.save_room_state("slack:C1:1", "slack", "C1", "1",
                                     '{"open_turn": {"n": 1}}', NOW + timedelta(seconds=9))
        assert await store.load_room_state("slack:C1:1") == '{"open_turn": {"n": 1}}'
        assert await store.latest_room("slack", "C1") == "slack:C1:1"
        assert await store.latest_room("slack", "nowhere") is None
        assert sorted(await store.rooms_with_open_turns()) == ["discord:D:x", "slack:C1:1"]

    # --- bindings, settings, audit -----------------------------------------------

    async def test_bindings_are_replaced_per_role(self, store: Storage) -> None:
        async with store.transaction() as tx:
            await tx.set_bindings("slack", "C1", "owner", ["B2", "U1", "U1"])
            await tx.set_bindings("slack", "C1", "reviewer", ["U9"])
            await tx.set_bindings("slack", "C2", "owner", ["X"])
        assert await store.get_bindings("slack", "C1") == {"owner": ["B2", "U1"],
                                                           "reviewer": ["U9"]}
        async with store.transaction() as tx:
            await tx.set_bindings("slack", "C1", "owner", ["U3"])
            await tx.set_bindings("slack", "C1", "reviewer", [])
        assert await store.get_bindings("slack", "C1") == {"owner": ["U3"]}
        assert await store.get_bindings("discord", "C1") == {}

    async def test_settings_are_json_values_and_none_deletes(self, store: Storage) -> None:
        async with store.transaction() as tx:
            await tx.set_setting("channel", "slack:C1", "stall_threshold", 3)
            await tx.set_setting("channel", "slack:C1", "language", "en")
            await tx.set_setting("channel", "slack:C1", "list", [1, "둘"])
            await tx.set_setting("channel", "slack:C2", "language", "ko")
        async with store.transaction() as tx:
            await tx.set_setting("channel", "slack:C1", "stall_threshold", 4)
            await tx.set_setting("channel", "slack:C1", "list", None)
            await tx.set_setting("channel", "slack:C1", "never-set", None)
        got = await store.get_settings("channel", "slack:C1")
        assert got == {"language": "en", "stall_threshold": 4}
        assert list(got) == ["language", "stall_threshold"]

    async def test_audit_is_listed_newest_first(self, store: Storage) -> None:
        async with store.transaction() as tx:
            for i in range(5):
                await tx.add_audit(at=NOW + timedelta(seconds=i), platform="slack", channel="C1",
                                   user_id="U1", action=f"set {i}", scope="channel",
                                   before=None if i == 0 else str(i - 1), after=str(i))
            await tx.add_audit(at=NOW, platform="slack", channel="C2", user_id="U1",
                               action="other", scope="channel", before=None, after=None)
        rows = await store.list_audit("slack", "C1", limit=3)
        assert [r.action for r in rows] == ["set 4", "set 3", "set 2"]
        assert (rows[0].before, rows[0].after, rows[0].at) == ("3", "4", NOW + timedelta(seconds=4))
        assert [r.action for r in await store.list_audit("slack", "C2")] == ["other"]

    # --- arbitrations ---------------------------------------------------------------

    async def test_arbitrations_record_and_list(self, store: Storage) -> None:
        evidence = {"trigger": "no_progress", "ledger": [{"label": "F1", "summary": "반올림"}]}
        async with store.transaction() as tx:
            first = await tx.create_arbitration("r", 1, "no_progress", evidence, NOW)
            second = await tx.create_arbitration("r", 2, "manual", {}, NOW + timedelta(minutes=1))
            other = await tx.create_arbitration("q", 1, "blocked", {}, NOW)
        assert first < second
        row = await store.get_arbitration(first)
        assert row is not None and row.evidence == evidence and row.status == "pending"
        assert (row.options, row.overrides, row.finished_at) == ([], [], None)
        assert await store.get_arbitration(999_999) is None
        assert [a.id for a in await store.unfinished_arbitrations()] == [first, second, other]

        async with store.transaction() as tx:
            await tx.update_arbitration(first, status="running", progress_outbox_id=7)
            await tx.update_arbitration(
                second, status="done", verdict="ESCALATE", source="llm", verdict_text="결정",
                options=[{"n": 1, "label": "a"}], overrides=["x"], latency_ms=12,
                prompt_chars=100, finished_at=NOW + timedelta(minutes=2))
            with pytest.raises(ValueError, match="unknown arbitration fields"):
                await tx.update_arbitration(first, nonsense=1)
        assert [a.id for a in await store.unfinished_arbitrations()] == [first, other]
        done = await store.get_arbitration(second)
        assert done is not None
        assert (done.options, done.overrides, done.latency_ms) == ([{"n": 1, "label": "a"}],
                                                                   ["x"], 12)
        assert done.finished_at == NOW + timedelta(minutes=2)

    async def test_room_arbitrations_are_the_last_finished_oldest_first(
        self, store: Storage
    ) -> None:
        async with store.transaction() as tx:
            ids = []
            for i in range(5):
                new = await tx.create_arbitration("r", i, "manual", {}, NOW + timedelta(hours=i))
                ids.append(new)
                if i != 2:
                    await tx.update_arbitration(new, status="done", verdict="PROCEED")
            await tx.create_arbitration("q", 0, "manual", {}, NOW)
        rows = await store.room_arbitrations("r", limit=3)
        assert [a.id for a in rows] == [ids[1], ids[3], ids[4]]
        rows = await store.room_arbitrations("r", since=NOW + timedelta(hours=3))
        assert [a.id for a in rows] == [ids[3], ids[4]]
        assert await store.room_arbitrations("nowhere") == []

    async def test_a_ruling_is_stored_with_its_arbitration(self, store: Storage) -> None:
        ruling = {"upheld": "F1", "retired": "F3", "upheld_summary": "TTL 1분 (sec-bot)",
                  "retired_summary": "TTL 1시간 (perf-bot)", "applied": True}
        async with store.transaction() as tx:
            ruled = await tx.create_arbitration("r", 1, "contradiction", {}, NOW)
            plain = await tx.create_arbitration("r", 2, "manual", {}, NOW)
            await tx.update_arbitration(ruled, status="done", verdict="REVISE", ruling=ruling)
            await tx.update_arbitration(plain, status="done", verdict="PROCEED")
        got = {a.id: a.ruling for a in await store.room_arbitrations("r")}
        assert got == {ruled: ruling, plain: None}
        one = await store.get_arbitration(ruled)
        assert one is not None and one.ruling == ruling
        assert [a.ruling for a in await store.recent_arbitrations()] == [None, ruling]

    async def test_a_human_ruling_is_stored_with_the_answer(self, store: Storage) -> None:
        ruling = {"upheld": "F3", "retired": "F1", "upheld_summary": "캐시 TTL 1시간",
                  "retired_summary": "캐시 TTL 1분"}
        async with store.transaction() as tx:
            await tx.create_escalation(escalation(1))
            await tx.create_escalation(escalation(2))
            assert await tx.answer_escalation(1, option=2, label="b", text=None, kind="digit",
                                              by="minji", at=NOW, ruling=ruling)
            assert await tx.answer_escalation(2, option=1, label="a", text=None, kind="button",
                                              by="minji", at=NOW)
            seen = await tx.get_escalation(1)
            assert seen is not None and seen.answer_ruling == ruling  # inside the unit too
        async with store.transaction() as tx:  # a losing answer changes nothing
            assert not await tx.answer_escalation(1, option=1, label="a", text=None,
                                                  kind="digit", by="mallory", at=NOW,
                                                  ruling={"upheld": "F1", "retired": "F3"})
        first, second = await store.get_escalation(1), await store.get_escalation(2)
        assert first is not None and second is not None
        assert (first.answer_ruling, first.answered_by) == (ruling, "minji")
        assert second.answer_ruling is None

    # --- escalations ----------------------------------------------------------------

    async def test_escalation_answer_is_compare_and_set_across_instances(
        self, backend: Backend
    ) -> None:
        stores = [await backend.open() for _ in range(4)]
        async with stores[0].transaction() as tx:
            await tx.create_escalation(escalation(1))

        async def answer(store: Storage, who: str) -> bool:
            async with store.transaction() as tx:
                return await tx.answer_escalation(1, option=1, label="a", text=None,
                                                  kind="button", by=who, at=NOW)

        results = await asyncio.gather(*(answer(s, f"user{i}") for i, s in enumerate(stores)))
        assert sorted(results) == [False, False, False, True]
        row = await stores[0].get_escalation(1)
        assert row is not None and row.status == "answered"
        assert row.answered_by == f"user{results.index(True)}"
        assert (row.answer_option, row.answer_label, row.answer_kind) == (1, "a", "button")
        await backend.close_all()

    async def test_escalations_cancel_remind_and_point_at_their_post(
        self, store: Storage
    ) -> None:
        async with store.transaction() as tx:
            for n in (1, 2, 3):
                await tx.create_escalation(escalation(n, at=NOW + timedelta(minutes=n)))
            await tx.create_escalation(escalation(4, room="other"))
            await tx.cancel_other_escalations("r", keep=2)
            await tx.set_escalation_outbox(2, 42)
        statuses = [(await store.get_escalation(n)) for n in (1, 2, 3, 4)]
        assert [e.status if e else None for e in statuses] == [
            "cancelled", "pending", "cancelled", "pending"]
        two = statuses[1]
        assert two is not None and two.verdict_outbox_id == 42 and two.allowed == ["u"]
        assert two.options == [{"n": 1, "label": "a"}, {"n": 2, "label": "b"}]
        assert await store.get_escalation(99) is None

        due = await store.due_reminders(NOW + timedelta(minutes=2))
        assert [e.id for e in due] == [2, 4]
        assert [e.id for e in await store.due_reminders(NOW)] == [4]
        async with store.transaction() as tx:
            await tx.mark_reminded(2, NOW + timedelta(hours=4))
        assert [e.id for e in await store.due_reminders(NOW + timedelta(days=1))] == [4]
        reminded = await store.get_escalation(2)
        assert reminded is not None and reminded.reminded_at == NOW + timedelta(hours=4)
        async with store.transaction() as tx:
            won = await tx.answer_escalation(1, option=2, label="b", text=None, kind="digit",
                                             by="u", at=NOW)
        assert not won  # a cancelled escalation cannot be answered

    # --- outbox ----------------------------------------------------------------------

    async def test_outbox_keeps_room_order_and_records_attempts(self, store: Storage) -> None:
        async with store.transaction() as tx:
            a = await tx.enqueue("slack:C1:1", "progress", {"text": "…"}, NOW)
            b = await tx.enqueue("slack:C1:1", "verdict", {"text": "결정"}, NOW, edit_of=a)
            c = await tx.enqueue("slack:C1:1", "notice", {"text": "c"}, NOW)
            await tx.enqueue("discord:D:1", "notice", {"text": "d"}, NOW)
        assert a < b < c
        assert [r.id for r in await store.pending_outbox("slack:C1:1")] == [a, b, c]
        assert [r.id for r in await store.pending_outbox("slack:C1:1", limit=2)] == [a, b]
        row = await store.get_outbox(b)
        assert row is not None and row.payload == {"text": "결정"} and row.edit_of == a
        assert (row.attempts, row.platform_message_id, row.next_attempt_at) == (0, None, None)

        retry_at = NOW + timedelta(seconds=2)
        async with store.transaction() as tx:
            await tx.mark_outbox(a, "sent", platform_message_id="1.5", at=NOW)
            await tx.mark_outbox(b, "pending", error="rate limited", next_attempt_at=retry_at)
        sent = await store.get_outbox(a)
        assert sent is not None and (sent.status, sent.platform_message_id, sent.attempts) == (
            "sent", "1.5", 1)
        waiting = await store.get_outbox(b)
        assert waiting is not None
        assert (waiting.status, waiting.last_error, waiting.attempts, waiting.next_attempt_at) == (
            "pending", "rate limited", 1, retry_at)
        async with store.transaction() as tx:
            # A later mark keeps the platform id it does not know, and clears the error.
            await tx.mark_outbox(a, "sent")
            await tx.mark_outbox(b, "failed", error="gone")
        again = await store.get_outbox(a)
        assert again is not None and again.platform_message_id == "1.5" and again.attempts == 2
        assert [r.id for r in await store.pending_outbox("slack:C1:1")] == [c]
        assert await store.get_outbox(999_999) is None

    async def test_two_instances_claiming_one_room_get_disjoint_posts(
        self, backend: Backend, store: Storage
    ) -> None:
        other = await backend.open()  # a second process: its own connection(s)
        room = "slack:C1:1"
        async with store.transaction() as tx:
            await register(tx, "a", "b")
            ids = [await tx.enqueue(room, "notice", {"text": str(n)}, NOW) for n in range(20)]
        lease = NOW + timedelta(seconds=30)
        holders: set[str | None] = set()
        for _ in range(5):
            first, second = await asyncio.gather(
                store.claim_outbox(room, "a", NOW, lease),
                other.claim_outbox(room, "b", NOW, lease),
            )
            assert not {r.id for r in first} & {r.id for r in second}
            # Whoever won holds a run of the room's posts from the first, in order;
            # the other holds none. (Row locks are taken one by one, so a claim
            # racing another may get a shorter run, or none.)
            got = sorted([r.id for r in first] + [r.id for r in second])
            assert got == ids[: len(got)]
            assert not (first and second)
            holders |= {r.claimed_by for r in first + second}
        assert len(holders) == 1  # one instance held them every time
        holder = holders.pop()
        for claimer, name in ((store, "a"), (other, "b")):
            again = await claimer.claim_outbox(room, name, NOW, lease)
            assert [r.id for r in again] == (ids if name == holder else [])

    async def test_an_expired_outbox_lease_may_be_claimed_again(self, store: Storage) -> None:
        room = "slack:C1:1"
        async with store.transaction() as tx:
            await register(tx, "a", "b")
            a = await tx.enqueue(room, "notice", {}, NOW)
            b = await tx.enqueue(room, "notice", {}, NOW)
            c = await tx.enqueue(room, "notice", {}, NOW)
            await tx.enqueue("slack:C2:1", "notice", {}, NOW)
        lease = NOW + timedelta(seconds=30)
        claimed = await store.claim_outbox(room, "a", NOW, lease)
        assert [r.id for r in claimed] == [a, b, c]
        stored = await store.get_outbox(a)
        assert stored is not None and (stored.claimed_by, stored.lease_until) == ("a", lease)
        assert await store.claim_outbox(room, "b", NOW + timedelta(seconds=29), lease) == []
        later = NOW + timedelta(seconds=31)
        taken = await store.claim_outbox(room, "b", later, later + timedelta(seconds=30))
        assert [r.id for r in taken] == [a, b, c] and {r.claimed_by for r in taken} == {"b"}
        # Sent posts leave the claim; a post waiting for its retry stops the run.
        async with store.transaction() as tx:
            await tx.mark_outbox(a, "sent", at=later)
            await tx.mark_outbox(b, "pending", error="x", next_attempt_at=later + timedelta(1))
        row = await store.get_outbox(b)
        assert row is not None and row.claimed_by is None
        assert await store.claim_outbox(room, "b", later, later) == []
        # An instance that stops cleanly releases what it held.
        async with store.transaction() as tx:
            await tx.remove_instance("b")
        held = await store.get_outbox(c)
        assert held is not None and held.claimed_by is None

    async def test_a_claim_of_an_unregistered_instance_holds_nothing(
        self, store: Storage
    ) -> None:
        async with store.transaction() as tx:
            await register(tx, "b")
            a = await tx.enqueue("slack:C1:1", "notice", {}, NOW)
        lease = NOW + timedelta(seconds=30)
        assert [r.id for r in await store.claim_outbox("slack:C1:1", "gone", NOW, lease)] == [a]
        assert [r.id for r in await store.claim_outbox("slack:C1:1", "b", NOW, lease)] == [a]
        assert await store.claim_outbox("slack:C1:1", "gone", NOW, lease) == []

    async def test_instances_register_beat_and_leave(self, store: Storage) -> None:
        row = InstanceRow(id="i1", host="h", pid=42, started_at=NOW, last_seen=NOW)
        async with store.transaction() as tx:
            await tx.save_instance(row)
            await tx.save_instance(row.model_copy(update={"id": "i2", "pid": 43}))
        later = NOW + timedelta(seconds=5)
        async with store.transaction() as tx:
            await tx.save_instance(row.model_copy(update={"last_seen": later}))
        assert await store.instances() == [
            row.model_copy(update={"last_seen": later}),
            row.model_copy(update={"id": "i2", "pid": 43}),
        ]
        async with store.transaction() as tx:
            await tx.remove_instance("i1")
        assert [i.id for i in await store.instances()] == ["i2"]

    async def test_pending_rooms_are_those_of_the_platforms_asked(self, store: Storage) -> None:
        async with store.transaction() as tx:
            for room in ("slack:C1:1", "slack:C1:1", "slack:C2:", "discord:D:1", "console:x:"):
                await tx.enqueue(room, "notice", {}, NOW)
            sent = await tx.enqueue("slack:C9:1", "notice", {}, NOW)
            await tx.mark_outbox(sent, "sent", at=NOW)
        assert sorted(await store.pending_rooms(["slack"])) == ["slack:C1:1", "slack:C2:"]
        assert sorted(await store.pending_rooms(["discord", "slack"])) == [
            "discord:D:1", "slack:C1:1", "slack:C2:"]
        assert await store.pending_rooms([]) == []
        assert len(await store.pending_rooms(["slack", "discord", "console"], limit=2)) == 2
