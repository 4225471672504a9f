"""The `/arbiter` app-command group: Discord options -> the core's command text.

Every subcommand only rebuilds the text a Slack user would type after
`/arbiter` and hands it to the client; parsing, validation, permissions for
changes and the audit log all live in the core. The group is guild-only and
has no `default_permissions`, because members must still see `status` and
`history`; admin rights are checked in code on every call.

Options say what Discord's client can check before sending: `required`, and
`min_value` / `max_value` for the numbers (the core's ranges). An option
holds one user, so `roles` takes up to three reviewers as `reviewer`,
`reviewer2` and `reviewer3`; they become repeated `reviewer:` arguments, as
a Slack user types them.
"""

from __future__ import annotations

from typing import Protocol

import discord
from discord import app_commands

from adapters.discord.translate import command_text
from bot.config import MAX_ROUNDS_RANGE, STALL_THRESHOLD_RANGE


class CommandHandler(Protocol):
    async def handle_command(self, interaction: discord.Interaction, text: str) -> None: ...


def _handler(interaction: discord.Interaction) -> CommandHandler:
    return interaction.client  # type: ignore[return-value]


def _user_ref(user: discord.abc.User | None) -> str | None:
    return f"<@{user.id}>" if user is not None else None


def build_group() -> app_commands.Group:
    group = app_commands.Group(
        name="arbiter",
        description="Tribunal: deadlock arbiter for agent rooms",
        guild_only=True,
    )

    @group.command(name="status", description="Room state, counters, thresholds, last verdict")
    async def status(interaction: discord.Interaction) -> None:
        await _handler(interaction).handle_command(interaction, command_text("status"))

    @group.command(name="threshold", description="Rounds without progress before arbitration")
    @app_commands.describe(
        n=f"rounds without progress ({STALL_THRESHOLD_RANGE[0]}-{STALL_THRESHOLD_RANGE[1]})"
    )
    async def threshold(
        interaction: discord.Interaction,
        n: app_commands.Range[int, STALL_THRESHOLD_RANGE[0], STALL_THRESHOLD_RANGE[1]],
    ) -> None:
        await _handler(interaction).handle_command(interaction, command_text("threshold", n))

    @group.command(name="max-rounds", description="Rounds in one task before arbitration")
    @app_commands.describe(n=f"rounds ({MAX_ROUNDS_RANGE[0]}-{MAX_ROUNDS_RANGE[1]})")
    async def max_rounds(
        interaction: discord.Interaction,
        n: app_commands.Range[int, MAX_ROUNDS_RANGE[0], MAX_ROUNDS_RANGE[1]],
    ) -> None:
        await _handler(interaction).handle_command(interaction, command_text("max-rounds", n))

    @group.command(name="summon", description="Arbitrate this room now")
    async def summon(interaction: discord.Interaction) -> None:
        await _handler(interaction).handle_command(interaction, command_text("summon"))

    @group.command(name="pause", description="Stop watching this channel")
    async def pause(interaction: discord.Interaction) -> None:
        await _handler(interaction).handle_command(interaction, command_text("pause"))

    @group.command(name="resume", description="Start watching this channel again")
    async def resume(interaction: discord.Interaction) -> None:
        await _handler(interaction).handle_command(interaction, command_text("resume"))

    @group.command(name="roles", description="Bind the owner and reviewer agents of this channel")
    @app_commands.describe(owner="the implementing agent", reviewer="the verifying agent",
                           reviewer2="a second verifying agent",
                           reviewer3="a third verifying agent")
    async def roles(
        interaction: discord.Interaction,
        owner: discord.User,
        reviewer: discord.User,
        reviewer2: discord.User | None = None,
        reviewer3: discord.User | None = None,
    ) -> None:
        parts = [f"owner:{_user_ref(owner)}"]
        parts.extend(f"reviewer:{_user_ref(user)}" for user in (reviewer, reviewer2, reviewer3)
                     if user is not None)
        await _handler(interaction).handle_command(interaction, command_text("roles", *parts))

    @group.command(name="history", description="Recent verdicts in this room")
    async def history(interaction: discord.Interaction) -> None:
        await _handler(interaction).handle_command(interaction, command_text("history"))

    return group
