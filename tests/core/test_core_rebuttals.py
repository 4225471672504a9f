"""An owner that rebuts a point ("그 상황은 일어나지 않습니다") declines it, and
a reviewer that answers the refusal with "또한 …" insists on that point; it
does not open a new one.

The look-alikes stay apart: a fix that says the error no longer happens is a
fix, and an "also" with a concern of its own (or after a fix) is a new point.
"""

from __future__ import annotations

from test_core_detection import Sim
from test_core_ledger_wording import _finding

from bot.finding import OwnerAction
from bot.models import Role
from bot.owner_turn import read_owner

RAISED = ("검토 의견입니다.\n"
          "1. `jobs/export.py:88`에서 내보내기 작업이 실패해도 임시 파일을 지우지 않습니다. "
          "실패 경로에서 `cleanup_tmp()`를 호출해 주세요.\n"
          "2. 내보내기 행 수가 100만 건을 넘으면 `csv.writer` 버퍼가 메모리를 다 씁니다. "
          "청크 단위로 나눠 쓰도록 바꿔 주세요.")
REBUTTED = ("1번은 임시 디렉터리가 매일 밤 정리되므로 따로 지울 필요가 없다고 봅니다.\n"
            "2번은 내보내기 요청이 최대 50만 행으로 제한되어 있어서 그런 경우는 "
            "일어나지 않습니다.")


def _owner_actions(text: str) -> dict[str, OwnerAction]:
    findings = [_finding("F1", "reviewer", "실패 경로에서 `cleanup_tmp()`를 호출해 주세요."),
                _finding("F2", "reviewer", "내보내기 행 수가 100만 건을 넘으면 `csv.writer` "
                                           "버퍼가 메모리를 다 씁니다. 청크 단위로 나눠 쓰도록 "
                                           "바꿔 주세요.")]
    findings[0].number, findings[1].number = 1, 2
    return read_owner(findings, [text])


def test_a_rebutted_scenario_is_declined_and_a_fix_that_ended_it_is_not() -> None:
    assert _owner_actions(REBUTTED)["F2"] is OwnerAction.DECLINE
    fixed = _owner_actions("2번: 청크 단위(`chunk_size=10000`)로 나눠 쓰도록 바꿨습니다. "
                           "수정 후 해당 경우는 더 이상 발생하지 않습니다. (commit `4be91c2`)")
    assert fixed["F2"] is OwnerAction.FIX
    english = _finding("F1", "reviewer", "A retry after the lock expires can run the job twice; "
                                         "please add an idempotency key to `run_job`.")
    assert read_owner([english], ["That case cannot happen: `run_job` takes the lock for the "
                                  "whole run and the queue has one consumer."]) == {
        "F1": OwnerAction.DECLINE}


def _room(second_reply: str) -> Sim:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "대용량 내보내기를 CSV로 만들어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`jobs/export.py`에 CSV 내보내기를 추가했습니다. "
                        "pytest 64 passed.")
    sim.say(Role.REVIEWER, RAISED)
    sim.say(Role.OWNER, REBUTTED)
    sim.say(Role.REVIEWER, "설명 감사합니다. 그래도 실패 경로에서 `cleanup_tmp()`는 호출해야 한다고 "
                           "봅니다. 야간 정리 전까지 디스크가 찰 수 있습니다.\n" + second_reply)
    return sim


def test_also_after_the_refusal_of_that_point_insists_on_it() -> None:
    # (As close as a repeat must be, `MATCH`: naming the writer and the split again.)
    sim = _room("또한 50만 행 제한은 설정으로 언제든 바뀔 수 있는 값이니, 행 수가 100만 건을 "
                "넘어도 `csv.writer` 버퍼가 버티도록 청크 단위로 나눠 써 주시면 감사하겠습니다.")
    sim.say(Role.OWNER, "다시 검토했지만 현재 구조를 유지하겠습니다. 변경 사항은 없습니다.")
    assert [f.label for f in sim.state.findings] == ["F1", "F2"]  # no third point
    assert sim.state.findings[1].history[-1] == "R2: declined, repeated"
    assert sim.state.stalled_rounds == 1  # that round moved nothing


