"""Pure parsing and validation of the model's answer."""

from __future__ import annotations

import pytest

from bot.arbiter.language import expected_language, is_in_language, main_script
from bot.arbiter.verdict import parse_and_validate, parse_options, parse_verdict
from bot.detection import RoomState
from bot.i18n import resolve, text_language
from bot.models import VerdictKind
from tests.arbiter.arbiter_helpers import make_ctx

BODY = " 리뷰어가 맞습니다. `login.py` 42번째 줄을 고치세요."


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        ("PROCEED" + BODY, VerdictKind.PROCEED),
        ("REVISE" + BODY, VerdictKind.REVISE),
        ("RESET" + BODY, VerdictKind.RESET),
        ("CONTINUE" + BODY, VerdictKind.PROCEED),
        ("**REVISE**" + BODY, VerdictKind.REVISE),
        ("__REVISE__:" + BODY, VerdictKind.REVISE),
        ("## REVISE" + BODY, VerdictKind.REVISE),
        ("VERDICT: REVISE" + BODY, VerdictKind.REVISE),
        ("**VERDICT:** REVISE" + BODY, VerdictKind.REVISE),
        ("Verdict - reset" + BODY, VerdictKind.RESET),
        ("REVISE:" + BODY, VerdictKind.REVISE),
        ("REVISE —" + BODY, VerdictKind.REVISE),
        ("\n\n  REVISE" + BODY, VerdictKind.REVISE),
        ("<internal>ESCALATE maybe</internal>\nREVISE" + BODY, VerdictKind.REVISE),
        ("```\nPROCEED\n```\nREVISE" + BODY, VerdictKind.REVISE),
    ],
)
def test_keyword_found(raw: str, kind: VerdictKind) -> None:
    parsed = parse_and_validate(raw, "ko")
    assert parsed.kind == kind
    assert parsed.valid, parsed.problems
    assert parsed.text.startswith(kind.value + " ")


@pytest.mark.parametrize(
    "raw",
    [
        "PROCEEDING" + BODY,
        "revised" + BODY,
        "RESETTING" + BODY,
        "ESCALATED" + BODY,
        "PROCEED_NOW" + BODY,
        "I say PROCEED" + BODY,
        "결론: PROCEED" + BODY,
        "",
        "   \n\n",
        "<internal>PROCEED 좋아요</internal>",
    ],
)
def test_not_a_verdict(raw: str) -> None:
    parsed = parse_and_validate(raw, "ko")
    assert parsed.kind is None
    assert not parsed.valid and parsed.problems


def test_two_keywords_rejected() -> None:
    parsed = parse_and_validate("PROCEED / REVISE" + BODY, "ko")
    assert parsed.kind == VerdictKind.PROCEED and not parsed.valid
    assert "more than one" in parsed.problems[0]


def test_keyword_alone_has_no_body() -> None:
    parsed = parse_and_validate("REVISE", "ko")
    assert not parsed.valid and "no explanation" in parsed.problems[0]


def test_english_body_rejected_for_korean() -> None:
    parsed = parse_and_validate("REVISE Fix line 42 of login.py, the refresh check is wrong.", "ko")
    assert parsed.kind == VerdictKind.REVISE
    assert not parsed.valid and "Korean" in parsed.problems[0]


def test_korean_with_code_and_paths_is_korean() -> None:
    raw = (
        "REVISE `src/auth/login.py:42`의 `refresh_token()` 호출 전에 만료 검사를 추가하세요.\n"
        "```python\nif token.expired and not session.is_valid(): raise TokenExpiredError()\n```\n"
        "근거: CI 로그 https://ci.example.com/run/123 에서 TypeError 발생."
    )
    assert parse_and_validate(raw, "ko").valid


def test_korean_body_rejected_for_english() -> None:
    assert not parse_and_validate("REVISE" + BODY, "en").valid


