"""The optional progress judge (`TRIBUNAL_PROGRESS_JUDGE=llm`).

The rules read every round (bot/ledger.py); where a score falls between two
documented thresholds they are unsure, and report the reading as a question.
Only rounds with such questions make one call to the configured arbiter
backend, with a small bounded prompt, `progress_judge_timeout` seconds and no
retries, outside `max_arbitrations`. Any failure (timeout, garbage, an
unknown id or answer) keeps the rules' answers. The call and its answer are
returned as a record for the detection evidence.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Sequence
from importlib import resources
from typing import Any

from bot.arbiter.backends import CallPolicy, close_backend, make_backend, shared_limiter
from bot.arbiter.base import Backend
from bot.config import Settings
from bot.finding import OwnerAction, Question
from bot.repair import repair_text

log = logging.getLogger(__name__)

MAX_QUESTIONS = 12  # a round rarely has more; the prompt stays small
MAX_TEXT = 400
_JSON = re.compile(r"\{.*\}", re.DOTALL)
_OWNER_ANSWERS = frozenset(a.value for a in OwnerAction)


def system_prompt() -> str:
    return resources.files("prompts").joinpath("judge.md").read_text(encoding="utf-8")


def render(questions: Sequence[Question]) -> str:
    items = [
        {
            "id": f"q{i}",
            "side": q.side,
            "text": q.text[:MAX_TEXT],
            "label": q.label,
            "finding": q.label_summary[:MAX_TEXT],
        }
        for i, q in enumerate(questions[:MAX_QUESTIONS], 1)
    ]
    return json.dumps({"questions": items}, ensure_ascii=False, indent=1)


def parse(raw: str, questions: Sequence[Question]) -> dict[str, str]:
    """The judge's answers as decisions by question key; raises ValueError on anything off."""
    match = _JSON.search(raw or "")
    if match is None:
        raise ValueError("no JSON object in the answer")
    data = json.loads(match.group(0))
    answers = data.get("answers") if isinstance(data, dict) else None
    if not isinstance(answers, list):
        raise ValueError("`answers` is not a list")
    by_id = {f"q{i}": q for i, q in enumerate(questions[:MAX_QUESTIONS], 1)}
    decisions: dict[str, str] = {}
    for item in answers:
        if not isinstance(item, dict) or item.get("id") not in by_id:
            raise ValueError(f"unknown question id in {item!r:.80}")
        question, answer = by_id[item["id"]], str(item.get("answer", ""))
        allowed = _OWNER_ANSWERS if question.side == "owner" else {"new", question.label}
        if answer not in allowed:
            raise ValueError(f"answer {answer!r:.40} is not one of {sorted(allowed)}")
        decisions[question.key] = answer
    return decisions


class ProgressJudge:
    """One bounded call per uncertain round; never raises."""

    def __init__(self, settings: Settings, backend: Backend | None = None) -> None:
        self.settings = settings
        self._backend = backend

    def _make(self) -> Backend | None:
        policy = CallPolicy(timeout=self.settings.progress_judge_timeout, retries=0)
        limiter = shared_limiter(self.settings.arbiter_concurrency)
        return make_backend(self.settings, policy, limiter)

    async def decide(
        self, questions: Sequence[Question]
    ) -> tuple[dict[str, str] | None, dict[str, Any]]:
        """The decisions (None: keep the rules' answers) and the record of the call."""
        record: dict[str, Any] = {
            "questions": [{"key": q.key, "side": q.side, "label": q.label,
                           "rules": q.rules_answer} for q in questions[:MAX_QUESTIONS]],
        }
        started = time.monotonic()
        backend: Backend | None = None
        try:
            backend = self._backend or self._make()
            if backend is None:
                record["error"] = "no backend: the rules decide"
                return None, record
            raw = repair_text(await backend.complete(system_prompt(), render(questions)))
            record["answer"] = raw[:2_000]
            decisions = parse(raw, questions)
            record["decisions"] = decisions
            return decisions, record
        except Exception as exc:  # timeouts, HTTP errors, garbage: the rules stand
            record["error"] = f"{type(exc).__name__}: {str(exc)[:200]}"
            log.warning("progress judge failed, the rules decide: %s", record["error"])
            return None, record
        finally:
            record["latency_ms"] = int((time.monotonic() - started) * 1000)
            if backend is not None and self._backend is None:
                await close_backend(backend)
