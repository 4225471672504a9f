"""How reviewers and owners wrote what held-out rooms 85 and 86 had to read:
a line that only leads into the bullet below it, "the first header" (no point
number), "100k" and "100,000", "my view hasn't changed", a day said in words,
"replace X in F with Y", "must be restricted", "이번 범위에서 빼겠습니다", and a
new point that begins in the middle of a paragraph ("그리고 `X` 5회도
많습니다"). Each with the look-alike that must stay as it was."""

from __future__ import annotations

from test_core_detection import Sim

from bot.demands import asked_verbs
from bot.findings import Act, owner_clause, reviewer_clause, selectors
from bot.models import Role
from bot.stances import presence
from bot.topics import topic
from bot.values import setting_values


def test_a_line_that_leads_into_the_bullet_below_is_no_point() -> None:
    assert reviewer_clause("중복 발송 원인으로 보이는 부분입니다.").act is Act.FACT
    assert reviewer_clause("Here is what looks like the cause of the duplicates:").act is Act.FACT
    assert reviewer_clause("원인으로 보이는 부분을 고쳐 주세요.").act is Act.FINDING


def test_the_first_of_a_thing_is_no_point_number() -> None:
    assert selectors("Strip the BOM from the first header.")[0] == ()
    assert selectors("The first column is still unescaped.")[0] == ()
    assert selectors("The first point is still open.")[0] == (1,)
    assert selectors("First, the retry still has no backoff.")[0] == (1,)


def test_thousands_written_with_k_are_the_same_number() -> None:
    assert "num:100000" in topic("Stream it and cap the row count at 100k.").anchors
    assert "num:100000" in topic("It stops after 100,000 rows.").anchors
    assert "num:20mb" in topic("Keep uploads under 20MB.").anchors  # a unit stays a unit


def test_an_unchanged_view_is_a_refusal() -> None:
    for text in ("On (1) my view hasn't changed: the importer keeps values as typed.",
                 "Our position is unchanged on the second point.",
                 "IP 기준 카운터는 이번 범위에서 빼겠습니다."):
        assert owner_clause(text).act is Act.DECLINE, text
    assert owner_clause("The view has changed: the list now renders lazily (commit "
                        "`9f1c2ab`).").act is Act.FIX


def test_a_length_of_days_said_in_words() -> None:
    assert setting_values("세션은 최소 하루는 유지돼야 합니다.") == {">=1일@"}
    assert setting_values("세션은 최소 24시간은 유지돼야 합니다.") == {">=24시간@"}
    assert setting_values("로그는 이틀은 남아 있어야 합니다.") == {"2일@"}
    # A rate, and the whole day, are no length asked.
    assert setting_values("하루에 한 번 돌려 주세요.") == set()
    assert setting_values("하루 종일 로그가 쌓입니다.") == set()


def test_replaced_in_a_file_and_restricted_in_the_passive() -> None:
    assert presence("Replace `requests` in `billing/ledger_client.py` with "
                    "`httpx.AsyncClient`.") == {"+@httpx", "+@asyncclient", "-@requests"}
    assert "restrict" in asked_verbs("`GET /api/v1/export` must be restricted to admins.")
    assert asked_verbs("It must be fast.") == frozenset()


def test_a_point_begun_mid_paragraph_is_its_own_and_can_be_reversed() -> None:
    sim = Sim(stall_threshold=3)
    sim.say(Role.USER, "로그인 실패가 반복되면 계정을 잠가 주세요.")
    sim.say(Role.OWNER, "STEP_DONE `auth/lock.py`를 추가했습니다. `LOGIN_MAX_FAILS = 5`입니다.")
    sim.say(Role.REVIEWER, "한 IP에서 여러 계정을 번갈아 시도하면 막지 못합니다. IP 기준 카운터도 "
                           "추가해 주십시오.", author="sec-bot")
    sim.say(Role.OWNER, "IP 기준 카운터는 이번 범위에서 빼겠습니다. 사무실 IP 공유 때문에 오탐이 "
                        "많습니다.")
    sim.say(Role.REVIEWER, "IP 카운터는 여전히 필요합니다. 그리고 `LOGIN_MAX_FAILS` 5회도 "
                           "많습니다. 3회로 낮춰 주십시오.", author="sec-bot")
    sim.say(Role.REVIEWER, "잠금 해제 문의가 너무 많습니다. `LOGIN_MAX_FAILS`는 10회로 올려 "
                           "주세요.", author="product-bot")
    sim.end()
    assert [d.after_message for d in sim.contradictions()] == ["m6"]
    sec = [f for f in sim.state.findings if f.author == "sec-bot"]
    assert len(sec) == 2 and sec[0].history[-1] == "R2: declined, repeated"


