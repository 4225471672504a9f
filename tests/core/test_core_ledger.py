"""The findings ledger: what each round does to each finding."""

from __future__ import annotations

from test_core_detection import Sim

from bot.detection import Approved
from bot.finding import FindingStatus, OwnerAction
from bot.findings import Act, owner_clause, reviewer_clause
from bot.ledger import judge_round
from bot.models import Role, Trigger
from bot.owner_turn import read_owner
from bot.points import clauses
from bot.topics import score, topic

REVIEW_EN = (
    "Two issues in `api/middleware/ratelimit.py`:\n"
    "1. Line 41: `INCR` and `EXPIRE` are two round trips; if the worker dies between them "
    "the key never expires.\n"
    "2. The 429 response has no `Retry-After` header, so clients cannot back off."
)
REVIEW_KO = (
    "두 가지 확인 부탁드립니다.\n"
    "1. `cache/keys.py`의 캐시 키에 `locale`이 빠져 있어서 한국어/영어 응답이 섞입니다.\n"
    "2. 상품 수정(`PATCH /products/{id}`) 시 캐시 무효화가 없습니다."
)


def stuck_room(review: str, repeats: list[str], refusals: list[str]) -> Sim:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "task")
    sim.say(Role.OWNER, "STEP_DONE implemented it")
    sim.say(Role.REVIEWER, review)
    for refusal, repeat in zip(refusals, repeats, strict=True):
        sim.say(Role.OWNER, refusal)
        sim.say(Role.REVIEWER, repeat)
    sim.end()
    return sim


def test_clauses_skip_quotes_fences_and_status_words() -> None:
    text = "DONE_WITH_CONCERNS\n> TASK_DONE from the owner\n```\nlog: not a finding\n```\n- `a.py` is wrong"
    assert clauses([text]) == ["`a.py` is wrong"]


def test_reviewer_clause_kinds() -> None:
    assert reviewer_clause("`login()` does not check for a null session.").act is Act.FINDING
    assert reviewer_clause("Both points from my last review remain open.").act is Act.REFERENCE
    assert reviewer_clause("지난번 지적이 아직 해결되지 않았습니다.").act is Act.REFERENCE
    assert reviewer_clause("The retry fix looks good now.").act is Act.ACK
    assert reviewer_clause("설명 납득했습니다, 철회합니다.").act is Act.WITHDRAW
    assert reviewer_clause("42 tests pass.").act is Act.FACT


def test_owner_clause_kinds() -> None:
    assert owner_clause("Fixed in `a41c9e2`: the key now expires atomically.").act is Act.FIX
    assert owner_clause("반영했습니다.").act is Act.FIX
    assert owner_clause("현재 구조를 그대로 유지하겠습니다.").act is Act.DECLINE
    assert owner_clause("I'd rather not change this.").act is Act.DECLINE
    assert owner_clause("다음 PR에서 처리하겠습니다.").act is Act.PROMISE


def test_english_and_korean_name_the_same_thing() -> None:
    ko = topic("캐시 만료 시간이 너무 깁니다")
    en = topic("the cache TTL is too long")
    assert score(ko, en) >= 0.2  # concepts meet across languages
    assert score(topic("`parse()` ignores garbage input"), topic("`parse()` lacks day units")) < 0.4


def test_summary_reference_repeats_every_open_finding_and_stalls() -> None:
    sim = stuck_room(
        REVIEW_EN,
        ["Both points from my last review remain open.", "As I said last time."],
        ["I'd rather not change this; clients retry anyway.", "Re-ran the suite, all green."],
    )
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS and deadlock.after_message == "m7"
    assert deadlock.finding is None  # the round-level rule
    labels = [f.label for f in sim.state.findings]
    assert labels == ["F1", "F2"]
    assert all(f.stall == 2 and f.is_open for f in sim.state.findings)


def test_korean_summary_and_paraphrase_stall() -> None:
    sim = stuck_room(
        REVIEW_KO,
        ["앞서 말씀드린 두 가지가 여전히 남아 있습니다.", "위에서 말한 두 건은 아직 그대로입니다."],
        ["현재 구조를 유지하겠습니다.", "warm-up 스크립트를 추가했습니다."],
    )
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS and deadlock.after_message == "m7"


def test_partial_concession_fires_on_the_stuck_finding() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "부가세 계산 고쳐 주세요")
    sim.say(Role.OWNER, "STEP_DONE `calc_vat()`를 Decimal로 바꿨습니다.")
    sim.say(
        Role.REVIEWER,
        "1. `calc_vat()` 반올림 모드가 `ROUND_HALF_EVEN`이라 세금계산서 기준과 다릅니다.\n"
        "2. 품목별로 반올림한 뒤 합산해서 합계 기준 반올림과 어긋납니다.",
    )
    sim.say(Role.OWNER, "1번은 `ROUND_HALF_UP`으로 고쳤습니다 (`5aa01f7`). 2번은 현재 방식이 맞다고 봅니다.")
    sim.say(Role.REVIEWER, "첫 번째는 반영된 것 확인했고, 나머지 하나는 아직입니다.")
    sim.say(Role.OWNER, "반올림 위치는 변경하지 않겠습니다.")  # closes the reviewer turn
    f1, f2 = sim.state.findings
    assert f1.status is FindingStatus.FIXED and f2.stall == 1
    assert sim.state.stalled_rounds == 0  # F1 was fixed: the round made progress
    sim.say(Role.REVIEWER, "합계 기준 반올림 문제는 여전합니다.")
    sim.end()
    [deadlock] = sim.deadlocks()
    assert deadlock.finding == "F2" and deadlock.finding_rounds == 2
    assert deadlock.evidence["disputed"] == ["F2"]


