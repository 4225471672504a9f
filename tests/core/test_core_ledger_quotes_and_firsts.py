"""A quotation's names stay with the reply under it, not with a point that
names its own thing; "still broken" with nothing raised yet is a point;
"the same position as before" declines; the same quantity lowered and raised
in many of the same words; "두지 말고" refuses putting something in."""

from __future__ import annotations

from test_core_detection import Sim
from test_core_ledger_wording import _finding

from bot.contradictions import reverses
from bot.demands import ADD, prohibited
from bot.models import Role, Trigger
from bot.wording import DECLINE


def test_a_point_naming_its_own_setting_under_a_quotation_is_its_own() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "커넥션 풀 설정을 손봐 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`pool_size=10`으로 올렸습니다.")
    sim.say(Role.REVIEWER, "- `pool_size`를 20으로 올려 주세요. 10이면 부족합니다.", author="pool-rev")
    sim.say(Role.REVIEWER, "저도 20에 찬성합니다. 예전 노트에 이런 문장이 있긴 한데요,\n"
                           "> `pool_size`는 5로 줄여야 한다.\n"
                           "이건 구 DB 시절 얘기입니다.\n\n"
                           "- 대신 `pool_timeout`을 30초에서 5초로 줄여 주세요.",
            author="stability-rev")
    sim.say(Role.OWNER, "STEP_DONE\n`pool_size=20`, `pool_timeout=5` 반영했습니다.")
    assert not sim.deadlocks()


def test_still_broken_before_anything_was_raised_is_a_point() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Invoices show CJK names as boxes; fix `billing/pdf/invoice.py`.")
    sim.say(Role.OWNER, "STEP_DONE\nRegistered Noto Sans CJK for the bill-to block (`77e0b3d`).")
    sim.say(Role.REVIEWER, "Rendered the Korean fixture on `77e0b3d`: CJK customer names still "
                           "don't render on the invoice.")
    sim.say(Role.OWNER, "STEP_DONE\nThe style was copied before the font; fixed in `8a1c4f9`.")
    assert [f.label for f in sim.state.findings] == ["F1"]
    sim.say(Role.REVIEWER, "Same output on `8a1c4f9`: the CJK customer names still don't render.")
    sim.say(Role.OWNER, "STEP_DONE\nCan't reproduce; keeping the code as it is.")
    sim.say(Role.REVIEWER, "Reproduced in CI too: CJK customer names on the invoice still "
                           "don't render.")
    sim.end()
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS and deadlock.after_message == "m7"
    # With nothing raised and nothing named, "as I said" is still no point.
    quiet = Sim(stall_threshold=2)
    quiet.say(Role.USER, "Fix the login bug.")
    quiet.say(Role.OWNER, "STEP_DONE\nFixed.")
    quiet.say(Role.REVIEWER, "As I said.")
    quiet.say(Role.OWNER, "STEP_DONE\nOk.")
    assert quiet.state.findings == []


def test_the_same_position_as_before_declines() -> None:
    assert DECLINE.search("라벨 건은 이전 답변과 같은 입장입니다.")
    assert DECLINE.search("Same position as before on the labels.")


def test_one_quantity_lowered_and_raised_in_the_same_words() -> None:
    low = _finding("F1", "sec-bot", "로그인 한도 하향이 아직 반영되지 않았습니다. `/v1/login`을 분당 "
                   "10회로 낮춰 주세요.")
    high = _finding("F5", "partner-bot", "로그인 엔드포인트 한도는 분당 120회로 올려 주셔야 합니다. "
                    "제휴사가 분당 110회 로그인을 호출합니다.")
    other = _finding("F6", "partner-bot", "웹훅 재전송 간격은 120회로 올려 주셔야 합니다.")
    assert reverses(high, low) and not reverses(other, low)


def test_not_to_put_a_column_in() -> None:
    assert {ADD, "컬럼"} <= prohibited("장바구니에는 가격 컬럼을 두지 말고, 조회하도록 바꿔 주세요.")
    # "Don't leave it as it is" asks a change, it refuses nothing.
    assert prohibited("지금 구조를 그대로 두지 말고 분리해 주세요.") == frozenset()


def test_the_paragraph_under_a_quotation_answers_it_and_no_more() -> None:
    from bot.points import replies

    quote = "Enable caching on `GET /api/v2/catalog`"
    answered = replies([f"> {quote}\n\nPlease don't. It must not be cached.\nSend no-store.\n\n"
                        "- Separately, `sale_price` needs a test."])
    assert answered == {0: quote, 1: quote}  # the paragraph's two lines, not the bullet
    # A quote-by-quote answer: each quotation's paragraph answers it.
    pairs = replies(["> 1. `ttl` is 300\nKeep it.\n> 2. `retries` is 5\nLower it to 3."])
    assert pairs == {0: "1. `ttl` is 300", 1: "2. `retries` is 5"}


def test_not_to_keep_it_somewhere_refuses_nothing_in() -> None:
    assert ADD not in prohibited("`billing/pdf.py`에 두지 말고 `shared/pdf/renderer.py`로 옮겨 주십시오.")
