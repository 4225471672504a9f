"""Lines that introduce a list ("수정이 필요한 부분입니다.", "추가로,"), a
point kept by its number ("2번은 유지합니다"), the change just made asked
undone ("방금 변경은 되돌려야 합니다"), keys kept against keys renamed
("`userId` → `user_id`" against "`userId`, `createdAt` 은 그대로 두고"), a
thing added then asked taken out in English, and a new point announced in the
middle of a repeat ("그리고 새로 하나 발견했습니다."), one thing announced above
the list that says it ("다만 한 가지는 되돌려야 합니다."), and points numbered
"1:" ("1: verified …"), and "모두" of places, not of points ("호출 경로 세 곳을
모두 확인했습니다")."""

from __future__ import annotations

from test_core_detection import Sim
from test_core_ledger_wording import _finding

from bot.contradictions import reverses
from bot.finding import FindingStatus
from bot.findings import Act, reviewer_clause
from bot.models import Role
from bot.points import items, point_numbers
from bot.stances import presence


def test_a_line_that_introduces_the_list_is_no_point() -> None:
    turn = ["수정이 필요한 부분입니다.\n\n1. 토큰을 지우지 않습니다.\n2. 야간 발송 차단이 없습니다.\n\n"
            "추가로,\n3. 500개 단위로 나눠야 합니다."]
    texts = [text for _, text in items(turn)]
    assert "수정이 필요한 부분입니다." not in texts and "추가로" not in texts
    assert len({n for n, _ in items(turn)}) == 3
    # A line that names what needs the change is a point of its own.
    for line in ("1. `retry_backoff` 설정이 필요한 부분입니다.", "로그인 시 CSRF 토큰 검증이 필요한 부분입니다.",
                 "레이스 컨디션은 검토할 사항입니다.", "수정이 필요한 부분이 남아 있습니다."):
        assert len(items([line])) == 1, line


def test_a_point_kept_by_its_number_refers_to_it() -> None:
    for text in ("2번은 유지합니다.", "2번은 그대로 유지합니다."):
        clause = reviewer_clause(text)
        assert clause.act is Act.REFERENCE and clause.ordinals == (2,), text


def test_the_change_just_made_asked_undone_reverses_that_fix() -> None:
    strict = _finding("F1", "sec-bot", "`SESSION_COOKIE_SAMESITE = \"Strict\"`로 설정해 주세요.")
    strict.status = FindingStatus.FIXED
    undo = _finding("F2", "compat-bot", "방금 변경은 되돌려야 합니다. 세션 쿠키의 교차 사이트 전송 "
                                        "제한을 이전 수준으로 완화해 주세요.")
    assert reverses(undo, strict, frozenset({"F1"}))
    # Two fixes just reported: "방금 변경" alone does not say which one is undone.
    bare = _finding("F2", "compat-bot", "방금 변경은 되돌려야 합니다. 이전 수준으로 완화해 주세요.")
    assert reverses(bare, strict, frozenset({"F1"}))
    assert not reverses(bare, strict, frozenset({"F1", "F3"}))
    # What the words name does ("세션 쿠키의 교차 사이트 전송 제한" is what
    # `SESSION_COOKIE_SAMESITE` means, word by word).
    assert reverses(undo, strict, frozenset({"F1", "F3"}))
    # The change just made named beside another undo is not what is undone.
    for text in ("방금 반영하신 커밋과 별개로, 재시도 횟수는 원래대로 돌려 주세요.",
                 "방금 커밋 확인했고, 로그 레벨은 이전 설정으로 되돌려 주세요.",
                 "I checked the commit you just pushed, and please revert the retry count to 3."):
        assert not reverses(_finding("F2", "compat-bot", text), strict, frozenset({"F1"})), text
    # Its own fix, undone: no reversal between authors.
    mine = _finding("F3", "compat-bot", "`SESSION_COOKIE_SAMESITE = \"Strict\"`로 설정해 주세요.")
    assert not reverses(bare, mine, frozenset({"F3"}))