def test_more_about_the_point_in_the_same_paragraph_is_no_new_point() -> None:
    sim = Sim(stall_threshold=3)
    sim.say(Role.USER, "로그인 실패가 반복되면 계정을 잠가 주세요.")
    sim.say(Role.OWNER, "STEP_DONE `auth/lock.py`를 추가했습니다.")
    sim.say(Role.REVIEWER, "한 IP에서 여러 계정을 번갈아 시도하면 막지 못합니다. IP 기준 카운터도 "
                           "추가해 주십시오.", author="sec-bot")
    sim.say(Role.OWNER, "IP 기준 카운터는 이번 범위에서 빼겠습니다.")
    sim.say(Role.REVIEWER, "IP 카운터는 여전히 필요합니다. 그리고 공유 IP 오탐은 한도를 넉넉히 "
                           "잡으면 됩니다.", author="sec-bot")
    sim.say(Role.OWNER, "그래도 이번에는 넣지 않겠습니다.")
    assert [f.label for f in sim.state.findings] == ["F1"]


def test_a_code_setting_against_a_length_in_words_in_one_turn() -> None:
    sim = Sim()
    sim.say(Role.USER, "세션 만료를 넣어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE `auth/session.py`에 `SESSION_TTL = 1800`을 넣었습니다.")
    sim.say(Role.REVIEWER, "관리자 세션이 길면 위험합니다. `SESSION_TTL = 300` 으로 줄여야 합니다.",
            author="sec-bot")
    sim.say(Role.REVIEWER, "고객이 자꾸 로그아웃됩니다. 세션은 최소 하루는 유지돼야 합니다.",
            author="product-bot")
    sim.end()
    assert [d.after_message for d in sim.contradictions()] == ["m4"]


def test_a_difference_said_in_passing_or_newly_added_opens_no_point_mid_paragraph() -> None:
    for reply in ("배포 빈도가 낮은 것과 롤백이 아예 없는 것은 다른 문제입니다. 또 `rollback.sh`가 "
                  "없으면 장애 때 되돌릴 수 없습니다. 롤백 스크립트는 여전히 필요합니다.",
                  "다른 팀 사례가 이 변경을 정당화하지는 않습니다. 새로 추가되는 배포 단계에는 "
                  "`rollback.sh`를 넣어 주세요."):
        sim = Sim(stall_threshold=3)
        sim.say(Role.USER, "배포 파이프라인을 정리해 주세요.")
        sim.say(Role.OWNER, "STEP_DONE `deploy/pipeline.yml`을 정리했습니다.")
        sim.say(Role.REVIEWER, "배포 단계에 롤백 스크립트(`rollback.sh`)가 없습니다. 추가해 주세요.")
        sim.say(Role.OWNER, "롤백은 수동으로 하면 됩니다. 스크립트는 넣지 않겠습니다.")
        sim.say(Role.REVIEWER, reply)
        sim.say(Role.OWNER, "그래도 이번에는 넣지 않겠습니다.")
        assert [f.label for f in sim.state.findings] == ["F1"], reply


def test_a_point_closed_in_words_and_thanks_for_other_work() -> None:
    assert reviewer_clause("For the changelog, this closes my earlier comment:").act is Act.ACK
    assert reviewer_clause("That still does not close my earlier comment.").act is not Act.ACK
    assert reviewer_clause("As in my earlier comment, the boundary is missing.").act is not Act.ACK
    for thanks in ("Kind of you to improve the error body — that'll help API consumers.",
                   "Appreciate the docstrings and the doc note — genuinely helpful."):
        assert reviewer_clause(thanks).act is Act.FACT, thanks
    # A request said politely, and thanks before a point, still ask.
    for asks in ("I would appreciate it if you removed the debug print.",
                 "Appreciate the fix, but `retry_after` is still ignored."):
        assert reviewer_clause(asks).act is Act.FINDING, asks


def test_a_reviewer_satisfied_states_no_point() -> None:
    assert reviewer_clause("Security side is satisfied.").act is Act.FACT
    assert reviewer_clause("I am not satisfied with the retry loop; add backoff.").act is Act.FINDING


def test_a_library_kept_in_use_and_one_asked_in_by_its_mode() -> None:
    assert presence("xlsx 생성은 `openpyxl` 대신 `XlsxWriter`의 `constant_memory` 모드로 바꿔야 "
                    "합니다.") == {"+@xlsxwriter", "-@openpyxl"}
    assert "+@openpyxl" in presence("xlsx 생성은 반드시 `openpyxl`로 유지해 주세요.")
    # Kept as a description, or only if something holds, is asked of nothing.
    assert presence("지금은 `openpyxl`로 유지하고 있습니다.") == set()


def test_digits_grouped_with_underscores_in_code_are_one_number() -> None:
    # (In the unit its camelCase name ends in: `…Ms`.)
    assert setting_values("Please set `idleTimeoutMs: 7_200_000` in `config/session.yaml`.") == {
        "7200000ms@idletimeoutms"}
    assert setting_values("Please set `idle_limit: 7_200_000` in `config/session.yaml`.") == {
        "7200000@idle_limit"}
    # A name with digits and underscores is no number: it keeps its underscores.
    assert setting_values("Rename `v2_100_000` to `v3`.") == {"=v3@v2_100_000"}
