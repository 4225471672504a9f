"""Detector scenarios on the pure state machine (no storage)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot import detection
from bot.detection import Approved, Deadlock, RoomState, Thresholds
from bot.models import Role, Trigger

T0 = datetime(2026, 11, 29, 10, 0, tzinfo=UTC)

OBJECTION = [
    "src/auth.py:42 `login()` does not check for a null session. Please add the check.",
    "The null session check in `login()` at src/auth.py:42 is still missing. Add it.",
    "Still missing: `login()` in src/auth.py:42 has no null session check, please add it.",
    "Again, please add the null session check to `login()` (src/auth.py:42); still missing.",
]
PUSHBACK = [
    "I believe the current implementation is correct; the middleware already rejects null sessions.",
    "As I said, the middleware already rejects null sessions, so the current implementation is correct.",
    "The current implementation is correct: null sessions are already rejected by the middleware.",
    "Null sessions are rejected by the middleware already; the current implementation is correct.",
]


class Sim:
    """Feeds messages into a RoomState like the engine would (replay semantics)."""

    def __init__(self, **kw: object) -> None:
        self.state = RoomState()
        self.thresholds = Thresholds(turn_quiet_seconds=None, **kw)  # type: ignore[arg-type]
        self.events: list[detection.Event] = []
        self.now = T0
        self.n = 0

    def say(self, role: Role, text: str, *, gap: float = 1.0,
            author: str | None = None) -> list[detection.Event]:
        self.n += 1
        self.now += timedelta(seconds=gap)
        if role is Role.USER:
            new = detection.close_turn(self.state, self.thresholds)
            detection.start_epoch(self.state)
        else:
            new = detection.add_agent_message(
                self.state, role, f"m{self.n}", author or role.value, text, self.now, self.thresholds
            )
        self.events += new
        return new

    def end(self) -> list[detection.Event]:
        new = detection.close_turn(self.state, self.thresholds)
        self.events += new
        return new

    def deadlocks(self) -> list[Deadlock]:
        return [e for e in self.events if isinstance(e, Deadlock)]

    def contradictions(self) -> list[Deadlock]:
        return [d for d in self.deadlocks() if d.trigger is Trigger.CONTRADICTION]


def test_circular_argument_deadlocks_after_threshold() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "fix the login bug")
    sim.say(Role.OWNER, "STEP_DONE implemented the login fix in src/auth.py")
    sim.say(Role.REVIEWER, OBJECTION[0])  # round 1 closes at the next owner turn
    sim.say(Role.OWNER, PUSHBACK[0])
    assert sim.state.rounds == 1 and sim.state.stalled_rounds == 0
    sim.say(Role.REVIEWER, OBJECTION[1])
    sim.say(Role.OWNER, PUSHBACK[1])
    assert sim.state.stalled_rounds == 1 and not sim.deadlocks()
    sim.say(Role.REVIEWER, OBJECTION[2])
    sim.end()
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS
    assert deadlock.after_message == "m7"
    assert deadlock.evidence["stalled_rounds"] == 2
    assert deadlock.evidence["rounds"] == 3
    # Turn-to-turn similarity was replaced by the findings ledger:
    # the evidence now says what the round did to each finding.
    round_info = deadlock.evidence["round"]
    assert round_info["progress"] is False
    assert round_info["reviewer_turn"] == 6 and round_info["owner_turn"] == 5
    assert set(round_info["reviewer"].values()) == {"repeated"}
    assert set(round_info["owner"].values()) <= {"declined", "untouched"}
    ledger = deadlock.evidence["ledger"]
    assert ledger and all(f["status"] == "open" and f["stall"] >= 1 for f in ledger)
    assert ledger[0]["history"][0] == "R1: raised"


def test_same_trigger_fires_once_per_epoch() -> None:
    sim = Sim(stall_threshold=1, max_rounds=50)
    sim.say(Role.OWNER, "STEP_DONE implemented")
    sim.say(Role.REVIEWER, OBJECTION[0])
    for i in range(1, 4):
        sim.say(Role.OWNER, PUSHBACK[i])
        sim.say(Role.REVIEWER, OBJECTION[i])
    sim.end()
    assert [d.trigger for d in sim.deadlocks()] == [Trigger.NO_PROGRESS]
    detection.start_epoch(sim.state)  # a verdict or a human message
    sim.say(Role.OWNER, PUSHBACK[0])
    sim.say(Role.REVIEWER, OBJECTION[0])
    sim.say(Role.OWNER, PUSHBACK[1])
    sim.say(Role.REVIEWER, OBJECTION[1])
    sim.end()
    assert [d.trigger for d in sim.deadlocks()] == [Trigger.NO_PROGRESS] * 2


def test_productive_review_then_approval() -> None:
    sim = Sim(stall_threshold=2)
    findings = [
        "src/api/users.py:10 `get_user()` returns 500 on a missing id; return 404.",
        "tests/test_users.py lacks a case for pagination; add `test_page_two`.",
        "docs/api.md still documents the old `/v1/users` path; update it.",
    ]
    fixes = [
        "STEP_DONE return 404 for missing users in src/api/users.py",
        "STEP_DONE added pagination test test_page_two",
        "STEP_DONE updated the docs for the v2 path",
    ]
    sim.say(Role.OWNER, "STEP_DONE first implementation of the users API")
    for fix, finding in zip(fixes, findings, strict=True):
        sim.say(Role.REVIEWER, finding)
        sim.say(Role.OWNER, fix)
        assert sim.state.stalled_rounds == 0
    sim.say(Role.REVIEWER, "**LGTM** all good")
    sim.end()
    assert not sim.deadlocks()
    assert next(e for e in sim.events if isinstance(e, Approved)).after_message == "m8"
    assert sim.state.approved and sim.state.rounds == 0


def test_paraphrased_korean_repeats_deadlock() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.OWNER, "STEP_DONE 세션 갱신 로직을 수정했습니다.")
    sim.say(Role.REVIEWER, "src/auth/session.py:42 `refresh()` 에 토큰 None 체크가 없습니다. 추가해 주세요.")
    sim.say(Role.OWNER, "미들웨어가 None 토큰을 이미 걸러내므로 체크는 필요 없다고 생각합니다.")
    sim.say(Role.REVIEWER, "토큰 None 체크가 여전히 없어요. src/auth/session.py:42 `refresh()` 에 추가해 주세요.")
    sim.say(Role.OWNER, "앞서 말씀드렸듯이 None 토큰은 미들웨어가 이미 걸러내므로 체크가 필요 없습니다.")
    sim.say(Role.REVIEWER, "`refresh()` (src/auth/session.py:42) 에 None 체크를 추가해 주세요. 아직 없습니다.")
    sim.end()
    assert [d.trigger for d in sim.deadlocks()] == [Trigger.NO_PROGRESS]


def test_turn_split_over_several_messages_counts_once() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.OWNER, "STEP_DONE part one")
    sim.say(Role.OWNER, "part two of the same turn")
    sim.say(Role.REVIEWER, OBJECTION[0][:40])
    sim.say(Role.REVIEWER, OBJECTION[0][40:])
    sim.say(Role.OWNER, PUSHBACK[0])
    assert sim.state.rounds == 1
    assert sim.state.turn_seq == 3


def test_quiet_gap_closes_a_turn_in_live_mode() -> None:
    state = RoomState()
    th = Thresholds(turn_quiet_seconds=3)
    detection.add_agent_message(state, Role.OWNER, "a", "o", "first", T0, th)
    detection.add_agent_message(state, Role.OWNER, "b", "o", "same turn", T0 + timedelta(seconds=2), th)
    assert state.turn_seq == 1
    assert detection.close_if_quiet(state, T0 + timedelta(seconds=4), th) == []
    events = detection.close_if_quiet(state, T0 + timedelta(seconds=5), th)
    assert events and state.open_turn is None
    detection.add_agent_message(state, Role.OWNER, "c", "o", "later", T0 + timedelta(seconds=9), th)
    assert state.turn_seq == 2


def test_human_message_resets_epoch() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.OWNER, "STEP_DONE implemented")
    sim.say(Role.REVIEWER, OBJECTION[0])
    sim.say(Role.OWNER, PUSHBACK[0])
    sim.say(Role.REVIEWER, OBJECTION[1])
    sim.say(Role.OWNER, PUSHBACK[1])
    assert sim.state.stalled_rounds == 1
    epoch = sim.state.epoch
    sim.say(Role.USER, "please keep going")
    assert sim.state.epoch == epoch + 1 and sim.state.stalled_rounds == 0 and sim.state.rounds == 0
    sim.say(Role.OWNER, PUSHBACK[2])
    sim.say(Role.REVIEWER, OBJECTION[2])
    sim.end()
    assert not sim.deadlocks()  # the first review of an epoch is always new


def test_blocked_and_needs_context_trigger_immediately() -> None:
    sim = Sim()
    sim.say(Role.OWNER, "BLOCKED: no access to the staging database")
    sim.say(Role.REVIEWER, "ok")
    assert [d.trigger for d in sim.deadlocks()] == [Trigger.BLOCKED]
    assert sim.deadlocks()[0].evidence["status_turn"] == {"role": "owner", "turn": 1}
    sim2 = Sim()
    sim2.say(Role.OWNER, "STEP_DONE done part 1")
    sim2.say(Role.REVIEWER, "Looking at it\n**NEEDS_CONTEXT** which API version is the target?")
    sim2.end()
    assert [d.trigger for d in sim2.deadlocks()] == [Trigger.NEEDS_CONTEXT]


def test_max_rounds_fires_even_with_progress() -> None:
    sim = Sim(stall_threshold=5, max_rounds=3)
    for i in range(3):
        sim.say(Role.OWNER, f"STEP_DONE change number {i} in module_{i}.py")
        sim.say(Role.REVIEWER, f"new finding {i}: module_{i}.py:{i + 1} `func_{i}` is wrong")
    sim.end()
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.MAX_ROUNDS and deadlock.evidence["rounds"] == 3


def test_thresholds_come_from_settings() -> None:
    def run(threshold: int) -> list[Trigger]:
        sim = Sim(stall_threshold=threshold)
        sim.say(Role.OWNER, "STEP_DONE implemented")
        sim.say(Role.REVIEWER, OBJECTION[0])
        sim.say(Role.OWNER, PUSHBACK[0])
        sim.say(Role.REVIEWER, OBJECTION[1])
        sim.end()
        return [d.trigger for d in sim.deadlocks()]

    assert run(1) == [Trigger.NO_PROGRESS]
    assert run(2) == []


def test_nothing_is_judged_while_waiting_for_a_human() -> None:
    sim = Sim(stall_threshold=1)
    sim.state.awaiting_escalation = 7
    sim.say(Role.OWNER, "BLOCKED again")
    sim.say(Role.REVIEWER, OBJECTION[0])
    sim.end()
    assert not sim.deadlocks()


def test_manual_deadlock_records_evidence() -> None:
    state = RoomState(rounds=2, stalled_rounds=1)
    deadlock = detection.manual_deadlock(state, "m9")
    assert deadlock is not None and deadlock.trigger is Trigger.MANUAL
    assert deadlock.evidence["rounds"] == 2
    state.awaiting_escalation = 1
    assert detection.manual_deadlock(state, "m9") is None
