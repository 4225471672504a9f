"""A refusal that opens with its subject ("재시도는 … 넣지 않았습니다") and
gives a reason naming other code; the reviewer asking again for it in one
word of it; names that carry a concept in their parts (`autoretry_for`);
round numbers in words ("a hundred ids or fewer")."""

from __future__ import annotations

from test_core_detection import Sim
from test_core_ledger_wording import _finding

from bot.finding import OwnerAction
from bot.models import Role, Trigger
from bot.owner_turn import read_owner
from bot.quantity_words import bound_of, numerals
from bot.topics import concepts, topic


def test_a_name_says_its_concepts_in_its_parts() -> None:
    assert "~retry" in concepts(topic("`autoretry_for`와 backoff를 설정해 주세요."))
    assert "~retry" in concepts(topic("Raise `max_retries` to 5."))
    assert "~retry" not in concepts(topic("Raise `max_workers` to 5."))


def test_a_refusal_opening_with_its_subject_refuses_that_point() -> None:
    retry = _finding("F1", "search-review", "`search/tasks.py:27` `index_product`가 실패하면 로그만 "
                                            "남기고 끝납니다. `autoretry_for`와 backoff를 설정해 주세요.")
    delete = _finding("F2", "search-review", "상품 삭제 시 색인에서 문서를 지우는 처리가 없습니다.")
    actions = read_owner([retry, delete], [
        "재시도는 5분마다 도는 `reconcile_index`가 누락분을 메우므로 넣지 않았습니다."])
    assert actions == {"F1": OwnerAction.DECLINE, "F2": OwnerAction.UNTOUCHED}
    # A subject two points share says neither.
    other = _finding("F3", "search-review", "`max_retries` 값을 설정 파일로 옮겨 주세요.")
    actions = read_owner([retry, other], [
        "재시도는 5분마다 도는 `reconcile_index`가 누락분을 메우므로 넣지 않았습니다."])
    assert actions == {"F1": OwnerAction.UNTOUCHED, "F3": OwnerAction.UNTOUCHED}


def test_asking_again_for_what_was_refused_in_one_word_of_it_stalls() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "상품 수정 후 1분 안에 검색에 반영되도록 색인 동기화를 만들어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n- `post_save` 시그널 → Celery 작업 `index_product`")
    sim.say(Role.REVIEWER, "1. `search/tasks.py:27` `index_product`가 실패하면 로그만 남기고 "
                           "끝납니다. `autoretry_for`와 backoff를 설정해 주세요.\n"
                           "2. 상품 삭제 시 색인에서 문서를 지우는 처리가 없습니다.")
    sim.say(Role.OWNER, "재시도는 5분마다 도는 `reconcile_index`가 누락분을 메우므로 넣지 "
                        "않았습니다. 삭제는 soft delete라 `is_active=false`로 다시 색인됩니다.")
    sim.say(Role.REVIEWER, "`reconcile_index`는 5분 주기라 1분 내 반영 요구를 맞추지 못합니다. "
                           "작업 단위 재시도가 필요합니다.")
    # The reason answered and the request repeated: no new point.
    assert [f.label for f in sim.state.findings] == ["F1", "F2"]
    sim.say(Role.OWNER, "배치 보정으로 충분하다는 판단은 그대로입니다.")
    sim.say(Role.REVIEWER, "앞선 두 지적 모두 그대로입니다.")
    sim.say(Role.OWNER, "STEP_DONE")
    assert [d.trigger for d in sim.deadlocks()] == [Trigger.NO_PROGRESS]


def test_round_numbers_in_words() -> None:
    text = numerals("Please keep each product lookup to a hundred ids or fewer per query.")
    assert "100 ids or fewer" in text
    assert numerals("two thousand rows") == "2000 rows"
    # Part of a longer number: left as it is.
    assert "100" not in numerals("a hundred thousand rows")
    assert "200" not in numerals("two hundred fifty rows") and "50" not in numerals("two hundred fifty rows")
    assert "100 ids" in numerals("A Hundred ids")
    start = text.index("100")
    assert bound_of(text, start, start + 3) == "<="  # at most a hundred
    assert bound_of("100 or fewer", 0, 3) == "<="


def test_asking_again_in_the_words_of_the_refused_point_repeats_it() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "프로필 이미지 업로드 기능 만들어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`media/upload.py` 에 `POST /v1/me/avatar` 를 추가했습니다.")
    sim.say(Role.REVIEWER, "파일 형식을 확장자로만 검사합니다 (`media/upload.py:22`). `evil.php.png` "
                           "같은 파일도 통과하니 magic bytes 로 실제 형식을 확인해야 합니다.")
    sim.say(Role.OWNER, "STEP_DONE\n- 형식 검사는 확장자 방식을 유지합니다. Pillow 의 `Image.open()` 이 "
                        "이미지가 아니면 예외를 내므로 사실상 형식 검사가 이미 됩니다.")
    sim.say(Role.REVIEWER, "`Image.open()` 은 헤더만 읽고, 원본 바이트는 그대로 S3 에 올라갑니다. "
                           "magic bytes 검사를 넣어 주십시오.")
    sim.say(Role.OWNER, "STEP_DONE")
    assert [f.label for f in sim.state.findings] == ["F1"]
    assert sim.state.findings[0].stall == 1


def test_a_new_request_standing_alone_after_a_refusal_is_new() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "상품 색인 동기화를 만들어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n- Celery 작업 `index_product`")
    sim.say(Role.REVIEWER, "`search/tasks.py:27` `index_product`가 실패하면 로그만 남기고 끝납니다. "
                           "`autoretry_for`와 backoff를 설정해 주세요.")
    sim.say(Role.OWNER, "재시도는 5분마다 도는 `reconcile_index`가 누락분을 메우므로 넣지 않았습니다.")
    sim.say(Role.REVIEWER, "결제 웹훅 수신 실패 시 재시도가 필요합니다.")
    sim.say(Role.OWNER, "STEP_DONE")
    assert [f.label for f in sim.state.findings] == ["F1", "F2"]
