"""A fix that names the setting a finding asked a value of without naming it.

"기본값을 상수로 빼서 `False`로 고정해 주세요" answered with
"`NEW_EDITOR_DEFAULT = False` 상수로 분리했습니다": the finding now asks
`NEW_EDITOR_DEFAULT` to be false, so another reviewer asking it `True`
reverses it. Only where the fix cannot be read two ways."""

from __future__ import annotations

from test_core_detection import Sim

from bot.finding import Finding, OwnerAction
from bot.fix_values import fixed_by_value, names_set
from bot.models import Role

ASK_OFF = ("새 에디터가 켜져 있으면 검증되지 않은 화면이 전체 사용자에게 나갑니다. "
           "기본값을 상수로 빼서 `False`로 고정해 주세요.")
FIXED = "STEP_DONE\n`NEW_EDITOR_DEFAULT = False` 상수로 분리했습니다. pytest 88 passed."


def _room(fix: str, second: str) -> Sim:
    sim = Sim(stall_threshold=3)
    sim.say(Role.USER, "새 에디터를 플래그 뒤에 넣어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`flags.py`에 `new_editor` 플래그를 추가했습니다.")
    sim.say(Role.REVIEWER, ASK_OFF, author="qa-bot")
    sim.say(Role.REVIEWER, "플래그 설명 문구에 담당 팀 이름을 넣어 주세요.", author="product-bot")
    sim.say(Role.OWNER, fix)
    sim.say(Role.REVIEWER, "확인했습니다. LGTM", author="qa-bot")
    sim.say(Role.REVIEWER, second, author="product-bot")
    sim.end()
    return sim


def test_the_other_reviewer_asking_the_named_setting_otherwise_contradicts() -> None:
    sim = _room(FIXED, "전체 오픈이 결정됐습니다. `NEW_EDITOR_DEFAULT`를 `True`로 바꿔 주세요.")
    assert [d.after_message for d in sim.contradictions()] == ["m7"]  # product-bot's turn closes at the end
    [asked_off] = [f for f in sim.state.findings if f.author == "qa-bot"]
    assert "=false@new_editor_default" in asked_off.values


def test_asking_the_same_value_or_another_setting_is_no_contradiction() -> None:
    same = _room(FIXED, "`NEW_EDITOR_DEFAULT`는 `False` 그대로 두는 데 동의합니다. "
                        "플래그 설명에 팀 이름도 넣어 주세요.")
    assert same.contradictions() == []
    other = _room(FIXED, "`NEW_EDITOR_ROLLOUT_PERCENT`를 `10`으로 바꿔 주세요.")
    assert other.contradictions() == []


def test_a_fix_setting_two_names_to_the_value_teaches_neither() -> None:
    both = ("STEP_DONE\n`NEW_EDITOR_DEFAULT = False`, `NEW_EDITOR_BETA = False`로 "
            "분리했습니다.")
    sim = _room(both, "전체 오픈이 결정됐습니다. `NEW_EDITOR_DEFAULT`를 `True`로 바꿔 주세요.")
    assert sim.contradictions() == []


def _asks(label: str, value: str) -> Finding:
    return Finding(label=label, author="qa-bot", summary="", values=[value])


