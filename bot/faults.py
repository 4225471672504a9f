"""Fault injection for crash tests, off unless `TRIBUNAL_FAULT` names a point.

Crash tests run the real `tribunal run` and SIGKILL it; these points make the
window they aim at wide and certain instead of a race. `TRIBUNAL_FAULT` is
`<point>` or `<point>:<n>` (the n-th time the process reaches the point,
1 when omitted). Points:

- `after_store`: an incoming event (a message, a click, a command) is stored
  (and so acknowledged) but never processed, as if the process died right
  after the acknowledgement. Killing the process then leaves every
  acknowledged event in storage only; the next start must process them all.
  (It does not kill: the test does; `:n` is ignored.)
- `after_ack`: Slack HTTP mode wrote a 200 (an event, a click or a slash
  command; the request's response is flushed to the socket first); the
  process kills itself. What was acknowledged must be in storage.
- `before_post`: the outbox is about to call the platform for a post or an
  edit; the process kills itself (SIGKILL). Nothing reached the platform.
- `after_post_before_record`: the platform accepted the post (or edit) but
  the outbox has not recorded it as sent; the process kills itself. The
  next start must find the post on the platform instead of posting it again
  (the idempotency key, docs/ARCHITECTURE.md).
- `after_record`: the post is recorded as sent; the process kills itself.
- `after_apply`: a stored message was applied to its room (committed); the
  process kills itself before the room's next message.
- `after_action`: a stored click or command was applied (committed, its
  reply queued); the process kills itself before its posts are sent.
"""

from __future__ import annotations

import os
import signal

FAULT_ENV = "TRIBUNAL_FAULT"
POINTS = frozenset({
    "after_store", "after_ack", "before_post", "after_post_before_record", "after_record",
    "after_apply", "after_action",
})

_hits: dict[str, int] = {}


def _spec() -> tuple[str, int]:
    raw = os.environ.get(FAULT_ENV, "")
    point, _, nth = raw.partition(":")
    return point, int(nth) if nth.isdigit() and int(nth) > 0 else 1


def armed(point: str) -> bool:
    """True when this fault point is switched on for the process."""
    return _spec()[0] == point


def hit(point: str) -> None:
    """Count a pass through `point`; SIGKILL the process at the configured pass.

    SIGKILL, not an exception: no `finally`, no flush, no shutdown code runs,
    exactly as when the machine or the OOM killer stops the process.
    """
    wanted, nth = _spec()
    if wanted != point:
        return
    _hits[point] = _hits.get(point, 0) + 1
    if _hits[point] == nth:
        os.kill(os.getpid(), signal.SIGKILL)
