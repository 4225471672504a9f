"""Replaying a labelled room of `tests/detection` through the detector, as
the replay would: for the tests that keep the rooms a reading came from."""

from __future__ import annotations

import json
from pathlib import Path

from test_core_detection import Sim

from bot.models import Role

DETECTION = Path(__file__).parent.parent / "detection"


def first_deadlock(case: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(what the detector fired first, what the label says), each as
    `[(trigger, after_message)]` or `[]`, for the room `case` ("heldout93/h93_15")."""
    path = DETECTION / f"{case}.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    label = json.loads(path.with_name(path.stem + ".label.json").read_text(encoding="utf-8"))
    roles = lines[0]["roles"]
    sim = Sim(**(lines[0].get("settings") or {}))
    for line in lines[1:]:
        author = line["author"]
        role = (Role.OWNER if author in roles["owner"] else
                Role.REVIEWER if author in roles["reviewer"] else Role.USER)
        sim.say(role, line["text"], author=author)
    sim.end()
    got = [(d.trigger.value, d.after_message or "") for d in sim.deadlocks()[:1]]
    want = [(label["trigger"], label["after_message"])] if label["deadlock"] else []
    return got, want
