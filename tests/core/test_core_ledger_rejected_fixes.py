"""The ledger when a reported fix is found wanting: the reviewer's explanation
of why it failed is the same point again, not a new one (thanks, "said for
the third time", a failing run, "it was added but …")."""

from __future__ import annotations

from test_core_detection import Sim

from bot.finding import Finding
from bot.findings import Act, reviewer_clause, selectors, starts_new_point
from bot.models import Role, Trigger


def test_thanks_for_the_fix_is_no_finding() -> None:
    for text in ("수정해 주셔서 감사합니다.", "빠르게 반영해 주셔서 정말 고맙습니다!",
                 "Thanks for the quick fix.", "Thank you."):
        assert reviewer_clause(text).act is Act.FACT, text
    # A request in the same clause is still one.
    assert reviewer_clause("수정해 주셔서 감사한데 `retry`는 빼 주세요.").act is Act.FINDING


def test_how_often_it_was_said_is_no_point_number() -> None:
    assert selectors("업로드 건은 세 번째 말씀드리지만 그대로입니다.")[0] == ()
    assert selectors("I am raising this for the second time.")[0] == ()
    assert selectors("세 번째 지적은 여전합니다.")[0] == (3,)
    assert selectors("the second point is still open")[0] == (2,)


def test_a_severity_tag_before_new_opens_a_point() -> None:
    assert starts_new_point("[medium] New: the bucket has no lifecycle rule.")
    assert not starts_new_point("[medium] The bucket still has no lifecycle rule.")


def test_why_the_fix_failed_after_a_blanket_repeat_is_the_same_points() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "리포트 PDF 내보내기를 만들어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`export/pdf.py`에 `render_pdf()`를 추가했습니다.")
    sim.say(Role.REVIEWER, "두 가지입니다.\n"
                           "1. 한글 글꼴이 임베드되지 않아 PDF에서 글자가 네모로 보입니다. "
                           "`NotoSansKR`을 임베드해야 합니다.\n"
                           "2. 표가 페이지를 넘어가면 잘립니다. `split_rows=True`로 나눠 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n둘 다 반영했습니다 (`a1b2c3d`).")
    sim.say(Role.REVIEWER, "`a1b2c3d` 확인했습니다만, 지난번 지적이 아직 해결되지 않았습니다.\n"
                           "글꼴 등록이 렌더링 뒤에 일어나서 네모 글자가 그대로 나옵니다. "
                           "그리고 `split_rows`는 머리글 행에만 적용되어 본문 표는 여전히 잘립니다.")
    sim.say(Role.OWNER, "STEP_DONE\n다시 고쳤습니다 (`b2c3d4e`).")
    sim.say(Role.REVIEWER, "수정해 주셔서 감사합니다. 다만 결과는 같습니다. 받은 파일에서 한글이 "
                           "여전히 네모로 보이고 긴 표도 잘립니다. 처음 말씀드린 두 문제가 모두 그대로입니다.")
    sim.end()
    assert [f.label for f in sim.state.findings] == ["F1", "F2"]
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS and deadlock.finding is None


def test_a_failing_run_after_the_fix_and_a_line_about_two_points() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "주문 변경 이력을 남겨 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`history/models.py`에 `OrderHistory`를 만들었습니다.")
    sim.say(Role.REVIEWER, "1. `OrderHistory`에 이전 상태(`prev_status`)가 저장되지 않습니다.\n"
                           "2. `@tracked`가 트랜잭션 안에서 기록해 rollback되면 이력도 사라집니다. "
                           "실패한 변경도 남아야 합니다.")
    sim.say(Role.OWNER, "STEP_DONE\n두 가지 반영했습니다 (`c3d4e5f`).")
    sim.say(Role.REVIEWER, "```\nFAILED tests/test_history.py::test_prev_status - AssertionError\n"
                           "1 failed, 80 passed\n```\n"
                           "`prev_status` 필드는 생겼지만 `@tracked`가 저장 전에 값을 읽지 않아 항상 "
                           "`None`이고, 별도 연결이 `DATABASE_ROUTERS`에 없어 rollback 시 여전히 사라집니다.")
    sim.say(Role.OWNER, "STEP_DONE\n다시 고쳤습니다 (`d4e5f6a`).")
    sim.say(Role.REVIEWER, "결과가 지난번과 똑같습니다. 이전 상태는 여전히 비어 있고 rollback 뒤 이력도 "
                           "남지 않습니다.")
    sim.end()
    assert [f.label for f in sim.state.findings] == ["F1", "F2"]
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS


def test_a_declined_point_asked_again_with_more_detail_stalls_it() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "로그 보관을 S3로 옮겨 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`ops/ship_logs.sh`를 작성했습니다.")
    sim.say(Role.REVIEWER, "1. 업로드 실패를 무시합니다. `set -o pipefail`이 필요합니다.\n"
                           "2. 업로드 시 `--sse aws:kms`로 암호화해야 합니다.")
    sim.say(Role.OWNER, "STEP_DONE\n1. `set -euo pipefail` 추가했습니다 (`e5f6a7b`).\n"
                        "2. 버킷 기본 암호화가 있어 `--sse`는 넣지 않겠습니다.")
    sim.say(Role.REVIEWER, "pipefail 확인했습니다.\n버킷 기본 암호화는 SSE-S3입니다. 업로드할 때 "
                           "`--sse aws:kms --sse-kms-key-id`를 지정해 주셔야 합니다.\n"
                           "추가로 보관 기간이 없습니다. 90일 뒤 삭제하는 수명 주기 규칙을 넣어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n- 수명 주기 규칙 추가했습니다 (`f6a7b8c`).\n"
                        "- KMS는 비용 때문에 현행 유지하겠습니다.")
    sim.say(Role.REVIEWER, "수명 주기 규칙 좋습니다. 보안 정책상 로그는 고객 관리 키로 암호화되어야 "
                           "하므로 `--sse aws:kms` 지정은 계속 요청드립니다.")
    sim.end()
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS and deadlock.finding == "F2"


