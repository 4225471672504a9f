"""What an independent review of the rules held-out 83 to 86 led to found
them reading wrongly, each case as the review wrote it: a fix report read as
a rebuttal, a new point folded into a refused one, a refusal of something else
overriding a fix, a setting learnt from an aside, thanks that swallow the
point after them, a condition read as closing a point."""

from __future__ import annotations

from test_core_detection import Sim
from test_core_ledger_wording import _finding

from bot.finding import Finding, OwnerAction
from bot.findings import Act, owner_clause, reviewer_clause
from bot.fix_values import fixed_by_value, names_set
from bot.models import Role
from bot.owner_turn import read_owner


def test_a_fix_that_ends_the_scenario_is_a_fix_and_rebuttals_refuse() -> None:
    for fix in ("`run_job` 전체에 락을 잡아서 해당 상황이 발생하지 않도록 수정했습니다 "
                "(commit `4be91c2`).",
                "수정 후에는 그런 경우가 생기지 않습니다.",
                "Added a lock around `run_job` (commit `4be91c2`), so that case can't happen "
                "anymore."):
        assert owner_clause(fix).act is not Act.DECLINE, fix
    for rebuttal in ("That can't happen: the queue has one consumer.",
                     "그런 경우는 발생할 수 없습니다.",
                     "2번은 업로드 최대 크기가 5GB로 제한되어 있어 해당 상황이 발생하지 않습니다."):
        assert owner_clause(rebuttal).act is Act.DECLINE, rebuttal
    # Agreeing to leave something out of a measurement is no refusal.
    assert owner_clause("말씀하신 대로 `migrations/`는 커버리지 측정 범위에서 "
                        "제외하겠습니다.").act is not Act.DECLINE


def test_a_refusal_of_something_else_beside_a_fix_leaves_the_fix() -> None:
    one = [_finding("F1", "reviewer", "The retry loop has no backoff; add exponential backoff.")]
    assert read_owner(one, ["Done in `4be91c2`. The changelog wording is deliberate, so I "
                            "kept it."]) == {"F1": OwnerAction.FIX}


TEMP = "실패 경로에서 임시 파일(`tmp/export`)을 지우지 않습니다. 지워 주세요."
KEEP = "임시 디렉터리는 매일 밤 정리되므로 현재대로 두겠습니다."


def _after_refusal(reply: str) -> Sim:
    sim = Sim(stall_threshold=3)
    sim.say(Role.USER, "주문 내보내기를 만들어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE `jobs/export.py`를 추가했습니다.")
    sim.say(Role.REVIEWER, TEMP)
    sim.say(Role.OWNER, KEEP)
    sim.say(Role.REVIEWER, reply)
    sim.say(Role.OWNER, "STEP_DONE 반영했습니다 (commit `7d1e0aa`).")
    return sim


def test_a_new_point_after_a_refusal_is_not_folded_into_it() -> None:
    for reply in ("Another issue: order totals are exported as floats, which loses cents on "
                  "large orders.",
                  "별개로, 주문 금액이 float로 내보내져서 큰 금액에서 원 단위가 틀어집니다.",
                  "Fair enough on the temp files. The CSV header row is missing the currency "
                  "column."):
        sim = _after_refusal(reply)
        assert len(sim.state.findings) == 2, reply


def test_also_asking_something_else_of_the_refused_point_is_new() -> None:
    sim = Sim(stall_threshold=3)
    sim.say(Role.USER, "대용량 내보내기를 CSV로 만들어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE `jobs/export.py`에 CSV 내보내기를 추가했습니다.")
    sim.say(Role.REVIEWER, "행 수가 100만 건을 넘으면 `csv.writer` 버퍼가 메모리를 다 씁니다. "
                           "청크 단위로 나눠 쓰도록 바꿔 주세요.")
    sim.say(Role.OWNER, "내보내기 요청이 50만 행으로 제한되어 있어서 그런 경우는 일어나지 "
                        "않습니다.")
    sim.say(Role.REVIEWER, "또한 100만 건을 넘는 내보내기는 `csv.writer` 대신 백그라운드 작업으로 "
                           "돌려서 요청이 타임아웃되지 않게 해 주세요.")
    sim.say(Role.OWNER, "검토하겠습니다.")
    assert len(sim.state.findings) == 2


