"""Reading a human's reply to an escalation. Pure.

A reply that is only an option number answers with that option: `2`, `2번`,
`２` (full-width), `2.`, `#2`, `옵션 2`, `option 2`, `선택 2`. Anything else is free text.
"""

from __future__ import annotations

import re
import unicodedata

_DIGIT_REPLY = re.compile(
    r"^\s*(?:(?:option|opt|옵션|선택지?|choice)\s*|#\s*|no\.?\s*)?"
    r"(?P<n>\d{1,3})\s*(?:번|\.|\)|번\s*(?:이요|요|으로|선택)?)?\s*[.!]?\s*$",
    re.IGNORECASE,
)


def parse_digit_answer(text: str) -> int | None:
    """The option number if the whole reply is one, else None (free text)."""
    normalized = unicodedata.normalize("NFKC", text or "").strip()
    if not normalized or len(normalized) > 24:
        return None
    match = _DIGIT_REPLY.match(normalized)
    return int(match.group("n")) if match else None
