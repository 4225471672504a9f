"""`tribunal status`: what the database says, for an operator.

Read-only apart from opening the database (which applies pending
migrations, as every command does): the instances and whether each is
alive (its `last_seen` within `TRIBUNAL_LEASE_SECONDS`) with its Discord
shard settings, warnings about those settings taken together (`bot.shards`),
the named leases (who holds Discord's gateway or each shard, and each
catch-up, until when; `bot.leases`), the rooms and how
many have an open task, each room's open findings (its stored ledger:
`open` or `contested`), the escalations waiting for a human and the last
arbitrations.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from typing import Any

from bot import shards
from bot.instances import is_alive
from bot.leases import is_live
from bot.state import RoomState
from storage.base import DiscordShards, InstanceRow, Storage

log = logging.getLogger(__name__)

ARBITRATIONS = 10


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


async def collect(storage: Storage, now: datetime, lease_seconds: float) -> dict[str, Any]:
    """The status as one JSON-able object."""
    rows = await storage.instances()
    instances = [
        {"id": row.id, "host": row.host, "pid": row.pid, "started_at": _iso(row.started_at),
         "last_seen": _iso(row.last_seen), "alive": is_alive(row, now, lease_seconds),
         "discord": None if row.discord is None else row.discord.model_dump()}
        for row in rows
    ]
    leases = await _leases(storage, rows, now)
    rooms = 0
    open_tasks = 0
    findings: list[dict[str, Any]] = []
    for room_id, text in await storage.room_states():
        rooms += 1
        try:
            state = RoomState.model_validate_json(text)
        except ValueError:
            log.warning("room %s: stored state unreadable; not counted", room_id)
            continue
        if state.task_active and not state.approved:
            open_tasks += 1
        open_findings = [
            {"label": f.label, "status": str(f.status), "author": f.author, "summary": f.summary}
            for f in state.findings if f.is_open
        ]
        if open_findings:
            findings.append({"room": room_id, "findings": open_findings})
    escalations = [
        {"id": row.id, "room": row.room_id, "created_at": _iso(row.created_at),
         "reminded_at": _iso(row.reminded_at)}
        for row in await storage.pending_escalations()
    ]
    arbitrations = [
        {"id": row.id, "room": row.room_id, "trigger": row.trigger, "status": row.status,
         "verdict": row.verdict, "source": row.source,
         "time": _iso(row.finished_at or row.created_at)}
        for row in await storage.recent_arbitrations(ARBITRATIONS)
    ]
    return {
        "instances_alive": sum(1 for i in instances if i["alive"]),
        "instances": instances,
        "warnings": shards.problems(rows, now, lease_seconds),
        "leases": leases,
        "rooms": {"count": rooms, "open_task": open_tasks},
        "open_findings": findings,
        "pending_escalations": escalations,
        "arbitrations": arbitrations,
    }


async def _leases(storage: Storage, rows: list[InstanceRow],
                  now: datetime) -> list[dict[str, Any]]:
    """Every named lease: `held` (by a registered instance, not run out),
    `ran out` (its holder stopped renewing it, or is no longer registered: the
    next claim takes it) or `free` (released); `finished`: its latest claim
    was released with its work done (a catch-up)."""
    instances = {row.id: row for row in rows}
    out = []
    for row in await storage.leases():
        holder = instances.get(row.holder) if row.holder is not None else None
        state = ("held" if is_live(row, now, set(instances))
                 else "free" if row.holder is None else "ran out")
        out.append({
            "name": row.name, "state": state, "holder": row.holder,
            "host": holder.host if holder else None, "pid": holder.pid if holder else None,
            "until": _iso(row.lease_until),
            "seconds_left": None if row.lease_until is None
            else round((row.lease_until - now).total_seconds(), 1),
            "token": row.fence, "finished": row.fence > 0 and row.finished == row.fence,
        })
    return out


def _lease_line(lease: dict[str, Any]) -> str:
    token = f"token {lease['token']}"
    if lease["state"] == "free":
        done = ", finished" if lease["finished"] else ""
        return f"  {lease['name']}  free ({token}{done})"
    who = lease["holder"] if lease["host"] is None else (
        f"{lease['holder']} ({lease['host']} pid {lease['pid']})")
    if lease["state"] == "held":
        return (f"  {lease['name']}  held by {who} until {lease['until']} "
                f"({lease['seconds_left']:g} s left, {token})")
    gone = "" if lease["host"] is not None else ", no longer registered"
    return f"  {lease['name']}  ran out: {who}{gone}, until {lease['until']} ({token})"


def as_json(status: dict[str, Any]) -> str:
    return json.dumps(status, ensure_ascii=False, sort_keys=True)


def as_text(status: dict[str, Any]) -> str:
    lines = [f"instances alive: {status['instances_alive']} of {len(status['instances'])}"]
    for i in status["instances"]:
        state = "alive" if i["alive"] else "dead"
        line = f"  {i['id']}  {i['host']} pid {i['pid']}  {state}, last seen {i['last_seen']}"
        if i["discord"] is not None:
            line += f", {shards.settings_of(DiscordShards.model_validate(i['discord']))}"
        lines.append(line)
    for warning in status["warnings"]:
        lines.append(f"warning: {warning}")
    held = sum(1 for lease in status["leases"] if lease["state"] == "held")
    lines.append(f"leases: {len(status['leases'])} ({held} held)")
    lines.extend(_lease_line(lease) for lease in status["leases"])
    rooms = status["rooms"]
    lines.append(f"rooms: {rooms['count']} ({rooms['open_task']} with an open task)")
    count = sum(len(r["findings"]) for r in status["open_findings"])
    lines.append(f"open findings: {count}")
    for room in status["open_findings"]:
        lines.append(f"  {room['room']}: {len(room['findings'])}")
        for f in room["findings"]:
            lines.append(f"    {f['label']} ({f['status']}) {f['summary']}")
    lines.append(f"pending escalations: {len(status['pending_escalations'])}")
    for e in status["pending_escalations"]:
        lines.append(f"  #{e['id']}  {e['room']}  since {e['created_at']}")
    lines.append(f"last arbitrations: {len(status['arbitrations'])}")
    for a in status["arbitrations"]:
        lines.append(f"  #{a['id']}  {a['room']}  {a['trigger']}  {a['verdict'] or a['status']}"
                     f"  {a['source'] or '-'}  {a['time']}")
    return "\n".join(lines)
