"""Work the engine runs in its own tasks, and how it ends.

Arbitrations, `/arbiter summon`, clicks and commands applied after their
acknowledgement, rooms resumed by recovery: each runs in a task of its own so
that one slow model call holds up nothing else. This set is the one place
those tasks live. `drain()` waits for them (tests, a clean stop);
`shutdown()` cancels them (`tribunal run` exiting). Whatever a task would
have done is stored before it is spawned, so a task cut short is finished by
the next start's recovery, as after a crash.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

log = logging.getLogger(__name__)


class Background:
    """The tasks of one engine."""

    def __init__(self) -> None:
        self.tasks: set[asyncio.Task[None]] = set()
        self.closing = False

    def spawn(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None] | None:
        """Run `work` in its own task; None (and `work` closed unrun) once
        shutting down: what it would do is already stored, and the next
        start recovers it."""
        if self.closing:
            work.close()
            return None
        task = asyncio.create_task(work)
        self.tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background work failed", exc_info=task.exception())

    async def drain(self) -> None:
        """Wait until no task is left, those spawned meanwhile included."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)

    async def shutdown(self) -> None:
        """Cancel every task now instead of waiting for it. Model calls can
        take minutes: waiting would break the promise to stop within seconds."""
        self.closing = True
        while self.tasks:
            tasks = list(self.tasks)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