def test_also_with_a_concern_of_its_own_is_a_new_point() -> None:
    sim = _room("또한 내보낸 파일 이름에 고객 이메일이 들어갑니다. 파일 이름은 작업 id로 "
                "바꿔 주세요.")
    sim.say(Role.OWNER, "파일 이름은 작업 id로 바꿨습니다. (commit `0c13d77`)")
    assert [f.label for f in sim.state.findings] == ["F1", "F2", "F3"]
    assert sim.state.stalled_rounds == 0


def test_also_naming_a_file_the_refused_point_never_named_is_a_new_point() -> None:
    # (Close to the refused point, `MATCH` or more, but not a repeat's `STRONG`.)
    sim = _room("또한 `jobs/export_xlsx.py`의 `xlsx_writer`도 행 수가 100만 건을 넘으면 "
                "버퍼가 메모리를 다 쓰니 청크 단위로 나눠 써 주세요.")
    assert [f.label for f in sim.state.findings] == ["F1", "F2"]  # the round is open
    sim.say(Role.OWNER, "`xlsx_writer`도 청크 단위로 바꿨습니다. (commit `5d0e2aa`)")
    assert [f.label for f in sim.state.findings] == ["F1", "F2", "F3"]
    assert sim.state.stalled_rounds == 0


REINDEX = ("재색인하는 동안 들어오는 상품 수정은 `products_v1`에만 반영됩니다. 재색인 시작 이후의 "
           "변경분을 다시 반영하는 단계가 필요합니다.")
KEPT = "재색인은 새벽 점검 시간에 돌리므로 그 사이 수정은 거의 없습니다. 스크립트는 현재대로 두겠습니다."


def test_keeping_the_work_as_it_is_refuses_the_one_open_point() -> None:
    one = [_finding("F1", "reviewer", REINDEX)]
    assert read_owner(one, [KEPT]) == {"F1": OwnerAction.DECLINE}
    # With two points open the refusal names neither: it answers none of them.
    two = [*one, _finding("F2", "reviewer", "`scripts/reindex.py`의 로그에 진행률이 없습니다. "
                                            "1%마다 남겨 주세요.")]
    assert read_owner(two, [KEPT]) == {"F1": OwnerAction.UNTOUCHED, "F2": OwnerAction.UNTOUCHED}


def _argued(reply: str) -> Sim:
    sim = Sim(stall_threshold=3)
    sim.say(Role.USER, "상품 검색 인덱스 재색인 스크립트를 만들어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE `scripts/reindex.py`를 작성했습니다.")
    sim.say(Role.REVIEWER, REINDEX)
    sim.say(Role.OWNER, KEPT)
    sim.say(Role.REVIEWER, reply)
    sim.say(Role.OWNER, "STEP_DONE 그래도 이대로 가겠습니다.")
    return sim


def test_statements_against_the_refusal_argue_the_refused_point() -> None:
    sim = _argued("거의 없다는 것과 없다는 것은 다릅니다. 점검 시간에도 가격 동기화 배치가 10분마다 "
                  "돕니다. 변경분을 다시 반영하지 않으면 가격이 틀린 채로 남습니다.")
    assert [f.label for f in sim.state.findings] == ["F1"]
    assert sim.state.findings[0].history[-1] == "R2: declined, repeated"
    assert sim.state.stalled_rounds == 1


def test_a_statement_naming_another_file_or_a_request_is_a_new_point() -> None:
    named = _argued("`jobs/price_sync.py`는 재색인 중에도 10분마다 가격을 씁니다.")
    assert [f.label for f in named.state.findings] == ["F1", "F2"]
    asked = _argued("주문 알림 메일의 제목이 영어로만 나갑니다. 한국어 제목을 추가해 주세요.")
    assert [f.label for f in asked.state.findings] == ["F1", "F2"]