def test_new_concern_about_the_same_function_is_progress() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "duration parser")
    sim.say(Role.OWNER, "STEP_DONE `parse_duration()` added")
    sim.say(Role.REVIEWER, "`parse_duration` silently ignores garbage: `'1h30x'` returns 3600.")
    sim.say(Role.OWNER, "Switched to `re.fullmatch`; garbage raises `ValueError` (`a1b2c3d`).")
    sim.say(Role.REVIEWER, "Another problem in `parse_duration`: a bare `'90'` with no unit now raises.")
    sim.say(Role.OWNER, "A bare integer is now read as seconds (`b2c3d4e`).")
    sim.say(Role.REVIEWER, "Good. `parse_duration` has no day unit; `config/retention.yaml` uses `7d`.")
    sim.end()
    assert not sim.deadlocks()
    assert [f.status for f in sim.state.findings][:2] == [FindingStatus.FIXED] * 2


def test_rejected_fix_keeps_the_finding_stall_but_not_the_round() -> None:
    findings: list = []
    judge_round(findings, [("rev", ["`db.py:10` leaks the connection."])], None, 1)
    actions = read_owner(findings, ["Fixed the leak in `db.py` (`c0ffee1`)."])
    assert actions == {"F1": OwnerAction.FIX}
    out = judge_round(findings, [("rev", ["`db.py:10` still leaks the connection."])], actions, 2)
    assert not out.progress and findings[0].stall == 0
    assert out.events["F1"] == "repeated (fix rejected)"


def test_unmentioned_finding_with_a_reported_fix_is_fixed() -> None:
    findings: list = []
    judge_round(findings, [("rev", ["`db.py:10` leaks the connection."])], None, 1)
    actions = read_owner(findings, ["Fixed the connection leak in `db.py` (`c0ffee1`)."])
    out = judge_round(findings, [("rev", ["Please also add a docstring to `open_pool()`."])], actions, 2)
    assert out.progress and findings[0].status is FindingStatus.FIXED and out.raised == ["F2"]


def test_withdrawal_is_progress() -> None:
    findings: list = []
    judge_round(findings, [("rev", ["`limits.py`의 상한 100은 너무 낮습니다."])], None, 1)
    actions = read_owner(findings, ["상한 100은 스펙상 정해진 값이라 그대로 두겠습니다."])
    assert actions == {"F1": OwnerAction.DECLINE}
    out = judge_round(findings, [("rev", ["설명 납득했습니다. 철회하겠습니다."])], actions, 2)
    assert out.withdrawn == ["F1"] and findings[0].status is FindingStatus.WITHDRAWN


def test_quoted_task_done_is_not_approval_and_stays_stuck() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "task")
    sim.say(Role.OWNER, "TASK_DONE")
    sim.say(Role.REVIEWER, "> TASK_DONE\nNot yet: `auth.py:12` still logs the password.")
    sim.end()
    assert not any(isinstance(e, Approved) for e in sim.events)
    assert sim.state.findings and sim.state.task_active is False  # Sim never opens tasks


def test_a_new_epoch_resets_counters_not_findings() -> None:
    sim = stuck_room(
        REVIEW_EN,
        ["Both points from my last review remain open."],
        ["Not changing this."],
    )
    assert sim.state.stalled_rounds == 1
    sim.say(Role.USER, "Please keep going.")
    assert sim.state.stalled_rounds == 0 and sim.state.rounds == 0
    assert len(sim.state.findings) == 2 and all(f.stall == 0 for f in sim.state.findings)


def test_escalate_status_is_the_blocked_trigger() -> None:
    sim = Sim()
    sim.say(Role.USER, "task")
    sim.say(Role.OWNER, "ESCALATE: production credentials are needed to continue.")
    sim.say(Role.REVIEWER, "ok")
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.BLOCKED and deadlock.after_message == "m2"


def test_one_deadlock_per_closed_turn_others_listed() -> None:
    sim = Sim(stall_threshold=1, max_rounds=1)
    sim.say(Role.USER, "task")
    sim.say(Role.OWNER, "STEP_DONE done")
    sim.say(Role.REVIEWER, "BLOCKED: `a.py` cannot be reviewed without the fixture data.")
    sim.end()
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.BLOCKED
    assert deadlock.evidence["also"] == ["max_rounds"]


