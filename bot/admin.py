"""Executing `/arbiter` subcommands; adapters only translate.

Changes apply to the room when the command is given inside a room (a Discord
thread), otherwise to the whole channel. Every change is audited.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from bot import rulings, telemetry
from bot.channels import ChannelDirectory, channel_scope
from bot.clock import Clock
from bot.commands import ROOM_SUBCOMMANDS, Command, CommandError, parse_command
from bot.config import TUNABLE, SettingsError, check_room_settings
from bot.finding import Finding
from bot.i18n import history_text, resolve, trigger_name
from bot.markup import mention, mentions, moment, strip, thread
from bot.models import CommandReply, CommandRequest, RoomKey
from bot.state import RoomState
from bot.transitions import AlreadyApplied, Effects, Transitions
from prompts.strings import keys, t
from storage.base import ArbitrationRow, Storage, Transaction

log = logging.getLogger(__name__)

_LANG: ContextVar[str | None] = ContextVar("tribunal_command_language", default=None)
_SETTING_OF = {"threshold": "stall_threshold", "max-rounds": "max_rounds"}


@dataclass(slots=True)
class Claim:
    """A stored command being applied (`bot.command_flow`): the change it makes
    marks the stored action applied in the same transaction, so a crash or a
    second task can never apply it twice, nor lose it once acknowledged.

    `effects` are what the change asks for (a summon's arbitration and its
    posts); the flow runs them once the reply is queued, so posting them (which
    can take seconds, and a crash) never comes between the change and its reply.
    """

    action_id: int
    taken: bool = False
    effects: list[tuple[RoomKey, Effects]] = field(default_factory=list)


_CLAIM: ContextVar[Claim | None] = ContextVar("tribunal_command_claim", default=None)


class AdminCommands:
    def __init__(
        self, *, storage: Storage, clock: Clock, channels: ChannelDirectory, admin_ids: list[str],
        default_language: str, transitions: Transitions,
        run_effects: Callable[[RoomKey, Effects], Awaitable[None]],
        room_language: Callable[[RoomKey], Awaitable[str]],
    ) -> None:
        self.storage = storage
        self.clock = clock
        self.channels = channels
        self.admin_ids = admin_ids
        self.default_language = default_language
        self.transitions = transitions
        self.run_effects = run_effects  # the engine: starts the summoned arbitration
        self.room_language = room_language  # bot.i18n: the language a room is written in

    async def handle(self, request: CommandRequest, *, claim: Claim | None = None) -> CommandReply:
        """Run one command. With `claim` (a stored command), a change marks the
        stored action applied in its own transaction; raises AlreadyApplied when
        another task did first."""
        _CLAIM.set(claim)
        elsewhere = request.typed_in is not None and request.typed_in != request.channel
        try:
            # A thread of another channel is refused in the language of the
            # channel the command was typed in.
            lang = await self._language(
                request.model_copy(update={"channel": request.typed_in, "thread": None})
                if elsewhere else request)
        except Exception:
            log.exception("/arbiter: the room's language could not be read")
            lang = self.default_language
        # A context variable, not an attribute: commands for different rooms
        # run concurrently, each in its own task (and so its own context).
        _LANG.set(lang)
        if elsewhere:
            # A command acts where it is typed: its reply, and who may see the
            # room, stay with that channel's members.
            return CommandReply(text=self._t("cmd_thread_elsewhere"), ok=False)
        parsed = parse_command(request.text, request.platform)
        if isinstance(parsed, CommandError):
            return CommandReply(text=parsed.text(lang, request.platform), ok=False)
        is_admin = request.is_platform_admin or request.user_id in self.admin_ids
        if parsed.changes_state and not is_admin:
            return CommandReply(text=self._t("cmd_not_admin"), ok=False)
        try:
            if await self._unseen_thread(request, parsed):
                # Not an empty status, nor an arbitration of nothing.
                return CommandReply(text=self._t("cmd_unknown_thread"), ok=False)
            scope = await self._scope_note(request, parsed)
            handler = getattr(self, "_" + parsed.name.replace("-", "_"))
            reply: CommandReply = await handler(request, parsed)
        except AlreadyApplied:
            raise
        except Exception:
            log.exception("/arbiter %s failed", parsed.name)
            return CommandReply(text=self._t("cmd_failed"), ok=False)
        if scope is not None:
            reply.text = f"{scope}\n{reply.text}"
        return reply

    async def _unseen_thread(self, request: CommandRequest, cmd: Command) -> bool:
        """A room subcommand naming a thread Tribunal has no messages from."""
        if cmd.name not in ROOM_SUBCOMMANDS or not request.thread:
            return False
        room = RoomKey(request.platform, request.channel, request.thread)
        return await self.storage.load_room_state(room.id) is None

    async def _scope_note(self, request: CommandRequest, cmd: Command) -> str | None:
        """Given no thread, a room subcommand acts on the channel's latest room:
        the line that says which (and how to name a thread on this platform)."""
        if cmd.name not in ROOM_SUBCOMMANDS or request.thread:
            return None
        room = await self._room(request)
        if room is None or room.thread is None:
            return None  # no room yet (the reply says so), or the channel is the room
        note = self._t("scope_latest", thread=thread(room.id))
        hint = f"scope_hint_{request.platform}"
        if hint in keys():
            note += " " + self._t(hint, name=cmd.name)
        return note

    async def _language(self, request: CommandRequest) -> str:
        """The language of the room the command is about (its latest room when
        given in a channel); the channel's or the global one when it has none."""
        room = await self._room(request)
        if room is None:
            configured = await self.channels.get(request.platform, request.channel)
            return resolve(configured.settings.get("language"), None, self.default_language)
        return await self.room_language(room)

    @property
    def lang(self) -> str:
        return _LANG.get() or self.default_language

    def _t(self, key: str, /, **fields: Any) -> str:
        return t(key, self.lang, **fields)

    async def _room(self, request: CommandRequest) -> RoomKey | None:
        if request.thread:
            return RoomKey(request.platform, request.channel, request.thread)
        latest = await self.storage.latest_room(request.platform, request.channel)
        return RoomKey.parse(latest) if latest else None

    async def _audit(
        self, tx: Transaction, request: CommandRequest, action: str, scope: str,
        before: Any, after: Any,
    ) -> None:
        """Who changed what, before and after, in the transaction making the change.

        Every change is audited, so this is also where a stored command is
        marked applied, in the same commit as its change.
        """
        claim = _CLAIM.get()
        if claim is not None and not claim.taken:
            if not await tx.mark_action_processed(claim.action_id):
                raise AlreadyApplied(f"command {claim.action_id} is applied already")
            claim.taken = True
        await tx.add_audit(
            at=self.clock.now(),
            platform=request.platform,
            channel=request.channel,
            user_id=request.user_id,
            action=action,
            scope=scope,
            before=None if before is None else json.dumps(before, ensure_ascii=False),
            after=json.dumps(after, ensure_ascii=False),
        )

    async def _set(
        self,
        request: CommandRequest,
        key: str,
        value: Any,
        action: str,
        *,
        channel_only: bool = False,
    ) -> Any:
        """Write one setting at room (inside a thread) or channel scope, audited.

        Returns the value it replaced.
        """
        if request.thread and not channel_only:
            room = RoomKey(request.platform, request.channel, request.thread)
            scope, scope_id = "room", room.id
            before = (await self.channels.room_settings(room)).get(key)
        else:
            scope, scope_id = "channel", channel_scope(request.platform, request.channel)
            info = await self.channels.get(request.platform, request.channel)
            before = info.settings.get(key, self.channels.defaults.get(key))
        async with self.storage.transaction() as tx:
            await tx.set_setting(scope, scope_id, key, value)
            await self._audit(tx, request, action, f"{scope}:{scope_id}", before, value)
        self.channels.invalidate(request.platform, request.channel)
        telemetry.setting_changed(platform=request.platform, channel=request.channel,
                                  by=request.user_id, action=action, scope=f"{scope}:{scope_id}",
                                  before=before, after=value)
        return before

    async def _threshold(self, request: CommandRequest, cmd: Command) -> CommandReply:
        return await self._numeric(request, cmd)

    async def _max_rounds(self, request: CommandRequest, cmd: Command) -> CommandReply:
        return await self._numeric(request, cmd)

    async def _numeric(self, request: CommandRequest, cmd: Command) -> CommandReply:
        key = _SETTING_OF[cmd.name]
        try:
            # The parser checked the range already; this is the rule every stored
            # room setting passes, so the two can never drift apart.
            check_room_settings({key: cmd.number})
        except SettingsError as exc:
            return CommandReply(text=f"⚠️ {exc}", ok=False)
        before = await self._set(request, key, cmd.number, cmd.name)
        where = "cmd_set_room" if request.thread else "cmd_set_channel"
        return CommandReply(text=self._t(where, key=key, before=before, after=cmd.number))

    async def _pause(self, request: CommandRequest, cmd: Command) -> CommandReply:
        await self._set(request, "paused", True, "pause", channel_only=True)
        return CommandReply(text=self._t("cmd_paused"))

    async def _resume(self, request: CommandRequest, cmd: Command) -> CommandReply:
        await self._set(request, "paused", None, "resume", channel_only=True)
        return CommandReply(text=self._t("cmd_resumed"))

    async def _roles(self, request: CommandRequest, cmd: Command) -> CommandReply:
        info = await self.channels.get(request.platform, request.channel)
        before = {"owner": info.owner, "reviewer": info.reviewer}
        after = {"owner": cmd.owner, "reviewer": cmd.reviewer}
        scope_id = channel_scope(request.platform, request.channel)
        async with self.storage.transaction() as tx:
            await tx.set_bindings(request.platform, request.channel, "owner", cmd.owner)
            await tx.set_bindings(request.platform, request.channel, "reviewer", cmd.reviewer)
            await self._audit(tx, request, "roles", f"channel:{scope_id}", before, after)
        self.channels.invalidate(request.platform, request.channel)
        telemetry.setting_changed(platform=request.platform, channel=request.channel,
                                  by=request.user_id, action="roles", scope=f"channel:{scope_id}",
                                  before=before, after=after)
        return CommandReply(
            text=self._t("cmd_roles", owner=mentions(cmd.owner), reviewer=mentions(cmd.reviewer))
        )

    async def _summon(self, request: CommandRequest, cmd: Command) -> CommandReply:
        room = await self._room(request)
        if room is None:
            return CommandReply(text=self._t("cmd_no_room"), ok=False)
        async with self.storage.room(room.id) as unit:
            effects = await self.transitions.summon(unit, room)
            if effects is None:
                return CommandReply(text=self._t("cmd_already_waiting"), ok=False)
            await self._audit(
                unit, request, "summon", f"room:{room.id}", None,
                {"arbitration": effects.arbitrations[0]},
            )
        claim = _CLAIM.get()
        if claim is not None:
            claim.effects.append((room, effects))  # run after its reply is queued
        else:
            await self.run_effects(room, effects)  # the arbitration runs in its own task
        return CommandReply(text=self._t("cmd_summoned"))

    async def _status(self, request: CommandRequest, cmd: Command) -> CommandReply:
        info = await self.channels.get(request.platform, request.channel)
        room = await self._room(request)
        yes, no = self._t("yes"), self._t("no")
        watched = yes if info.watched else no
        if info.paused:
            watched = self._t("status_paused", watched=watched)
        lines = [
            self._t("status_watch", watched=watched),
            self._t("status_roles", owner=mentions(info.owner), reviewer=mentions(info.reviewer)),
        ]
        if room is None:
            values = dict(self.channels.defaults)
            values.update(info.settings)
            lines.append(self._t("cmd_no_room"))
        else:
            values = await self.channels.room_settings(room)
            raw = await self.storage.load_room_state(room.id)
            state = RoomState() if raw is None else RoomState.model_validate_json(raw)
            lines.append(self._t(
                "status_room",
                started=moment(state.task_started_at) if state.task_started_at else "-",
                epoch=state.epoch, rounds=state.rounds, stalled=state.stalled_rounds,
                approved=yes if state.approved else no,
            ))
            if state.last_detection:
                d = state.last_detection
                lines.append(self._t(
                    "status_last_detection",
                    trigger=d.get("trigger"),
                    rounds=d.get("rounds"), stalled=d.get("stalled_rounds"),
                    finding=f", {d['finding']}" if d.get("finding") else "",
                ))
            lines.extend(findings_lines(state.findings, self.lang))
            past = await self.storage.room_arbitrations(room.id, limit=1)
            if past:
                lines.append(self._t("status_last_verdict", verdict=past[-1].verdict,
                                     source=past[-1].source, id=past[-1].id))
            if state.awaiting_escalation is not None:
                lines.append(self._t("status_pending", id=state.awaiting_escalation))
        lines.append(self._t(
            "status_thresholds", threshold=values["stall_threshold"],
            max_rounds=values["max_rounds"], max_arbitrations=values["max_arbitrations"],
        ))
        lines.append(self._t("status_language", language=self.lang))
        return CommandReply(text="\n".join(lines))

    async def _history(self, request: CommandRequest, cmd: Command) -> CommandReply:
        room = await self._room(request)
        if room is None:
            return CommandReply(text=self._t("cmd_no_room"))
        rows = await self.storage.room_arbitrations(room.id, limit=10)
        if not rows:
            return CommandReply(text=self._t("history_none"))
        lines = [self._t("history_header")]
        for row in rows:
            first = (row.verdict_text or "").splitlines()[0][:120] if row.verdict_text else ""
            # Room and model text: markers stripped, the time marked by the core.
            lines.append(
                f"#{row.id} {moment(row.created_at)} {row.verdict}"
                f" [{trigger_name(row.trigger, self.lang)}, {self._source(row.source)}]"
                f" {strip(first)}"
            )
            lines.extend(f"    {line}" for line in await self._history_details(row))
        return CommandReply(text="\n".join(lines))

    def _source(self, source: str | None) -> str:
        """Where a verdict came from, in words (an unknown code, as stored)."""
        key = f"source_{source}"
        return self._t(key) if source and key in keys() else (source or "-")

    async def _history_details(self, row: ArbitrationRow) -> list[str]:
        """Under a verdict: its ruling on findings, and the human's answer (and
        the ruling that answer made) when it escalated."""
        out = []
        if row.ruling:
            applied = row.ruling.get("applied", True)
            key = "ruling_sentence" if applied else "history_ruling_unapplied"
            out.append(rulings.sentence(row.ruling, self.lang, key))
        if row.verdict != "ESCALATE":
            return out
        answer = await self.storage.get_escalation(row.id)
        if answer is None or answer.status == "cancelled":
            return out
        if answer.status != "answered" or answer.answered_at is None:
            out.append(self._t("history_waiting"))
            return out
        by, at = mention(answer.answered_by or "?"), moment(answer.answered_at)
        if answer.answer_option is not None:
            out.append(self._t("history_answer", by=by, at=at, n=answer.answer_option,
                               label=answer.answer_label or ""))
        else:
            text = " ".join((answer.answer_text or "").split())
            out.append(self._t("history_answer_text", by=by, at=at,
                               text=text if len(text) <= 120 else text[:119] + "…"))
        if answer.answer_ruling:
            out.append(rulings.sentence(answer.answer_ruling, self.lang, "history_user_ruling"))
        return out

    async def configure_channel(
        self,
        platform: str,
        channel: str,
        *,
        owner: list[str],
        reviewer: list[str],
        settings: dict[str, Any],
    ) -> None:
        """Bindings and tunables from a transcript's room line (replay only; not audited).

        Raises SettingsError, storing nothing, if a tunable is invalid.
        """
        scope_id = channel_scope(platform, channel)
        settings = check_room_settings({k: v for k, v in settings.items() if k in TUNABLE})
        async with self.storage.transaction() as tx:
            await tx.set_setting("channel", scope_id, "watched", True)
            if owner or reviewer:
                await tx.set_bindings(platform, channel, "owner", owner)
                await tx.set_bindings(platform, channel, "reviewer", reviewer)
            for key, value in settings.items():
                await tx.set_setting("channel", scope_id, key, value)
        self.channels.invalidate(platform, channel)


def findings_lines(findings: list[Finding], lang: str = "ko") -> list[str]:
    """`/arbiter status`: the task's open findings, each with its round-by-round history."""
    open_findings = [f for f in findings if f.is_open]
    if not open_findings:
        return [t("findings_none", lang)]
    lines = [t("findings_header", lang, count=len(open_findings))]
    for f in open_findings:
        lines.append(
            t("finding_line", lang, label=f.label, author=mention(f.author), stall=f.stall,
              summary=f.summary)
        )
        if f.history:
            shown = "; ".join(history_text(h, lang) for h in f.history[-6:])
            lines.append(t("finding_history", lang, history=shown))
    return lines
