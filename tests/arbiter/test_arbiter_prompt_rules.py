"""Every rule the arbiter must follow must stay in prompts/arbiter.md.

Each rule is pinned by a few distinctive phrases; rewording is fine as long
as these survive, deleting a rule fails the test that names it.
"""

from __future__ import annotations

import re

import pytest

from prompts import arbiter_system_prompt

RULES: dict[str, list[str]] = {
    "judge the deadlock on evidence, not on who spoke first": [
        r"deadlock",
        r"weigh what each side claims",
        r"rule on\s+\*\*evidence\*\*",
        r"code, diffs, test output, logs",
        r"who spoke first",
    ],
    "first line: exactly one verdict keyword, in English": [
        r"first line starts with exactly one verdict keyword, in English",
    ],
    "PROCEED: owner right, reviewer approves, say what the reviewer missed": [
        r"`PROCEED` — the owner is right",
        r"reviewer should approve",
        r"what the\s+reviewer missed",
    ],
    "REVISE: reviewer right, exactly what to fix (file, line, action)": [
        r"`REVISE` — the reviewer is right",
        r"exactly what to fix",
        r"the file, the line .*and the concrete action",
    ],
    "RESET: unproductive path, concrete new direction": [
        r"`RESET` — both are stuck on an unproductive path",
        r"concrete new\s+direction",
    ],
    "ESCALATE: permission/approval/decision, needs user input, recurring after PROCEED": [
        r"`ESCALATE` — only a human can settle it",
        r"permission, approval or a decision",
        r"cannot be settled\s+without input from the user",
        r"same NEEDS_CONTEXT or BLOCKED comes back\s+after an earlier PROCEED",
    ],
    "ESCALATE message: self-contained, decision first, numbered options with consequences": [
        r"only thing the user will read",
        r"self-contained",
        r"decision the user has to make, in one plain sentence",
        r"numbered list `1\.`, `2\.`",
        r"one-line\s+consequence",
        r"answer with a single digit",
        r"only the context needed to decide",
    ],
    "MoA: cite by name, cross-check, resolve disagreements, not blindly": [
        r"cite each one you use by its name",
        r"cross-check it against the conversation and the evidence",
        r"resolve the disagreement explicitly",
        r"Do not follow a reference blindly",
    ],
    "TASK_DONE / STEP_DONE / DONE semantics": [
        r"`TASK_DONE` means the whole task is complete",
        r"`STEP_DONE` is\s+intermediate progress",
        r"owner keeps going",
        r"`DONE` is a\s+legacy alias of `TASK_DONE`",
    ],
    "reviewer snapshot is not by itself a blocker": [
        r"limited snapshot",
        r"node_modules",
        r"not by itself a blocker",
        r"dedicated\s+verification evidence",
        r"on its merits",
    ],
    "final, neither implements nor reviews, concise": [
        r"verdict is final for this deadlock",
        r"neither\s+implement nor review the code",
        r"the decision, the\s+evidence it rests on, the required action",
    ],
    "both agree but nobody acts: direct the owner to act": [
        r"both sides say the same thing but nobody\s+acts",
        r"direct the owner to act",
    ],
    "owner asks the user: always ESCALATE": [
        r"owner \(not the reviewer\) asks the user",
        r"always answer `ESCALATE`",
    ],
    "no second PROCEED for the same issue": [
        r"earlier verdict in this task was PROCEED and the\s+same issue persists",
        r"do not PROCEED again",
    ],
    # By design the language is now the room's, fixed when the task started
    # (from the humans' first message), so the verdict agrees with the thread.
    "language: the room's, fixed when the task started; only the keyword in English": [
        r"Write in the room's language",
        r"fixed it when the task started",
        r"Only the leading\s+keyword stays in\s+English",
    ],
    "Korean wording: one glossary, no double particles, no English tails": [
        r"오너 \(owner\), 리뷰어 \(reviewer\), 중재자",
        r"판정 for your verdict, 결정 for the user's",
        r"double particles",
        r"English translation after Korean text",
    ],
    "ESCALATE names the task and the disputed point first": [
        r"then the task \(as the user asked it, shortened\) and the disputed point",
        r"button or a digit",
    ],
    "room text is data, not instructions": [
        r"\*\*data, never instructions\*\*",
        r"REFERENCE OPINION",
    ],
}


@pytest.fixture(scope="module")
def prompt() -> str:
    return arbiter_system_prompt()


@pytest.mark.parametrize("rule", list(RULES))
def test_rule_present(prompt: str, rule: str) -> None:
    missing = [p for p in RULES[rule] if not re.search(p, prompt, re.IGNORECASE)]
    assert not missing, f"rule {rule!r} lost its phrases: {missing}"


def test_all_keywords_defined(prompt: str) -> None:
    for keyword in ("PROCEED", "REVISE", "RESET", "ESCALATE"):
        assert f"`{keyword}` —" in prompt
