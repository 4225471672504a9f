"""Button ids that survive restarts: they carry the escalation and the option.

Both Slack (`value`/`action_id`) and Discord (`custom_id`, max 100 chars) use
the same encoding, so no per-message registry is needed after a restart.
"""

from __future__ import annotations

import re

PREFIX = "tribunal:esc"
_PATTERN = re.compile(r"^tribunal:esc:(?P<esc>[0-9]{1,12}):(?P<opt>[0-9]{1,3})$")
# discord.ui.DynamicItem template (same grammar as _PATTERN).
DYNAMIC_TEMPLATE = r"tribunal:esc:(?P<esc>[0-9]{1,12}):(?P<opt>[0-9]{1,3})"


def encode(escalation_id: int, option: int) -> str:
    return f"{PREFIX}:{escalation_id}:{option}"


def decode(value: str) -> tuple[int, int] | None:
    """(escalation id, option) or None for anything that is not ours."""
    match = _PATTERN.match(value.strip()) if isinstance(value, str) else None
    if match is None:
        return None
    return int(match["esc"]), int(match["opt"])
