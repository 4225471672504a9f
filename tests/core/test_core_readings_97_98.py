"""Readings from held-out 97 and 98 (studied after their one run):

- "`users.email`은 NOT NULL을 유지하고" asks the column required, against
  "컬럼을 nullable로 바꿔 주세요";
- "개인정보 파기 관점에서 두 가지 수정 부탁드립니다." announces the list below,
  it is no point of its own."""

from __future__ import annotations

import pytest
from studied_rooms import first_deadlock

from bot.findings import Act, reviewer_clause
from bot.stances import null_stance


def test_keeping_not_null_asks_it_required() -> None:
    assert null_stance("`users.email`은 NOT NULL을 유지하고, placeholder를 넣어 주세요.") == 1
    assert null_stance("Keep the column NOT NULL.") == 1
    # (A condition asks nothing: "if it stays NOT NULL, …".)
    assert null_stance("NOT NULL을 유지하면 export가 깨집니다.") == 0
    assert null_stance("컬럼을 nullable로 바꿔 주세요.") == -1


@pytest.mark.parametrize("text", [
    "개인정보 파기 관점에서 두 가지 수정 부탁드립니다.",
    "두 가지 확인 부탁드립니다.",
    "세 건 수정 요청드립니다:",
])
def test_a_count_of_fixes_asked_is_an_announcement(text: str) -> None:
    assert reviewer_clause(text).act is Act.FACT


@pytest.mark.parametrize("case", ["heldout98/h98_03"])
def test_the_studied_rooms_read_as_labelled(case: str) -> None:
    """The room of held-out 98 these readings came from (after its one run),
    fed through the detector as the replay would."""
    got, want = first_deadlock(case)
    assert got == want
