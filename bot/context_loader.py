"""Fetch what the arbiter needs, with bounded, indexed queries.

Cost follows the window, never the length of the room's history: the current
task's last K agent turns (never a turn of an earlier task in the room), the
task's request plus its latest H human messages with a count of the ones in
between, and the task's recent verdicts.
"""

from __future__ import annotations

from typing import Any

from bot.arbiter.base import ArbitrationContext, ContextMessage, ContextTurn, PastVerdict
from bot.detection import Deadlock
from bot.models import Role, RoomKey, Trigger, VerdictKind
from bot.state import RoomState
from bot.status import parse_status
from storage.base import MessageRow, Storage

MAX_HUMAN_MESSAGES = 20  # the latest (TRIBUNAL_HUMAN_MESSAGES); the task's request is kept besides
MAX_VERDICTS = 5


def _turns(rows: list[MessageRow]) -> list[ContextTurn]:
    turns: list[ContextTurn] = []
    current: int | None = None
    for row in rows:
        if row.turn_no != current or not turns:
            current = row.turn_no
            turns.append(
                ContextTurn(
                    role=Role(row.role),
                    author=row.author,
                    started_at=row.ts,
                    text=row.text,
                    parts=[row.text],
                )
            )
        else:
            turns[-1].text += "\n" + row.text
            turns[-1].parts.append(row.text)
    for turn in turns:
        turn.status = parse_status(turn.parts)
    return turns


async def load_context(
    storage: Storage,
    room: RoomKey,
    state: RoomState,
    deadlock: Deadlock,
    settings: dict[str, Any],
    *,
    turns: int,
    human_messages: int = MAX_HUMAN_MESSAGES,
) -> ArbitrationContext:
    humans, omitted_humans = await storage.human_messages(
        room.id, state.task_start_seq, human_messages
    )
    agent_rows, omitted_turns = await storage.agent_turn_messages(
        room.id, turns, since_seq=state.task_start_seq
    )
    verdicts = await storage.room_arbitrations(
        room.id, since=state.task_started_at, limit=MAX_VERDICTS
    )
    return ArbitrationContext(
        room=room,
        language=str(settings.get("language", "ko")),
        trigger=deadlock.trigger,
        evidence=deadlock.evidence,
        rounds=state.rounds,
        stalled_rounds=state.stalled_rounds,
        stall_threshold=int(settings["stall_threshold"]),
        max_rounds=int(settings["max_rounds"]),
        task_started_at=state.task_started_at,
        earlier_verdicts=[
            PastVerdict(
                kind=VerdictKind(v.verdict),
                trigger=Trigger(v.trigger),
                at=v.created_at,
                text=v.verdict_text or "",
            )
            for v in verdicts
            if v.verdict
        ],
        human_messages=[
            ContextMessage(role=Role.USER, author=m.author, ts=m.ts, text=m.text) for m in humans
        ],
        omitted_human_messages=omitted_humans,
        # Storage returns the first message and the latest when it leaves some out.
        first_human_is_request=bool(humans)
        and (omitted_humans > 0 or humans[0].seq == state.task_start_seq),
        agent_turns=_turns(agent_rows),
        omitted_turns=omitted_turns,
        arbitrations_since_human=state.arbitrations_since_human,
        max_arbitrations=int(settings["max_arbitrations"]),
        proceed_earlier_same_trigger=deadlock.trigger in state.proceed_triggers,
    )