def test_escalate_options_parsed() -> None:
    raw = (
        "ESCALATE 배포 여부를 결정해 주세요.\n"
        "\n"
        "1. 지금 배포 — 현재 변경을 운영에 올립니다.\n"
        "2) **보류**: 리뷰어 지적을 먼저 반영합니다.\n"
        "**3.** 작업 중단 -> 사람이 직접 확인합니다.\n"
        "\n"
        "참고: 1. 이 줄은 새 목록이 아닙니다"
    )
    parsed = parse_and_validate(raw, "ko")
    assert parsed.valid, parsed.problems
    assert [(o.n, o.label, o.consequence) for o in parsed.options] == [
        (1, "지금 배포", "현재 변경을 운영에 올립니다."),
        (2, "보류", "리뷰어 지적을 먼저 반영합니다."),
        (3, "작업 중단", "사람이 직접 확인합니다."),
    ]


def test_escalate_consequence_on_next_line() -> None:
    options = parse_options("결정하세요\n1. 배포\n   - 운영에 올립니다\n2. 보류\n   - 기다립니다")
    assert [(o.label, o.consequence) for o in options] == [
        ("배포", "운영에 올립니다"),
        ("보류", "기다립니다"),
    ]


def test_escalate_needs_two_options() -> None:
    parsed = parse_and_validate("ESCALATE 결정해 주세요.\n1. 배포 — 운영에 올립니다.", "ko")
    assert not parsed.valid and "at least two numbered options" in parsed.problems[0]


def test_escalate_options_without_consequence_are_soft() -> None:
    parsed = parse_and_validate("ESCALATE 배포 여부를 결정해 주세요.\n1. 배포\n2. 보류", "ko")
    assert not parsed.problems and parsed.soft_problems and not parsed.valid


def test_options_must_count_from_one() -> None:
    assert parse_options("결정\n2. 나중\n3. 더 나중") == []
    assert [o.n for o in parse_options("1. 가 — 나\n2. 다 — 라\n4. 마 — 바")] == [1, 2]


def test_full_width_digits() -> None:
    assert [o.n for o in parse_options("１. 가 — 나\n２. 다 — 라")] == [1, 2]


def test_garbage_never_crashes() -> None:
    for raw in ["\x00\x01", "\ud800broken", "*" * 10_000, "1.\n2.\n3.", "ESCALATE\n" * 500]:
        parse_verdict(raw)
        parse_and_validate(raw, "ko")


def test_scripts() -> None:
    assert main_script("안녕하세요 세계") == "hangul"
    assert main_script("hello world") == "latin"
    assert is_in_language("로그인 버그를 login.py에서 고쳤습니다", "ko")
    assert not is_in_language("I fixed the login bug in 로그인.py", "ko")


def test_room_language_follows_humans() -> None:
    # The humans' language wins over the global default, but is now fixed for
    # the room at the task's first message (bot.i18n) instead of being guessed
    # per verdict, so everything the bot writes in the room agrees.
    def room(first: str | None, default: str = "ko") -> str:
        state = RoomState(language=text_language(first) if first is not None else None)
        return resolve(None, state, default)

    assert room("로그인 세션 만료 버그 고쳐줘") == "ko"
    assert room("Please fix the login bug quickly") == "en"
    assert room("로그인 버그 고쳐 주세요", default="en") == "ko"
    # A lone digit or "ok" is too little to overrule the room's setting.
    assert room("2") == "ko" and room("ok", default="en") == "en"
    assert room(None) == "ko"
    # A language no catalog ships falls back to the global one.
    assert room("ログインのバグを直してください", default="en") == "en"
    # A room's configured language beats the humans'.
    assert resolve("en", RoomState(language="ko"), "ko") == "en"
    # The arbiter is asked for the room's language, whatever the humans wrote.
    assert expected_language(make_ctx(language="en", humans=["로그인 버그 고쳐 주세요"])) == "en"


def test_answer_wrapped_in_one_fence_is_read() -> None:
    parsed = parse_and_validate("```text\nREVISE" + BODY + "\n```", "ko")
    assert parsed.kind == VerdictKind.REVISE and parsed.valid


def test_overlong_answer_is_a_soft_problem() -> None:
    parsed = parse_and_validate("REVISE" + BODY * 300, "ko")
    assert parsed.kind == VerdictKind.REVISE and not parsed.problems
    assert parsed.soft_problems and "concise" in parsed.soft_problems[0]