def test_reversal_by_another_reviewer_is_a_contradiction() -> None:
    sim = Sim()
    sim.say(Role.USER, "권한 캐시를 추가해 주세요")
    sim.say(Role.OWNER, "STEP_DONE `PERMISSION_CACHE_TTL = 300`(5분)으로 캐시를 추가했습니다.")
    sim.n += 1
    sim.now = sim.now
    detection_events = sim.events
    from bot import detection

    detection_events += detection.add_agent_message(
        sim.state, Role.REVIEWER, "m3", "sec-bot",
        "`PERMISSION_CACHE_TTL`이 5분이면 회수된 권한이 5분 동안 살아 있습니다. 1분(60초)으로 줄여 주십시오.",
        sim.now, sim.thresholds,
    )
    detection_events += detection.add_agent_message(
        sim.state, Role.REVIEWER, "m4", "perf-bot",
        "`PERMISSION_CACHE_TTL`은 1시간(3600초)으로 늘려 주십시오. 권한 DB CPU가 70%입니다.",
        sim.now, sim.thresholds,
    )
    sim.end()
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.CONTRADICTION and deadlock.after_message == "m4"
    assert deadlock.evidence["pair"] == ["F1", "F2"]
    assert [f.author for f in sim.state.findings] == ["sec-bot", "perf-bot"]


def test_compatible_findings_on_one_file_and_a_changed_mind_are_not_contradictions() -> None:
    findings: list = []
    out = judge_round(findings, [
        ("sec-bot", ["`api/upload.py`: validate the MIME type before saving."]),
        ("perf-bot", ["`api/upload.py`: stream the body instead of reading it into memory."]),
    ], None, 1)
    assert not out.contradictions and len(findings) == 2
    out = judge_round(findings, [("perf-bot", ["Lower `UPLOAD_CHUNK` to 64 KB."])], {}, 2)
    out = judge_round(findings, [("perf-bot", ["On second thought, raise `UPLOAD_CHUNK` to 1 MB."])], {}, 3)
    assert not out.contradictions and findings[2].status is FindingStatus.WITHDRAWN


def test_owner_naming_both_reviewers_declares_a_contradiction() -> None:
    findings: list = []
    judge_round(findings, [
        ("sec-bot", ["`verify_session()` must run on every request."]),
        ("perf-bot", ["p99 of `GET /feed` must stay under 50ms."]),
    ], None, 1)
    from bot.owner_turn import declared_conflict

    pair = declared_conflict(findings, [
        "sec-bot의 요구와 perf-bot의 요구는 동시에 만족할 수 없습니다. 세션 확인만으로 41ms가 듭니다."
    ])
    assert pair == ("F1", "F2")
    assert declared_conflict(findings, ["Both points fixed in `abc1234`."]) is None


def test_ruling_notes_read_in_the_rooms_language() -> None:
    from bot.finding import Finding
    from bot.i18n import history_text
    from bot.ledger import apply_ruling

    findings = [Finding(label="F1", author="sec-bot", summary="TTL 60s"),
                Finding(label="F2", author="perf-bot", summary="TTL 3600s")]
    assert apply_ruling(findings, "F1", "F2", 3)
    notes = {f.label: f.history[-1] for f in findings}
    assert history_text(notes["F1"], "ko") == "3라운드: 판정으로 유지됨 (F2 더 이상 적용되지 않음)"
    assert history_text(notes["F2"], "ko") == "3라운드: 판정으로 더 이상 적용되지 않음 (F1 유지)"
    assert history_text(notes["F2"], "en") == "round 3: no longer applies by the ruling (F1 stands)"
    assert history_text("R7: a note from a later release", "ko") == "R7: a note from a later release"


def test_a_findings_summary_is_what_it_asks_for() -> None:
    findings: list = []
    judge_round(findings, [("sec", [
        "1. `CORS_ALLOWED_ORIGINS = \"*\"` with credentials is what the audit will flag."
        " Set `CORS_ALLOWED_ORIGINS` to the explicit list of our two origins.\n"
        "2. 캐시 만료가 너무 깁니다. `CACHE_TTL`을 60초로 줄여 주세요.\n"
        "3. `retry.py` swallows every exception.",
    ])], None, 1)
    assert [f.summary for f in findings] == [
        "Set `CORS_ALLOWED_ORIGINS` to the explicit list of our two origins.",
        "`CACHE_TTL`을 60초로 줄여 주세요.",
        "`retry.py` swallows every exception.",  # no request: the point as it is
    ]


def test_an_owner_saying_a_change_is_not_needed_declines_it() -> None:
    findings: list = []
    judge_round(findings, [("rev", ["`session.py:42`에 None 체크를 추가해 주세요."])], None, 1)
    for text in ("이 함수에 None 체크를 추가할 필요는 없다고 봅니다.",
                 "None 체크는 필요 없다고 판단합니다."):
        assert read_owner(findings, [text]) == {"F1": OwnerAction.DECLINE}, text
