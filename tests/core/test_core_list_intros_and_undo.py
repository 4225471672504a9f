"""Lines that introduce a list ("수정이 필요한 부분입니다.", "추가로,"), a
point kept by its number ("2번은 유지합니다"), the change just made asked
undone ("방금 변경은 되돌려야 합니다"), keys kept against keys renamed
("`userId` → `user_id`" against "`userId`, `createdAt` 은 그대로 두고"), and a
thing added then asked taken out in English."""

from __future__ import annotations

from test_core_ledger_wording import _finding

from bot.contradictions import reverses
from bot.finding import FindingStatus
from bot.findings import Act, reviewer_clause
from bot.points import items
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
    # Two fixes just reported: which one is undone is not said.
    assert not reverses(undo, strict, frozenset({"F1", "F3"}))
    # The change just made named beside another undo is not what is undone.
    for text in ("방금 반영하신 커밋과 별개로, 재시도 횟수는 원래대로 돌려 주세요.",
                 "방금 커밋 확인했고, 로그 레벨은 이전 설정으로 되돌려 주세요.",
                 "I checked the commit you just pushed, and please revert the retry count to 3."):
        assert not reverses(_finding("F2", "compat-bot", text), strict, frozenset({"F1"})), text
    # Its own fix, undone: no reversal between authors.
    mine = _finding("F3", "compat-bot", "`SESSION_COOKIE_SAMESITE = \"Strict\"`로 설정해 주세요.")
    assert not reverses(undo, mine, frozenset({"F3"}))


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