def test_keys_kept_as_they_are_against_keys_renamed() -> None:
    assert presence("전부 snake_case 로 통일해야 합니다: `userId` → `user_id`, `createdAt` → "
                    "`created_at`.") == {"~@userid", "~@createdat"}
    assert {"^@userid", "^@createdat"} <= presence(
        "`userId`, `createdAt` 은 그대로 두고, `avatar_url` 을 `avatarUrl` 로 바꿔 주십시오.")
    assert presence("`userId`는 그대로 두면 안 됩니다.") == set()
    # An arrow in a condition, or a call chain, renames nothing.
    assert presence("`userId` → `user_id` 처럼 바꾸면 앱이 깨지므로 기존 키를 유지해야 합니다.") == set()
    assert presence("응답 키 변경(`userId` → `user_id`)을 하더라도 별칭 키를 함께 내려 주세요.") == set()
    assert presence("Please change the call order `a` -> `b` -> `c`.") == set()
    snake = _finding("F1", "api-bot", "응답 키가 `userId`, `createdAt`, `avatar_url` 처럼 섞여 있습니다. "
                                      "전부 snake_case 로 통일해야 합니다: `userId` → `user_id`, "
                                      "`createdAt` → `created_at`.")
    camel = _finding("F4", "mobile-bot", "키 이름 통일 방향은 snake_case 가 아니라 camelCase 여야 합니다. "
                                         "`userId`, `createdAt` 은 그대로 두고, `avatar_url` 을 "
                                         "`avatarUrl` 로 바꿔서 camelCase 로 맞춰 주십시오.")
    assert reverses(camel, snake)


def test_a_thing_added_then_asked_out_in_english() -> None:
    add = _finding("F4", "ux-bot", "Staff retype a long email each time. Add a \"Remember my email\" "
                                   "checkbox that prefills the email field on the next visit.")
    add.status = FindingStatus.FIXED
    out = _finding("F5", "sec-bot", "The new `remember_email` cookie has to go: persisting an "
                                    "employee's email on a shared machine is forbidden. Please "
                                    "remove the checkbox and the cookie entirely.")
    assert reverses(out, add)
    # Words in common, but no name of one said by the other: not the same thing.
    other = _finding("F6", "sec-bot", "Please remove the debug banner from the login page.")
    assert not reverses(other, add)
    job = _finding("F7", "perf-bot", "Add a retry to the welcome email send job.")
    job.status = FindingStatus.FIXED
    debug = _finding("F8", "sec-bot", "Remove the debug print in the welcome email send job.")
    assert not reverses(debug, job)


def test_loosened_again_as_before_is_asked_back() -> None:
    strict = _finding("F1", "sec-bot", "`SESSION_COOKIE_SAMESITE = \"None\"`이면 다른 사이트에서 보낸 요청에도 "
                                       "세션 쿠키가 실려 CSRF 방어가 토큰 하나에만 의존하게 됩니다. "
                                       "`SESSION_COOKIE_SAMESITE = \"Strict\"`로 바꿔야 합니다.")
    strict.status = FindingStatus.FIXED
    back = _finding("F3", "ux-bot", "세션 쿠키가 외부 사이트에서 돌아오는 요청에도 실리도록, 세션 쿠키의 "
                                    "SameSite 제한을 다시 풀어 이전처럼 교차 사이트 전송을 허용해 주세요.")
    assert reverses(back, strict)
    # As before, but about something the fixed point never named: no reversal.
    other = _finding("F4", "ux-bot", "결제 완료 화면의 안내 문구를 이전처럼 두 줄로 허용해 주세요.")
    assert not reverses(other, strict)


def test_a_new_point_announced_after_a_repeat_is_a_point_of_its_own() -> None:
    sim = Sim(stall_threshold=3)
    sim.say(Role.USER, "정산 내역 CSV 다운로드 기능을 추가해 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`settlement/export.py` 에 `export_csv()` 를 추가했습니다.")
    sim.say(Role.REVIEWER, "BOM 없는 UTF-8 이라 Windows Excel 에서 열면 한글 가맹점명이 깨집니다. "
                           "`utf-8-sig` 로 써야 합니다.")
    sim.say(Role.OWNER, "STEP_DONE\nBOM 은 넣지 않겠습니다. 파이썬 도구에서 첫 컬럼명이 깨집니다.")
    sim.say(Role.REVIEWER, "BOM 건은 동의하기 어렵습니다. 이 파일의 실제 사용자는 Excel 로 여는 정산 "
                           "담당자입니다. 여전히 `utf-8-sig` 가 필요합니다.")
    sim.say(Role.OWNER, "STEP_DONE\n인코딩은 현행 유지하겠습니다.")
    sim.say(Role.REVIEWER, "인코딩 문제는 앞서 말씀드린 그대로입니다. 그리고 새로 하나 발견했습니다. "
                           "헤더가 `settled_at,merchant,amount` 처럼 영어 필드명입니다. 담당자용 "
                           "파일이므로 한글 헤더(`정산일,가맹점,금액`)로 바꿔야 합니다.")
    sim.say(Role.OWNER, "STEP_DONE\n헤더를 한글로 바꿨습니다(commit `b1c2d3e`).")
    labels = [f.label for f in sim.state.findings]
    assert labels == ["F1", "F2"], labels  # the header is a point of its own
    header = sim.state.findings[1]
    assert "code:settled_at" in header.anchors
    # What the point said before the announcement is not the new point's.
    assert not any(t in header.terms for t in ("인코", "코딩"))
    assert sim.state.findings[0].stall == 2  # the encoding point was repeated


