"""The persistent escalation button (a `discord.ui.DynamicItem`).

Its custom_id (`bot.buttons.encode`) carries the escalation and the option, so
after a restart the client only has to register the class once
(`Client.add_dynamic_items`); no per-message view registry is kept.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

import discord

from bot import buttons

# Discord limits: 80 characters a button label, 5 buttons a row, 5 rows a message.
LABEL_LIMIT = 80
MAX_BUTTONS = 25


class ClickHandler(Protocol):
    async def handle_click(
        self, interaction: discord.Interaction, escalation_id: int, option: int
    ) -> None: ...


def button_label(n: int, label: str) -> str:
    text = f"{n}. {' '.join(label.split())}"
    return text if len(text) <= LABEL_LIMIT else text[: LABEL_LIMIT - 1] + "…"


class EscalationButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]], template=buttons.DYNAMIC_TEMPLATE
):
    """One option of one escalation; the click goes to the client's handler."""

    def __init__(
        self,
        escalation_id: int,
        option: int,
        *,
        label: str | None = None,
        disabled: bool = False,
        chosen: bool = False,
    ) -> None:
        style = discord.ButtonStyle.success if chosen else discord.ButtonStyle.secondary
        if not disabled:
            style = discord.ButtonStyle.primary
        super().__init__(
            discord.ui.Button(
                label=label or str(option),
                style=style,
                custom_id=buttons.encode(escalation_id, option),
                disabled=disabled,
            )
        )
        self.escalation_id = escalation_id
        self.option = option

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction,
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> EscalationButton:
        label = getattr(item, "label", None)
        return cls(int(match["esc"]), int(match["opt"]), label=label)

    async def callback(self, interaction: discord.Interaction) -> None:
        handler: ClickHandler = interaction.client  # type: ignore[assignment]
        await handler.handle_click(interaction, self.escalation_id, self.option)