def test_a_setting_set_in_an_aside_teaches_nothing() -> None:
    sim = Sim(stall_threshold=3)
    sim.say(Role.USER, "새 에디터를 플래그 뒤에 넣어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE `flags.py`에 플래그를 추가했습니다.")
    sim.say(Role.REVIEWER, "기본값을 `False`로 고정해 주세요.", author="qa-bot")
    sim.say(Role.REVIEWER, "플래그 설명에 팀 이름을 넣어 주세요.", author="product-bot")
    sim.say(Role.OWNER, "STEP_DONE 기본값을 꺼짐으로 고정했고 설명도 고쳤습니다 (commit `4be91c2`). "
                        "참고로 로그가 많아 `VERBOSE_SQL = False`로 바꿨습니다.")
    sim.say(Role.REVIEWER, "확인했습니다. LGTM", author="qa-bot")
    sim.say(Role.REVIEWER, "`VERBOSE_SQL`은 `True`로 켜 주세요.", author="product-bot")
    sim.end()
    assert sim.contradictions() == []


def _asks(label: str, value: str, text: str = "") -> Finding:
    finding = _finding(label, "sec-bot", text) if text else Finding(
        label=label, author="sec-bot", summary="")
    finding.values = [value]
    return finding


def test_a_value_set_for_another_points_setting_answers_nothing_else() -> None:
    lockout = _finding("F1", "sec-bot", "`LOCKOUT_MAX_ATTEMPTS` 5회는 많습니다. 3회로 낮춰 주세요.")
    mails = _asks("F2", "<=3회@", "재설정 메일은 시간당 3회 이하로 제한해 주세요.")
    actions = {"F1": OwnerAction.FIX, "F2": OwnerAction.UNTOUCHED}
    turn = ["`LOCKOUT_MAX_ATTEMPTS = 3`으로 낮췄습니다 (commit `4be91c2`). 재설정 메일 발송 제한은 "
            "다음 PR에서 넣겠습니다."]
    assert fixed_by_value([lockout, mails], actions, turn) == set()
    assert names_set([lockout, mails], {"F2": OwnerAction.FIX}, turn) == {}


def test_thanks_before_a_point_and_polite_requests_still_ask() -> None:
    for text in ("It's kind of you to add logging, though the new log line prints the full card "
                 "number.",
                 "Appreciate the docstrings, although the example passes seconds, not ms.",
                 "A test for the lock expiry path would be helpful.",
                 "Here's what looks like the cause: retries skip the lock."):
        assert reviewer_clause(text).act is Act.FINDING, text


def test_a_condition_closes_nothing_and_variants_close_the_point() -> None:
    for text in ("Once `run_job` takes the lock for the whole run, that resolves my concern.",
                 "If it passes, that closes my earlier comment."):
        assert reviewer_clause(text).act is not Act.ACK, text
    for text in ("this closes out my earlier comment", "this resolves both of my earlier comments",
                 "this closes F1."):
        assert reviewer_clause(text).act is Act.ACK, text


def test_a_point_begun_mid_paragraph_in_other_words_and_one_that_is_the_same_point() -> None:
    for opener in ("또 `LOGIN_MAX_FAILS` 5회도 많습니다.", "추가로 `LOGIN_MAX_FAILS` 5회는 너무 많습니다."):
        sim = Sim(stall_threshold=3)
        sim.say(Role.USER, "로그인 실패가 반복되면 계정을 잠가 주세요.")
        sim.say(Role.OWNER, "STEP_DONE `auth/lock.py`를 추가했습니다. `LOGIN_MAX_FAILS = 5`입니다.")
        sim.say(Role.REVIEWER, "IP 기준 카운터도 추가해 주십시오.", author="sec-bot")
        sim.say(Role.OWNER, "IP 기준 카운터는 이번 범위에서 빼겠습니다.")
        sim.say(Role.REVIEWER, f"IP 카운터는 여전히 필요합니다. {opener} 3회로 낮춰 주십시오.",
                author="sec-bot")
        sim.say(Role.REVIEWER, "`LOGIN_MAX_FAILS`는 10회로 올려 주세요.", author="product-bot")
        sim.end()
        assert [d.after_message for d in sim.contradictions()] == ["m6"], opener
    same = _after_refusal("임시 파일은 여전히 남습니다. 그리고 `tmp/export`도 디스크를 계속 "
                          "차지합니다.")
    assert len(same.state.findings) == 1
