"""The arbiter's system prompt and every user-facing string."""

from importlib import resources


def arbiter_system_prompt() -> str:
    return resources.files(__package__).joinpath("arbiter.md").read_text(encoding="utf-8")