def test_names_set_reads_only_fixed_findings_and_one_name() -> None:
    findings = [_asks("F1", "=false@"), _asks("F2", "30s@")]
    fix = {"F1": OwnerAction.FIX, "F2": OwnerAction.FIX}
    assert names_set(findings, fix, [FIXED]) == {
        "F1": ("=false@new_editor_default", "code:new_editor_default")}
    # Declined, or untouched: the owner's assignment answers something else.
    assert names_set(findings, {"F1": OwnerAction.DECLINE}, [FIXED]) == {}
    # Two findings asked the same unnamed value: which one the name is for is not said.
    twice = [_asks("F1", "=false@"), _asks("F3", "=false@")]
    assert names_set(twice, {"F1": OwnerAction.FIX, "F3": OwnerAction.FIX}, [FIXED]) == {}
    # A value the finding already keyed, or a removal, is no unnamed value.
    keyed = [_asks("F1", "=false@other_flag"), _asks("F4", "!false@")]
    assert names_set(keyed, {f.label: OwnerAction.FIX for f in keyed}, [FIXED]) == {}
    # A bound is: "한 페이지에 20개 이하로" set as `PAGE_SIZE = 20` is at most 20 of it.
    bound = [_asks("F2", "<=20개@")]
    assert names_set(bound, {"F2": OwnerAction.FIX}, ["`PAGE_SIZE = 20` 으로 바꿨습니다."]) == {
        "F2": ("<=20개@page_size", "code:page_size")}
    # Quoted, the assignment is the reviewer's words, not the owner's change.
    assert names_set(findings, fix, ["> `NEW_EDITOR_DEFAULT = False`\n반영 예정입니다."]) == {}


def test_a_fix_setting_the_value_a_finding_asked_in_words_answers_it() -> None:
    asked = _asks("F3", "<=20개@")
    other = _asks("F4", "=true@")
    untouched = {"F3": OwnerAction.UNTOUCHED, "F4": OwnerAction.UNTOUCHED}
    fix = ["STEP_DONE `PAGE_SIZE = 20` 으로 바꿨습니다. 41 passed."]
    assert fixed_by_value([asked, other], untouched, fix) == {"F3"}
    # Not without a fix reported, nor when two findings asked that value.
    assert fixed_by_value([asked], untouched, ["`PAGE_SIZE = 20` 이면 요청이 늘어납니다."]) == set()
    twice = [asked, _asks("F5", "20@")]
    assert fixed_by_value(twice, {**untouched, "F5": OwnerAction.UNTOUCHED}, fix) == set()


def test_the_page_size_asked_in_words_then_set_is_reversed_by_another_number() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "주문 목록을 페이지 번호 방식으로 바꿔 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`orders/views.py`에 `PAGE_SIZE = 50` 페이지네이션을 넣었습니다.")
    sim.say(Role.REVIEWER, "스크린 리더로 끝까지 읽기 어렵습니다. 한 페이지에 20개 이하로 보여야 "
                           "합니다.", author="a11y-bot")
    sim.say(Role.OWNER, "STEP_DONE `PAGE_SIZE = 20` 으로 바꿨습니다. 41 passed.")
    sim.say(Role.REVIEWER, "`PAGE_SIZE = 20` 이면 요청이 2.5배로 늘어납니다. `PAGE_SIZE = 100` 으로 "
                           "올려 주세요.", author="perf-bot")
    sim.end()
    assert [d.after_message for d in sim.contradictions()] == ["m5"]


def test_a_size_written_as_a_product_in_code_answers_the_size_asked_in_words() -> None:
    asked = _asks("F1", "<=10mb@")
    fix = ["반영했습니다 (`6c3d8e4`).\n- `MAX_UPLOAD_BYTES = 10 * 1024 * 1024` (`records/settings.py`), "
           "초과 시 413\n- 형식 오류 415, 그 외 500"]
    assert names_set([asked], {"F1": OwnerAction.FIX}, fix) == {
        "F1": ("<=10mb@max_upload_bytes", "code:max_upload_bytes")}
    # A bare switch value is no such link: `VERBOSE_SQL = False` among several fixes.
    off = _asks("F2", "=false@")
    fixes = ["반영했습니다 (`6c3d8e4`).\n- 로그 레벨을 낮췄습니다.\n- `VERBOSE_SQL = False`로 바꿨습니다."]
    assert names_set([off], {"F2": OwnerAction.FIX}, fixes) == {}


def test_a_learnt_setting_is_in_the_findings_topic_at_once() -> None:
    finding = _asks("F1", "=false@")
    assert "code:new_editor_default" not in finding.topic().anchors  # (its topic is cached)
    finding.learn_setting("=false@new_editor_default", "code:new_editor_default")
    assert "code:new_editor_default" in finding.topic().anchors
    assert finding.values == ["=false@", "=false@new_editor_default"]