def test_one_thing_announced_above_its_point_is_no_point() -> None:
    for text in ("다만 한 가지는 되돌려야 합니다.", "One thing has to be reverted, though."):
        assert reviewer_clause(text).act is Act.FACT, text
    # Naming what it is about, it is the point.
    assert reviewer_clause("다만 `ACCESS_TOKEN_TTL` 한 가지는 되돌려야 합니다.").act is Act.FINDING


def test_points_numbered_with_a_colon() -> None:
    turn = ["1: verified, only one run happens. Thanks.\n2: not fixed. The scheduler still uses UTC."]
    assert point_numbers(turn) == {0: 1, 1: 2}
    # A time or a ratio at the start of a line is no number.
    assert point_numbers(["12:30 is when the job runs.\n3:1 is the ratio."]) == {}


def test_a_colon_numbered_reply_answers_by_number() -> None:
    sim = Sim()
    sim.say(Role.USER, "Send SMS reminders 24 hours before each appointment.")
    sim.say(Role.OWNER, "STEP_DONE\n- `schedule_reminder(appt)` enqueues an RQ job")
    sim.say(Role.REVIEWER, "Findings:\n1. `start_local` is a naive datetime. Build an aware datetime "
                           "with `ZoneInfo(appt.clinic.tz)`.\n2. There's no quiet-hours rule. "
                           "Reminders must not be sent between 21:00 and 08:00 local time.")
    sim.say(Role.OWNER, "STEP_DONE\n1. Fixed in `c3a1e90`: aware datetimes via `zoneinfo`.\n"
                        "2. I don't think quiet hours belong here. Leaving it.")
    sim.say(Role.REVIEWER, "1: verified, including the DST case.\n2: still needed. A 10:00 "
                           "appointment yields an SMS at 10:00 the day before, which is fine, but a "
                           "06:30 one yields an SMS at 06:30. Quiet hours have to be enforced.\n"
                           "3: new. Rescheduling an appointment calls `schedule_reminder` again but "
                           "never cancels the old RQ job. Cancel the previous job on reschedule.")
    sim.say(Role.OWNER, "STEP_DONE\n3. Fixed in `7f2d114`.")
    first, quiet, new = sim.state.findings
    assert first.status is FindingStatus.FIXED  # "1: verified"
    assert quiet.is_open and quiet.stall == 1  # "2: still needed", whatever it finds fine
    assert new.label == "F3" and "code:schedule_reminder" in new.anchors  # "3: new."


def test_all_the_places_checked_is_not_all_the_points() -> None:
    assert not reviewer_clause("`invalidate` 호출 경로 세 곳을 모두 확인했습니다.").everything
    assert reviewer_clause("두 가지 모두 확인했습니다.").everything
    assert reviewer_clause("지적한 내용은 모두 반영된 것을 확인했습니다.").everything
    sim = Sim()
    sim.say(Role.USER, "상품 상세 API에 Redis 캐시를 붙여 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`products/cache.py`를 추가했습니다. `PRODUCT_CACHE_TTL_S = 300`")
    sim.say(Role.REVIEWER, "1. 가격이 바뀐 뒤 최대 5분간 이전 가격이 보입니다. `PRODUCT_CACHE_TTL_S`를 "
                           "30초로 줄여 주세요.\n2. 캐시 키에 `locale`이 없습니다.")
    sim.say(Role.OWNER, "STEP_DONE\n캐시 키를 `product:{id}:{locale}`로 변경했습니다. TTL은 300초로 "
                        "유지했습니다. 세 곳 모두 `invalidate(id)`를 거칩니다.")
    sim.say(Role.REVIEWER, "`invalidate` 호출 경로 세 곳을 모두 확인했습니다. 설명에 동의하며 TTL 30초 "
                           "요청(1번)은 철회합니다. locale 키도 확인했습니다.")
    sim.say(Role.OWNER, "STEP_DONE\n감사합니다.")
    ttl, locale = sim.state.findings
    assert ttl.status is FindingStatus.WITHDRAWN and locale.status is FindingStatus.FIXED


def test_a_count_in_digits_beside_what_was_done_is_all_of_them() -> None:
    from bot.findings import owner_clause
    assert owner_clause("3건 반영했습니다 (`a7c03f9`).").everything
    # A count of other things is no "all".
    assert not owner_clause("값이 남아 있는 18,204건을 옮겼습니다.").everything
    assert not owner_clause("3개 파일을 수정했습니다.").everything
