"""Fault injection for crash tests, off unless `TRIBUNAL_FAULT` names a point.

Crash tests run the real `tribunal run` and SIGKILL it; these points make the
window they aim at wide and certain instead of a race. Points:

- `after_store`: an incoming event is stored (and so acknowledged) but never
  processed, as if the process died right after the acknowledgement. Killing
  the process then leaves every acknowledged event in storage only; the next
  start must process them all.
"""

from __future__ import annotations

import os

FAULT_ENV = "TRIBUNAL_FAULT"
POINTS = frozenset({"after_store"})


def armed(point: str) -> bool:
    """True when this fault point is switched on for the process."""
    return os.environ.get(FAULT_ENV, "") == point
