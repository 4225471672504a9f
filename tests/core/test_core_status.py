import pytest

from bot.models import Status
from bot.status import parse_status, visible_lines

CASES = [
    ("LGTM", Status.APPROVED),
    ("**LGTM**", Status.APPROVED),
    ("## TASK_DONE", Status.TASK_DONE),
    ("# **Approved**", Status.APPROVED),
    ("approved", Status.APPROVED),
    ("lgtm!", Status.APPROVED),
    ("DONE", Status.TASK_DONE),
    ("Done.", Status.TASK_DONE),
    ("DONE_WITH_CONCERNS: flaky test", Status.DONE_WITH_CONCERNS),
    ("STEP_DONE implemented parser", Status.STEP_DONE),
    ("BLOCKED: no DB credentials", Status.BLOCKED),
    ("needs_context which branch?", Status.NEEDS_CONTEXT),
    ("ESCALATE 사용자 확인 필요", Status.ESCALATE),
    ("Short preface line\nBLOCKED waiting for access", Status.BLOCKED),
    ("It is Approved now", Status.CONTINUE),
    ("The reviewer said LGTM", Status.CONTINUE),
    ("```\nLGTM\n```\nstill checking", Status.CONTINUE),
    ("~~~\nTASK_DONE\n~~~", Status.CONTINUE),
    ("<internal>LGTM</internal>\nlooking", Status.CONTINUE),
    ("<internal>\nTASK_DONE\n</internal>\nBLOCKED", Status.BLOCKED),
    ("DONEZO", Status.CONTINUE),
    ("LGTM입니다", Status.CONTINUE),
    ("TASK_DONE_LATER", Status.CONTINUE),
    ("", Status.CONTINUE),
    ("\n\n\n  \nLGTM", Status.APPROVED),
    # Quoted text is someone quoting, never a status.
    ("> LGTM", Status.CONTINUE),
    ("> TASK_DONE\nThe cache key is still wrong.", Status.CONTINUE),
    (">>> TASK_DONE\nLGTM", Status.CONTINUE),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_parse_status(text: str, expected: Status) -> None:
    assert parse_status(text) is expected


def test_status_must_be_within_first_twelve_visible_lines() -> None:
    lines = [f"line {i}" for i in range(12)]
    assert parse_status("\n".join([*lines, "LGTM"])) is Status.CONTINUE
    assert parse_status("\n".join([*lines[:11], "LGTM"])) is Status.APPROVED


def test_blank_and_fenced_lines_do_not_count_towards_twelve() -> None:
    filler = "\n\n".join(f"line {i}" for i in range(11))
    fenced = "```\n" + "\n".join("code" for _ in range(30)) + "\n```\n"
    assert parse_status(fenced + filler + "\n\nTASK_DONE") is Status.TASK_DONE


def test_unclosed_fence_is_not_a_fence() -> None:
    # A fence not closed within its message hides nothing.
    assert parse_status("```python\nLGTM") is Status.APPROVED
    assert visible_lines("before\n```\ninside") == ["before", "```", "inside"]


def test_fence_closed_in_a_later_message_is_not_a_fence() -> None:
    # Fences are per message: the opener in the first message hides nothing,
    # so the second message's status line is seen.
    assert parse_status(["```", "STEP_DONE\n```"]) is Status.STEP_DONE
    assert parse_status(["```\nSTEP_DONE\n```"]) is Status.CONTINUE
    assert parse_status(["log line\n```", "BLOCKED: no credentials"]) is Status.BLOCKED


def test_quoted_lines_count_among_the_twelve() -> None:
    quoted = "\n".join(f"> quoted {i}" for i in range(12))
    assert parse_status(quoted + "\nLGTM") is Status.CONTINUE


def test_approval_statuses() -> None:
    assert Status.TASK_DONE.is_approval and Status.APPROVED.is_approval
    assert not Status.STEP_DONE.is_approval and not Status.DONE_WITH_CONCERNS.is_approval
