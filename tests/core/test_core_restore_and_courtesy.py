"""Three readings from held-out 89 and 90 (studied after their one run):

- "Keep `X`: restore the class and route `/v1/orders` through it again" asks
  the old way back; its "again" is no "I'm saying it again", and `/v1/orders`
  is the route the file `api/v1/orders.py` serves, one place with it.
- "The index is used now (…)" acknowledges the fix.
- Korean courtesy around an insistence ("설명해 주신 부분도 잘 이해했습니다",
  "취지도 충분히 공감합니다", "양해 부탁드립니다") neither withdraws the point
  nor raises one."""

from __future__ import annotations

from test_core_detection import Sim

from bot.findings import Act, restates, reviewer_clause
from bot.models import Role
from bot.places import same_place


def test_again_beside_a_verb_of_putting_back_is_no_restatement() -> None:
    assert not restates("Restore the class and route `/v1/orders` through it again.")
    assert not restates("Please bring the retry back again.")
    assert restates("Again: the class has to go.")
    assert restates("As I said, restore the class; it still has to stay.")


def test_a_route_and_the_file_that_serves_it_are_one_place() -> None:
    assert same_place(["code:/v1/orders"], ["path:api/v1/orders.py"])
    assert not same_place(["code:/v2/orders"], ["path:api/v1/orders.py"])
    # (One word names too little: `/orders` is in many files' paths.)
    assert not same_place(["code:/orders"], ["path:api/v1/orders.py"])


def test_used_now_acknowledges() -> None:
    assert reviewer_clause("The index is used now (`Index Scan using idx_a`, 3 ms).").act is Act.ACK
    assert reviewer_clause("The old key is used in three places.").act is Act.FINDING
    assert reviewer_clause("The cache is now used, but only for reads.").act is not Act.ACK


def test_a_class_asked_back_after_another_reviewer_had_it_removed_contradicts() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Add `/v2/invoices` with cursor pagination; keep `/v1/invoices` working.")
    sim.say(Role.OWNER, "STEP_DONE\n`/v1/invoices` still goes through `LegacyPager` in"
            " `api/v1/invoices.py`.")
    sim.say(Role.REVIEWER, "`LegacyPager` only wraps `parse_page_params()`. Delete the class and"
            " call `parse_page_params()` from `api/v1/invoices.py` directly.", author="style-bot")
    sim.say(Role.OWNER, "Removed `LegacyPager` (`a1b2c3d`). pytest: 210 passed.")
    sim.say(Role.REVIEWER, "Thanks, addressed.", author="style-bot")
    sim.say(Role.REVIEWER, "Deleting `LegacyPager` also removed its page clamp. Keep"
            " `LegacyPager`: restore the class and route `/v1/invoices` through it again.",
            author="perf-bot")
    sim.say(Role.OWNER, "Noted.")
    sim.end()
    assert [d.after_message for d in sim.contradictions()] == ["m6"]


def test_korean_courtesy_is_neither_a_withdrawal_nor_a_point() -> None:
    for text in ("쿠키 캐시에 대해 자세히 설명해 주신 부분도 잘 이해했습니다.",
                 "요구사항을 비율 중심으로 해석하신 취지도 충분히 공감합니다.",
                 "같은 부분을 한 번 더 말씀드리는 점 너그럽게 양해 부탁드립니다.",
                 "번거롭게 해 드려 죄송합니다만, 한 번만 더 검토해 주시면 감사하겠습니다."):
        assert reviewer_clause(text).act is Act.FACT, text
    assert reviewer_clause("네, 이해했습니다. 그 부분은 넘어가겠습니다.").act is Act.WITHDRAW


def test_a_polite_insistence_after_two_refusals_stalls() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "`limits/quota.py`에 사용자별 일일 한도를 넣어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`QuotaGuard.allow(user)`를 추가했습니다. 한도는 메모리 dict에"
            " 저장합니다.")
    sim.say(Role.REVIEWER, "`QuotaGuard`가 한도를 프로세스 메모리에 두어서 워커가 4개면 사용자가 한도의"
            " 4배를 씁니다. Redis 같은 공유 저장소로 옮겨야 합니다.")
    sim.say(Role.OWNER, "워커 수가 적어서 오차는 감수할 만하다고 봅니다. 변경하지 않았습니다.")
    sim.say(Role.REVIEWER, "설명해 주신 부분도 잘 이해했습니다. 죄송합니다만, 워커가 여러 개인 한"
            " `QuotaGuard`의 메모리 한도는 여전히 워커 수만큼 늘어납니다. 공유 저장소로 옮기는 방향을"
            " 다시 한번 제안드립니다.")
    sim.say(Role.OWNER, "말씀은 감사하지만 현 구현을 유지하겠습니다.")
    sim.say(Role.REVIEWER, "취지는 충분히 공감합니다. 양해 부탁드립니다만, `QuotaGuard` 한도를 공유"
            " 저장소로 옮겨 주시면 감사하겠습니다.")
    sim.say(Role.OWNER, "그대로 두겠습니다.")
    sim.end()
    assert [(d.trigger.value, d.after_message) for d in sim.deadlocks()] == [("no_progress", "m7")]
