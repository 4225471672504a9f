"""Split long text for platforms with message size limits.

Shared by every adapter (Discord: 2000 chars a message; Slack: 3000 chars a
section). Splits on line boundaries; a code fence open at a cut is closed at
the end of the chunk and reopened (same info string) at the start of the next,
so each chunk renders on its own.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^\s*(```|~~~)(.*)$")


def _hard_split(line: str, size: int) -> list[str]:
    return [line[i : i + size] for i in range(0, len(line), size)] or [""]


def split_text(text: str, limit: int) -> list[str]:
    """Chunks of at most `limit` characters that together carry all of `text`."""
    if limit < 20:
        raise ValueError("limit too small to carry fences")
    if len(text) <= limit:
        return [text]
    chunks: list[str] = []
    current: list[str] = []
    length = 0
    fence: str | None = None  # the opening line of the fence we are inside
    fence_marker = ""

    def close_chunk() -> None:
        nonlocal current, length
        body = "\n".join(current)
        if fence is not None:
            body += "\n" + fence_marker
        chunks.append(body)
        current = [fence] if fence is not None else []
        length = len(fence) + 1 if fence is not None else 0

    for raw_line in text.split("\n"):
        match = _FENCE.match(raw_line)
        # A line that opens a fence needs room for the closing marker too: the
        # chunk it ends up in may have to close that fence.
        marker = fence_marker if fence is not None else (match.group(1) if match else "")
        # Reserve room for a closing fence marker plus newline.
        budget = limit - (len(marker) + 1 if marker else 0) - 4
        pieces = _hard_split(raw_line, max(budget - (len(fence) + 1 if fence else 0), 1))
        for piece in pieces:
            extra = len(piece) + (1 if current else 0)
            reserve = len(marker) + 1 if marker else 0
            if current and length + extra + reserve > limit:
                close_chunk()
                extra = len(piece) + (1 if current else 0)
            current.append(piece)
            length += extra
        if match:
            if fence is None:
                fence, fence_marker = raw_line.strip(), match.group(1)
            elif match.group(1) == fence_marker and not match.group(2).strip():
                fence, fence_marker = None, ""
    if current and (len(current) > 1 or current[0] != fence):
        chunks.append("\n".join(current))
    return [c for c in chunks if c.strip()] or [text[:limit]]
