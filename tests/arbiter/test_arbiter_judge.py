"""The progress judge's answer: strictly validated, or the rules stand."""

from __future__ import annotations

import pytest

from bot.arbiter.judge import ProgressJudge, parse, render
from bot.finding import Question
from tests.arbiter.arbiter_helpers import make_settings
from tests.fakes.llm_servers import FakeLLMServer, Scripted

QUESTIONS = [
    Question("reviewer:rev:x", "reviewer", "rev", "`db.py` still leaks", "F1", "connection leak",
             "new"),
    Question("owner::y", "owner", "", "I looked at the pool", "F2", "pool size", "untouched"),
]


def test_valid_answers_become_decisions() -> None:
    raw = 'Sure: {"answers": [{"id": "q1", "answer": "F1"}, {"id": "q2", "answer": "declined"}]}'
    assert parse(raw, QUESTIONS) == {"reviewer:rev:x": "F1", "owner::y": "declined"}


@pytest.mark.parametrize("raw", [
    "", "no json here", '{"answers": "F1"}', '{"answers": [{"id": "q9", "answer": "new"}]}',
    '{"answers": [{"id": "q1", "answer": "F7"}]}', '{"answers": [{"id": "q2", "answer": "new"}]}',
    '{"answers": [{"id": "q1", "answer": "new"}',
])
def test_anything_off_is_refused(raw: str) -> None:
    with pytest.raises(ValueError):
        parse(raw, QUESTIONS)


def test_the_prompt_is_bounded_json() -> None:
    many = [QUESTIONS[0]] * 40
    assert render(many).count('"id"') == 12


async def test_a_failing_backend_keeps_the_rules(llm: FakeLLMServer) -> None:
    llm.default = Scripted(status=500)
    settings = make_settings(arbiter_base_url=llm.openai_base_url, progress_judge="llm")
    decisions, record = await ProgressJudge(settings).decide(QUESTIONS)
    assert decisions is None and "error" in record and len(llm.requests) == 1  # no retries
