"""Discord adapter: threads as rooms, persistent buttons, digit answers, /arbiter."""

from adapters.discord.runner import DiscordAdapter

__all__ = ["DiscordAdapter"]