def test_the_helper_is_there_but_one_line_speaks_of_both_points() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "결제 화면 문구를 번역해 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`PaySummary.tsx`의 문구를 `t('pay.*')`로 바꿨습니다.")
    sim.say(Role.REVIEWER, "1. 금액을 `'$' + amount`로 붙입니다. `Intl.NumberFormat`으로 통화 형식을 써야 합니다.\n"
                           "2. `en/pay.json`의 `items_count`에 복수형이 없습니다. `items_count_one` / "
                           "`items_count_other`로 나눠야 합니다.")
    sim.say(Role.OWNER, "STEP_DONE\n둘 다 고쳤습니다 (`1f2e3d4`). `formatMoney()`를 추가했습니다.")
    sim.say(Role.REVIEWER, "`1f2e3d4` 확인했습니다. `formatMoney()`는 추가됐지만 `PaySummary.tsx`에서는 여전히 "
                           "`'$' + amount`로 그립니다. plural 키는 생겼는데 호출부가 `t('pay.items_count')`에 "
                           "`count`를 넘기지 않아 단수와 복수가 같은 문구로 나옵니다.")
    sim.say(Role.OWNER, "STEP_DONE\n다시 고쳤습니다 (`2e3d4c5`).")
    sim.say(Role.REVIEWER, "지난번 지적이 아직 해결되지 않았습니다. 금액 형식과 복수형 모두 같은 상태입니다.")
    sim.end()
    _, f2 = sim.state.findings
    assert "R2: fix_reported, repeated (fix rejected)" in f2.history  # not "fixed"
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS and deadlock.finding is None


def test_a_figure_said_to_be_stable_is_praise_not_a_finding() -> None:
    for text in ("10만 행 기준 RSS 48MB로 안정적입니다.", "Memory stays stable at 48MB under 100k rows."):
        assert reviewer_clause(text).act is Act.FACT, text
    assert reviewer_clause("p99가 안정적이지 않습니다. 300ms 아래로 낮춰 주세요.").act is Act.FINDING


def test_the_first_failure_and_besides_point_one_name_no_point() -> None:
    assert selectors("instead of stopping at the first failure")[0] == ()
    assert selectors("1번 외에 나머지 두 건은 여전히 수정이 필요합니다.")[0] == ()
    assert selectors("Everything other than #2 is fine.")[0] == ()
    assert reviewer_clause("보안 쪽 추가 지적은 없습니다.").act is Act.FACT
    assert reviewer_clause("클라이언트 측 검사는 쉽게 우회되므로 근거가 될 수 없습니다.").act is Act.REFERENCE


def test_a_bare_confirmation_then_points_still_open_by_number() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "주문 테이블 마이그레이션을 작성해 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`migrations/0042.py` 작성했습니다.")
    sim.say(Role.REVIEWER, "1. `downgrade()`가 비어 있습니다. 되돌리는 코드가 있어야 합니다.\n"
                           "2. 인덱스를 `CONCURRENTLY`로 만들어야 합니다.")
    sim.say(Role.OWNER, "STEP_DONE\n두 가지 반영했습니다 (`a1b2c3d`).")
    sim.say(Role.REVIEWER, "`a1b2c3d` 확인했습니다. 그러나 1번과 2번은 그대로입니다.\n"
                           "2번: 워커 두 개가 모두 통과합니다. 트랜잭션 에러가 그대로입니다.")
    sim.say(Role.OWNER, "STEP_DONE\n다시 고쳤습니다 (`b2c3d4e`).")
    sim.say(Role.REVIEWER, "확인했습니다만 두 지적 모두 해결되지 않았습니다.")
    sim.end()
    assert [f.label for f in sim.state.findings] == ["F1", "F2"]
    assert all(f.is_open for f in sim.state.findings)
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS


def test_an_owner_bullet_led_by_a_reviewer_s_name_answers_its_points() -> None:
    from bot.finding import OwnerAction
    from bot.owner_turn import read_owner

    sec = Finding(label="F1", author="sec-bot", summary="매직 바이트로 형식을 검증해야 합니다.",
                  anchors=["code:image.open"], terms=["매직", "바이", "검증", "형식"])
    perf = Finding(label="F2", author="perf-bot", summary="청크 단위로 읽어 413을 반환해 주세요.",
                   anchors=["num:413"], terms=["청크", "단위", "반환"])
    actions = read_owner([sec, perf], [
        "STEP_DONE\n- perf-bot 지적: `file.read(CHUNK)` 루프로 바꾸고 초과 시 `413`을 반환합니다. `0e9a7b2`\n"
        "- sec-bot 지적: 프론트엔드에서 이미 MIME 검사를 하고, 확장자 검사로 충분하다고 판단합니다."])
    assert actions == {"F1": OwnerAction.DECLINE, "F2": OwnerAction.FIX}
