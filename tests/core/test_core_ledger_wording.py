"""The ledger on wordings that once fooled it: politeness, bullets that carry a
point number, arguments beside a repeated point, values given to a setting."""

from __future__ import annotations

from test_core_detection import Sim

from bot.contradictions import demands_of, reverses
from bot.demands import asked, asked_verbs, declares_conflict, prohibited
from bot.finding import Finding, FindingStatus, OwnerAction
from bot.findings import Act, owner_clause, restates, reviewer_clause, selectors, starts_new_point
from bot.ledger import judge_round
from bot.models import Role, Trigger
from bot.owner_turn import read_owner
from bot.points import clauses, items
from bot.topics import topic
from bot.values import setting_values, values


def _finding(label: str, author: str, text: str) -> Finding:
    """A point as the ledger would keep it: its anchors, terms and demands."""
    from bot.contradictions import demands_of

    t = topic(text)
    return Finding(label=label, author=author, summary="", anchors=sorted(t.anchors),
                   terms=sorted(t.terms), **demands_of(text, set()))


def test_checked_again_and_it_still_fails_is_not_an_acknowledgement() -> None:
    # "확인했는데" (I checked, and …) leads into what is still wrong.
    halves = [text for _, text in items(["스테이징에서 다시 확인했는데, 역시 옛 값이 계속 나옵니다."])]
    assert halves[0].endswith("확인했는데")
    assert reviewer_clause(halves[0]).act is not Act.ACK
    assert reviewer_clause("1번은 확인했습니다.").act is Act.ACK


def test_courtesy_around_a_request_to_look_again_is_not_a_finding() -> None:
    for text in ("번거로우시겠", "바쁘시겠지만 한 번 더 확인 부탁드리겠습니다.",
                 "No concerns on the queue side"):
        assert reviewer_clause(text).act is not Act.FINDING, text


def test_a_politely_rejected_fix_stalls_the_room() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "주문 목록 캐시를 붙여 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`orders/cache.py`에 캐시를 추가했습니다 (`1a2b3c4`).")
    sim.say(Role.REVIEWER, "DONE_WITH_CONCERNS\n주문 취소 경로(`cancel_order`)에서 캐시가 지워지지 않아 "
                           "취소된 주문이 목록에 남습니다.")
    sim.say(Role.OWNER, "고쳤습니다. `cancel_order` 끝에서 캐시를 지웁니다 (`2b3c4d5`).")
    sim.say(Role.REVIEWER, "빠르게 반영해 주셔서 감사합니다. 다만 스테이징에서 다시 확인했는데, 취소한 주문이 "
                           "여전히 목록에 나옵니다. 번거로우시겠지만 다시 한번 봐 주시면 감사하겠습니다.")
    sim.say(Role.OWNER, "다시 수정했습니다. 목록 캐시 키도 함께 지우도록 바꿨습니다 (`3c4d5e6`).")
    sim.say(Role.REVIEWER, "여러 번 죄송합니다. 같은 절차로 다시 확인했는데, 역시 취소된 주문이 계속 나옵니다. "
                           "앞서 말씀드린 그 문제와 동일합니다.")
    sim.end()
    assert len(sim.state.findings) == 1  # neither the thanks nor "please look again" is a point
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS and deadlock.finding is None


def test_a_commit_in_a_numbered_answer_belongs_to_that_point() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "verify webhook signatures")
    sim.say(Role.OWNER, "STEP_DONE added `verify()`")
    sim.say(Role.REVIEWER, "1. The digest is compared with `==`; use `hmac.compare_digest`.\n"
                           "2. A bad signature returns 500, and the sender retries 5xx. Return 400.")
    sim.say(Role.OWNER, "- (2) Bad signatures now return 400. Commit `9c4d7e0`.\n"
                        "- (1) I disagree: the digests are fixed-length, keeping `==`.")
    f1, f2 = sim.state.findings
    sim.say(Role.REVIEWER, "400 confirmed. The comparison should use `hmac.compare_digest`, as raised before.")
    sim.say(Role.OWNER, "On the comparison: I still see no realistic threat, so `==` stays.")
    sim.say(Role.REVIEWER, "Still need `hmac.compare_digest` for the signature check.")
    sim.end()
    assert f1.history[1] == "R2: declined, repeated"  # not fixed by the commit of point 2
    assert f2.status is FindingStatus.FIXED
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS and deadlock.finding == "F1"


def test_an_owner_naming_what_only_one_finding_names_answers_that_finding() -> None:
    findings: list = []
    judge_round(findings, [("rev", ["1. `limit` is parsed as a string in `api/page.py`.",
                                    "2. Sorting by `created_at` alone gives duplicates."])], None, 1)
    actions = read_owner(findings, ["Leaving `created_at` alone, it is unique in practice."])
    assert actions == {"F1": OwnerAction.UNTOUCHED, "F2": OwnerAction.DECLINE}


def test_a_fix_to_a_settled_point_does_not_answer_the_open_one() -> None:
    findings: list = []
    judge_round(findings, [("rev", ["1. Signature checks must use the raw body, not re-serialised JSON.",
                                    "2. Return 400 on a bad signature, not 500."])], None, 1)
    owner = read_owner(findings, ["- The raw body is now verified (`b3d9a10`).\n- The 500 is intentional."])
    judge_round(findings, [("rev", ["1 looks good. 2 is still open."])], owner, 2)
    assert [f.status for f in findings] == [FindingStatus.FIXED, FindingStatus.OPEN]
    actions = read_owner(findings, ["Added a test covering the raw body signature path."])
    assert actions == {"F2": OwnerAction.UNTOUCHED}


def test_an_argument_beside_a_repeated_point_is_not_a_new_finding() -> None:
    sim = Sim(stall_threshold=3, max_rounds=10)
    sim.say(Role.USER, "bucket for exports")
    sim.say(Role.OWNER, "STEP_DONE added the bucket in `infra/s3.tf`")
    sim.say(Role.REVIEWER, "There is no bucket-level public access block on the exports bucket; add one.")
    sim.say(Role.OWNER, "The account-level block is enough, keeping it as is.")
    sim.say(Role.REVIEWER, "Account-level settings can be changed by any org admin; "
                           "the exports bucket needs its own public access block.")
    sim.end()
    [f1] = sim.state.findings
    assert f1.history[-1] == "R2: declined, repeated" and f1.stall == 1


def test_values_given_to_a_setting() -> None:
    assert values("Set `SESSION_TTL` back to 86400 and drop the refresh.") == {"86400"}
    assert values("Set it to 900 (15 minutes idle).") >= {"900"}
    assert values("`MAX_RETRIES`를 0으로 두고 조회 API로 확인해 주세요.") >= {"0"}
    assert values("`MAX_RETRIES`를 5로 늘려 주세요.") == {"5"}
    assert values("Please keep `MAX_RETRIES = 0`.") == {"0"}


def test_two_reviewers_asking_one_setting_for_zero_and_five_contradict() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "retries for the payment client")
    sim.say(Role.OWNER, "STEP_DONE `PG_MAX_RETRIES = 3`")
    sim.say(Role.REVIEWER, "Retrying a charge can charge twice. Set `PG_MAX_RETRIES` to 0.", author="billing-bot")
    sim.say(Role.REVIEWER, "Three is too few for the 502s we see. Set `PG_MAX_RETRIES` to 5.", author="sre-bot")
    sim.end()
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.CONTRADICTION


def test_literal_values_and_values_asked_not_to_be_set() -> None:
    assert values('The override in `prod.py` has to be `"None"` as well.') == {"=none"}
    # "do not set … None" asks for anything but None; "keep Lax" is the value.
    assert values('Please do not set `SAMESITE = "None"` in prod. Prod must keep `"Lax"` there.') == {"=lax"}
    assert values("`ALLOWED_ORIGINS` has to stay `*` for the widget routes.") == {"=*"}
    assert values("Respond with `Cache-Control: no-store` here, please.") == {"=no-store"}
    assert values("Please switch to `orjson`.") == frozenset()  # a name, not a value
    # (A duration in words keeps its unit: 12 hours is 12h.)
    assert values("Set `TIMEOUT` to 12 hours so we don't hammer the IdP.") >= {"12h"}


def test_an_expression_in_backticks_is_named_by_its_tokens() -> None:
    # Written again as another expression, it is the same point.
    t = topic("Encode the cursor as `(created_at, id)`.")
    assert {"code:created_at", "code:id"} <= t.anchors
    assert not any("(" in a for a in t.anchors)


def test_owner_todo_is_a_promise_and_left_both_refuses_both() -> None:
    assert owner_clause("Added a `TODO(auth)` comment at tokens.py:131.").act is Act.PROMISE
    findings: list = []
    judge_round(findings, [("rev", ["- Reuse of a rotated token must revoke the family in `tokens.py:131`.",
                                    "- `revoke()` and `issue()` are not atomic."])], None, 1)
    actions = read_owner(findings, ["Left both as they are; added a `TODO(auth)` at tokens.py:131."])
    assert actions == {"F1": OwnerAction.DECLINE, "F2": OwnerAction.DECLINE}


def test_empathy_before_a_repeat_is_not_a_finding() -> None:
    for text in ("Thanks for the context, and I do understand the concern about flaky networks",
                 "that is a fair point to raise with product."):
        assert reviewer_clause(text).act is Act.FACT, text


def test_an_owner_answering_under_a_quotation_answers_the_quoted_point() -> None:
    findings: list = []
    judge_round(findings, [("rev", ["1. Events are not deduplicated by `event_id`; add a unique insert.",
                                    "2. The payload log prints `customer_email` in clear; mask it."])], None, 1)
    owner = ("> 2. The payload log prints `customer_email` in clear\n\n"
             "Fixed, it goes through `mask_pii()` now (`f02a9c1`).\n\n"
             "> 1. Events are not deduplicated by `event_id`\n\n"
             "Agreed, it needs a migration; I will do it in the next commit.")
    assert read_owner(findings, [owner]) == {"F1": OwnerAction.UNTOUCHED, "F2": OwnerAction.FIX}


def test_a_renumbered_list_is_followed() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "product cache")
    sim.say(Role.OWNER, "STEP_DONE cache added in `catalog/cache.py`")
    sim.say(Role.REVIEWER, "1. The key lacks the `locale`.\n2. Nothing invalidates the entry on `PATCH`.")
    sim.say(Role.OWNER, "> 1. The key lacks the `locale`.\n\nFixed in `8a41e0c`.\n\n"
                        "> 2. Nothing invalidates the entry\n\nI'd rather not; the TTL bounds it.")
    sim.say(Role.REVIEWER, "The locale key looks good.\n\n1. (was #2) Invalidation is still missing; "
                           "delete the key on write.")
    sim.say(Role.OWNER, "Still declining the invalidation.")
    sim.say(Role.REVIEWER, "#1 is unchanged: please delete the key on `PATCH`.")
    sim.end()
    f1, f2 = sim.state.findings
    assert f1.status is FindingStatus.FIXED and f2.number == 1
    [deadlock] = sim.deadlocks()
    assert deadlock.finding == "F2"


def test_a_commit_named_as_where_the_branch_still_is_is_no_fix() -> None:
    assert owner_clause("브랜치는 아직 `71c0b9e`입니다.").act is not Act.FIX
    assert owner_clause("The branch is still at `71c0b9e`.").act is not Act.FIX
    assert owner_clause("Done in `71c0b9e`.").act is Act.FIX
    assert owner_clause("입장 변화가 없습니다.").act is Act.DECLINE


def test_reviewer_plans_and_not_yet() -> None:
    assert reviewer_clause("커밋이 올라오면 다시 보겠습니다.").act is Act.FACT
    assert reviewer_clause("Not yet.").act is Act.REFERENCE
    # "both paths" is not "both points".
    assert not reviewer_clause("`Vary` fix confirmed on both paths.").everything
    assert reviewer_clause("Both look good now.").everything


def test_a_clause_naming_two_points_teaches_neither_its_words() -> None:
    findings: list = []
    judge_round(findings, [("rev", ["1. `reason` label holds the raw exception message: unbounded cardinality.",
                                    "2. `/metrics` is exposed on the public port `8080`."])], None, 1)
    before = [set(f.terms) for f in findings]
    judge_round(findings, [("rev", ["1번 `reason` 라벨 문제와 2번 `/metrics` 공개 포트 문제는 아직 남아 있습니다."])],
                {"F1": OwnerAction.UNTOUCHED, "F2": OwnerAction.UNTOUCHED}, 2)
    assert [f.history[-1] for f in findings] == ["R2: untouched, repeated"] * 2
    assert [set(f.terms) for f in findings] == before


def test_asking_to_remove_what_another_reviewer_had_set_is_a_contradiction() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "account API through the CDN")
    sim.say(Role.OWNER, "STEP_DONE cache headers in `api/cache_headers.py`")
    sim.say(Role.REVIEWER, "Personal data: set `Cache-Control: no-store` in `api/cache_headers.py`.",
            author="sec-bot")
    sim.say(Role.OWNER, "Account responses now send `Cache-Control: no-store` (`e02a9b4`).")
    sim.say(Role.REVIEWER, "`no-store` confirmed.", author="sec-bot")
    sim.say(Role.REVIEWER, "With no-store the CDN caches nothing. Remove `Cache-Control: no-store` from "
                           "`api/cache_headers.py` and go back to `public, s-maxage=60`.", author="perf-bot")
    sim.end()
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.CONTRADICTION


def test_confirming_something_else_does_not_acknowledge_the_refused_point() -> None:
    sim = Sim(stall_threshold=3, max_rounds=10)
    sim.say(Role.USER, "feature flag rollout")
    sim.say(Role.OWNER, "STEP_DONE flag registered")
    sim.say(Role.REVIEWER, "`random.random()` in `flags/registry.py:44` changes the bucket on every request.")
    sim.say(Role.OWNER, "Keeping `random.random()`, the analysts asked for it. Added a `flag_evaluated` event.")
    sim.say(Role.REVIEWER, "`flag_evaluated` event confirmed. The bucket still changes on every request.")
    sim.end()
    [f1, *_] = sim.state.findings
    assert f1.is_open and f1.history[-1] == "R2: declined, repeated"


def test_two_alike_points_of_one_numbered_list_stay_two_findings() -> None:
    findings: list = []
    judge_round(findings, [("rev", ["1. 품목별로 반올림한 뒤 합산합니다. 합계에서 한 번만 반올림해야 합니다.\n"
                                    "2. 반올림 모드가 `ROUND_HALF_EVEN`입니다. `ROUND_HALF_UP`이어야 합니다."])],
                None, 1)
    assert [f.label for f in findings] == ["F1", "F2"]


def test_new_point_marker_and_two_items_confirmed() -> None:
    findings: list = []
    judge_round(findings, [("rev", ["1. 폐기된 refresh 토큰이 다시 쓰이면 family 전체를 폐기해야 합니다.\n"
                                    "2. refresh 토큰이 평문으로 저장됩니다. 해시로 저장해 주세요."])], None, 1)
    owner = read_owner(findings, ["1. `family_id` 기준 일괄 폐기, `test_reuse_revokes_family` 추가.\n"
                                  "2. `token_hash` 컬럼으로 저장하고 평문 컬럼을 제거했습니다."])
    assert owner == {"F1": OwnerAction.FIX, "F2": OwnerAction.FIX}
    out = judge_round(findings, [("rev", ["두 항목 확인했습니다.\n새 지적: 웹 클라이언트가 refresh 토큰을 "
                                          "`localStorage`에 저장합니다. 쿠키로 옮겨 주세요."])], owner, 2)
    assert [f.status for f in findings[:2]] == [FindingStatus.FIXED] * 2
    assert out.raised == ["F3"]


def test_the_same_failure_again_is_a_repeat_and_a_new_error_is_not() -> None:
    assert reviewer_clause("같은 두 테스트가 같은 값으로 실패합니다.").act in (Act.REFERENCE, Act.FINDING)
    findings: list = []
    judge_round(findings, [("rev", ["`test_total`이 실패합니다: 합계가 1원 모자랍니다. 고쳐 주세요."])], None, 1)
    owner = read_owner(findings, ["고쳤습니다 (`8f02d1b`)."])
    out = judge_round(findings, [("rev", ["c6e4b90에서도 결과는 같습니다. 같은 값으로 실패합니다."])], owner, 2)
    assert out.raised == [] and findings[0].history[-1] == "R2: fix_reported, repeated (fix rejected)"


def test_a_table_of_points_and_a_table_of_answers() -> None:
    findings: list = []
    judge_round(findings, [("rev", ["| 번호 | 내용 |\n|---|---|\n"
                                    "| 1 | `audit_events`에 UPDATE가 가능합니다. append-only여야 합니다. |\n"
                                    "| 2 | 환불 실패 시 `record()`가 호출되지 않습니다. 기록해야 합니다. |"])], None, 1)
    assert len(findings) == 2
    owner = read_owner(findings, ["| 번호 | 조치 |\n|---|---|\n"
                                  "| 1 | 유지. 수정 API가 없으므로 DB 권한까지 막는 것은 과하다고 판단합니다. |\n"
                                  "| 2 | 반영. `except`에서 `record(outcome=\"failed\")` 호출 (`0b3c9d7`) |"])
    assert owner == {"F1": OwnerAction.DECLINE, "F2": OwnerAction.FIX}


def test_an_owner_naming_one_reviewer_answers_that_reviewers_findings() -> None:
    findings: list = []
    judge_round(findings, [("sec-bot", ["The bucket is public; use OAC instead."]),
                           ("cost-bot", ["1. Expire old build files after 90 days.\n"
                                         "2. `PriceClass_All` is too broad; use `PriceClass_200`."])], None, 1)
    owner = read_owner(findings, ["cost-bot 의견 두 건 반영했습니다 (`6f2d8b1`).\n"
                                  "sec-bot 의견은 유지하겠습니다."])
    assert owner == {"F1": OwnerAction.DECLINE, "F2": OwnerAction.FIX, "F3": OwnerAction.FIX}


def test_old_number_in_korean_and_a_comparison_is_no_value() -> None:
    assert reviewer_clause("(구 3번) `verify()`의 `==` 비교 → `hmac.compare_digest`").ordinals == (3,)
    assert values("`verify()`가 해시를 `==`로 비교합니다. `compare_digest`를 써야 합니다.") == frozenset()


def test_an_owner_saying_two_reviewers_cannot_both_be_satisfied() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "DB pool")
    sim.say(Role.OWNER, "STEP_DONE `pool_size=20`")
    sim.say(Role.REVIEWER, "16 pods x 30 is too many for `max_connections` 200: keep the pool at 10 or less.",
            author="dba-bot")
    sim.say(Role.REVIEWER, "At 40 concurrent requests per pod there must be zero pool timeouts.",
            author="perf-bot")
    sim.say(Role.OWNER, "dba-bot의 파드당 10개 이하와 perf-bot의 동시 40건 타임아웃 0건은 함께 만족시킬 수 없습니다.")
    sim.end()
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.CONTRADICTION


def test_a_request_in_any_must_form_carries_its_value() -> None:
    # "바꿔야 합니다" asks as "해야" does: the value is what the clause asks for,
    # not the one it quotes as the cause.
    text = ("그런데 `/media/<path>`의 `Cache-Control: private, no-store` 때문에 적중률이 0%입니다. "
            "이 라우트는 `Cache-Control: public, max-age=86400`으로 바꿔야 합니다.")
    got = setting_values(text)
    assert "=public, max-age=86400@cache-control" in got
    assert "=private, no-store@cache-control" not in got


def test_the_owners_commit_found_wanting_is_the_fix_rejected_not_a_new_point() -> None:
    sim = Sim(stall_threshold=3)
    sim.say(Role.USER, "gRPC 호출에 deadline을 넣어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`stub.Reserve(...)`에 `timeout=2.0`을 넣었습니다 (`3e8f0c1`).")
    sim.say(Role.REVIEWER, "남은 deadline에서 여유분(margin)을 뺀 값을 하위 호출 timeout으로 써야 합니다.")
    sim.say(Role.OWNER, "STEP_DONE\n`DEADLINE_MARGIN = 0.05`를 빼도록 수정했습니다. 커밋 `e72c915`.")
    sim.say(Role.REVIEWER, "`e72c915`에서도 여유분이 적용되지 않습니다. `orders/deadline.py`에 "
                           "`DEADLINE_MARGIN`을 정의만 했고, `Reserve` 호출 쪽 계산식은 그대로입니다.")
    sim.end()
    assert [f.label for f in sim.state.findings] == ["F1"]
    assert sim.state.findings[0].history[-1].endswith("repeated (fix rejected)")
    # In English too; and a commit named without a verdict on it is no rejection.
    assert reviewer_clause("`e72c915` still doesn't subtract the margin.").act is Act.REFERENCE
    assert reviewer_clause("In `e72c915` the new `retry_after` header leaks the token; "
                           "please remove it.").act is Act.FINDING


def test_a_header_with_its_value_names_the_header() -> None:
    assert "code:idempotency-key" in topic("Send `Idempotency-Key: invoice-{id}` on the POST.").anchors


def test_asking_not_to_do_what_another_reviewer_asked_for_is_a_contradiction() -> None:
    sim = Sim(stall_threshold=3)
    sim.say(Role.USER, "`events` 테이블을 월별 파티션으로 나눠 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n파티션을 만들었습니다 (`aa71c3e`).")
    sim.say(Role.REVIEWER, "미래 파티션을 만드는 장치가 없습니다. `pg_partman`으로 다음 3개월 파티션을 "
                           "미리 만들어 두어야 합니다.", author="dba-bot")
    sim.say(Role.OWNER, "STEP_DONE\n리허설 결과만 공유합니다: 4시간 12분.")
    sim.say(Role.REVIEWER, "미래 파티션을 `pg_partman`으로 미리 만들지 말고 `events_default` 하나로 받은 뒤 "
                           "분기마다 분리해야 합니다.", author="app-bot")
    sim.end()
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.CONTRADICTION
    # A prohibition that is a condition, or a courtesy, asks nothing.
    assert prohibited("`pg_partman`을 설정하지 않으면 다음 달에 실패하므로 설정해야 합니다.") == frozenset()
    assert prohibited("Don't worry about the docs; please add `pg_partman` config.") == frozenset()
    assert prohibited("Please don't pre-create partitions in `pg_partman`.") == {"create"}


def test_a_reply_list_answers_each_point_under_its_number() -> None:
    sim = Sim(stall_threshold=3)
    sim.say(Role.USER, "Harden `handle_stripe_event`.")
    sim.say(Role.OWNER, "STEP_DONE\nRewrote `handle_stripe_event` (`9a8b7c6`).")
    sim.say(Role.REVIEWER, "1. Dispatch the object returned by `construct_event`.\n"
                           "2. Nothing deduplicates deliveries; record processed `event.id` values.\n"
                           "3. Unknown event types raise `KeyError`; return 200 and log them.")
    sim.say(Role.OWNER, "STEP_DONE\n(1) Fixed (`0b9c8d7`).\n(2) I don't think we need a dedup table.\n"
                        "(3) Will do next.")
    sim.say(Role.REVIEWER, "(1) confirmed.\n(2) `update_or_create` keys on `(account, invoice)`, but "
                           "`credit_account()` increments `balance` on every call. Deduplicate on `event.id`.")
    sim.end()
    labels = [f.label for f in sim.state.findings]
    assert labels == ["F1", "F2", "F3"]  # "(2) …" is point 2 again, not a fourth point
    f2 = sim.state.findings[1]
    assert f2.history[-1] == "R2: declined, repeated" and f2.stall == 1


def test_a_conflict_the_owner_takes_back_is_none() -> None:
    assert not declares_conflict("처음에는 sec-bot과 perf-bot의 요구가 충돌해 둘 다 만족할 수 없을 거라고 생각했는데")
    assert not declares_conflict("스테이징에서 재어 보니 적중률 71%로 둘 다 충족됩니다.")
    assert declares_conflict("sec-bot의 F1과 perf-bot의 F2는 동시에 만족할 수 없습니다.")


def test_a_declared_conflict_outranks_the_blocked_status_of_the_same_turn() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "아바타 업로드에 바이러스 검사를 넣어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n업로드를 S3에 바로 저장합니다 (`a1b2c3d`).")
    sim.say(Role.REVIEWER, "저장 전에 `clamd`로 동기 스캔해야 합니다.", author="sec-bot")
    sim.say(Role.REVIEWER, "`POST /v1/uploads/avatar` p95를 200ms 이하로 유지해야 합니다.", author="perf-bot")
    sim.say(Role.OWNER, "BLOCKED\nsec-bot의 동기 스캔(F1)과 perf-bot의 p95 200ms(F2)는 동시에 만족할 수 없습니다.")
    sim.end()
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.CONTRADICTION
    assert deadlock.evidence["also"] == ["blocked"]


def test_values_asked_as_a_quoted_literal_in_korean_or_after_be() -> None:
    assert setting_values("`SESSION_COOKIE_SAMESITE`는 `'Lax'`로 유지해야 합니다.") == {
        "=lax@session_cookie_samesite"}
    assert setting_values("`log_retention_days` must be 365 for the `audit-*` groups.") == {
        "365d@log_retention_days"}  # (a name that ends in its unit counts in it)
    assert reviewer_clause("The lazy permission loading is fine.").act is Act.ACK
    assert reviewer_clause("Nothing further from security.").act is Act.FACT


def test_owner_present_tense_changes_and_plain_refusals() -> None:
    assert owner_clause("Hourly task `send_due_digests` now picks users by local time.").act is Act.FIX
    assert owner_clause("The test now fails on ARM.").act is not Act.FIX
    assert owner_clause("Not adding it.").act is Act.DECLINE
    assert starts_new_point("New: the final stage runs as root.")


def test_an_answer_to_the_owners_argument_is_no_new_point() -> None:
    sim = Sim(stall_threshold=3)
    sim.say(Role.USER, "로그인 API에 rate limit 걸어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`auth/ratelimit.py`에 IP당 분당 20회 제한을 넣었습니다.")
    sim.say(Role.REVIEWER, "- 계정(username) 기준 제한도 함께 걸어야 합니다.\n"
                           "- 고정 윈도우라서 경계에서 두 배까지 허용됩니다. sliding window로 바꿔야 합니다.")
    sim.say(Role.OWNER, "STEP_DONE\n계정 기준 제한은 DoS가 될 수 있어서 넣지 않겠습니다. 고정 윈도우도 유지합니다.")
    sim.say(Role.REVIEWER, "계정을 잠그는 게 아니라 429와 `Retry-After`로 늦추는 것이라 DoS 문제는 없습니다. "
                           "계정 기준 제한과 sliding window 둘 다 여전히 필요합니다.")
    sim.end()
    # "DoS 문제는 없습니다" answers the owner; it asks for nothing.
    assert [f.label for f in sim.state.findings] == ["F1", "F2"]
    assert sim.state.stalled_rounds == 1


def test_both_confirmed_leaves_out_the_point_the_owner_refused() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Add rate-limit headers in `ratelimit.ts`.")
    sim.say(Role.OWNER, "STEP_DONE\nHeaders are set in `applyRateLimit()`.")
    sim.say(Role.REVIEWER, "- `Retry-After` is in milliseconds; it must be seconds.\n"
                           "- `RateLimit-Reset` is an epoch timestamp; send a delta.\n"
                           "- The headers are only on 429s; put them on every response.")
    sim.say(Role.OWNER, "(1) `Retry-After` is now `Math.ceil(resetMs / 1000)`.\n"
                        "(2) I'm keeping `RateLimit-Reset` as an epoch value.\n"
                        "(3) Headers are now set on all responses.")
    sim.say(Role.REVIEWER, "`Retry-After` in seconds and the headers on 200s: both confirmed.\n\n"
                           "- `RateLimit-Reset` still needs to be delta-seconds.")
    sim.end()
    f1, f2, f3 = sim.state.findings
    assert f1.status is FindingStatus.FIXED and f3.status is FindingStatus.FIXED
    assert f2.is_open and f2.history[-1] == "R2: declined, repeated"


def test_an_owner_list_numbered_as_the_review_answers_by_number() -> None:
    findings: list = []
    judge_round(findings, [("r", ["1. `users.totp_secret` is stored in plaintext. Encrypt it.\n"
                                  "2. `/login/totp` has no attempt limit. Limit attempts.\n"
                                  "3. A valid code can be replayed. Reject used steps."])], None, 1)
    actions = read_owner(findings, ["1. Encrypted via `kms.encrypt()` (`a1b2c3d`).\n"
                                    "2. Not changing the limit.\n"
                                    "3. Done in `b2c3d4e`."])
    assert actions == {"F1": OwnerAction.FIX, "F2": OwnerAction.DECLINE, "F3": OwnerAction.FIX}


def test_more_ways_of_saying_the_same_again() -> None:
    assert reviewer_clause("CI에서는 동일하게 실패합니다.").act is Act.REFERENCE
    assert reviewer_clause("2 is still open.").ordinals == (2,)
    assert reviewer_clause("1 is good.").act is Act.ACK


    assert asked("It was 10 before. The TTL needs to be 30.") == ("The TTL needs to be 30.",)


def test_a_prohibition_reverses_only_a_request_to_do_that_thing() -> None:
    # "Do not cache denials" against "builds the cache key … Use X instead":
    # the other asks to use a key, not to cache.
    assert "cache" not in asked_verbs("`authz/cache.py` builds the cache key from the path. "
                                      "Use `perm:{user_id}` instead.")
    deny = Finding(label="F1", author="sec", summary="", anchors=["path:cache.py"],
                   prohibits=sorted(prohibited("Do not cache denials in `authz/cache.py`.")))
    key = Finding(label="F2", author="perf", summary="", anchors=["path:cache.py"],
                  asks=sorted(asked_verbs("`authz/cache.py` builds the cache key. Use `perm:{id}` instead.")))
    redo = Finding(label="F3", author="perf", summary="", anchors=["path:cache.py"],
                   asks=sorted(asked_verbs("Please cache denials in `authz/cache.py` too.")))
    assert not reverses(deny, key) and reverses(deny, redo)
    # Longer Korean verbs meet as whole stems; a condition prohibits nothing.
    assert "재생성" in prohibited("파티션을 재생성하지 마세요.")
    assert "재생성" in asked_verbs("파티션을 재생성해야 합니다.")
    assert prohibited("If we don't retry, `fetch()` drops requests; please add a retry.") == frozenset()
    assert "autoplay" in asked_verbs("The hero video needs to autoplay (muted, looping).")
    assert "만들" in asked_verbs("`pg_partman`으로 파티션을 미리 만들어 두어야 합니다.")


def test_a_code_span_is_never_cut_into_clauses() -> None:
    assert setting_values("세션 쿠키의 `SameSite`는 `None; Secure`로 설정해 주십시오.") == {
        "=none; secure@samesite"}
    assert [c for _, c in items(["Set `a; b` here; then test."])] == ["Set `a; b` here", "then test."]


def test_a_time_and_a_size_are_two_settings_not_a_reversal() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "프로필 사진 업로드를 presigned URL로 바꿔 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`create_upload_url()`이 presigned PUT을 돌려줍니다.")
    sim.say(Role.REVIEWER, "`generate_presigned_post`로 바꾸고 `content-length-range` 조건(최대 5MB)을 걸어 주십시오.",
            author="sec-bot")
    sim.say(Role.REVIEWER, "`content-length-range` 조건에 동의합니다. 그리고 만료 3600초는 길어서 300초로 줄여 주십시오.",
            author="perf-bot")
    sim.end()
    assert sim.deadlocks() == []
    f1, f2 = sim.state.findings
    assert not reverses(f1, f2) and not reverses(f2, f1)
    # A bare number may be either: 30s against 3600 on one setting still differs.
    a = Finding(label="F1", author="a", summary="", anchors=["code:ttl"], values=["30s@ttl"])
    b = Finding(label="F2", author="b", summary="", anchors=["code:ttl"], values=["3600@ttl"])
    assert reverses(a, b)


def test_short_acknowledgements() -> None:
    for text in ("Good.", "Cache mount works.", "Healthcheck passes.", "Context is small now."):
        assert reviewer_clause(text).act is Act.ACK, text
    for text in ("The query is slow now.", "The test passes locally but fails in CI."):
        assert reviewer_clause(text).act is not Act.ACK, text


def test_words_that_only_look_like_fixes_acknowledgements_or_verdicts() -> None:
    for text in ("Right now this path is unguarded.", "It now leaks the connection."):
        assert owner_clause(text).act is not Act.FIX, text
    assert owner_clause("Fixed: items now keep their order.").act is Act.FIX
    assert owner_clause("Keeping `TTL` as is.").act is Act.DECLINE
    for text in ("It works only for ASCII input.", "is fine now except for the jitter"):
        assert reviewer_clause(text).act is not Act.ACK, text
    assert reviewer_clause("3 is too low for `MAX_RETRIES`, raise it to 10.").ordinals == ()
    assert not declares_conflict("sec-bot과 perf-bot 의견 둘 다 반영했고 회귀는 없습니다")
    assert declares_conflict("동시에 반영하기 어렵습니다")


def test_an_owner_list_is_not_read_by_number_against_two_reviewers_lists() -> None:
    findings: list[Finding] = []
    judge_round(findings, [("sec-bot", ["1. `login()` logs the password. Remove it.\n"
                                        "2. `reset()` has no rate limit. Add one."]),
                           ("perf-bot", ["1. `search()` runs N+1 queries. Batch them.\n"
                                         "2. `feed()` has no cache. Add one."])], None, 1)
    actions = read_owner(findings, ["1. Batched the queries in `search()` (`a1b2c3d`).\n"
                                    "2. Cached `feed()` for 60 s (`b2c3d4e`)."])
    assert actions["F3"] is OwnerAction.FIX and actions["F4"] is OwnerAction.FIX
    assert actions["F1"] is OwnerAction.UNTOUCHED and actions["F2"] is OwnerAction.UNTOUCHED


def test_values_of_switches_pragmas_and_constants() -> None:
    assert setting_values("Set `include_message_preview` to false.") == {"=false@include_message_preview"}
    assert setting_values("Please set `include_message_preview` back to true.") == {
        "=true@include_message_preview"}
    assert setting_values("Require `email_verified` to be true before linking.") == frozenset()
    assert setting_values("`PRAGMA synchronous=FULL`로 설정해 주세요.") == {"=full@synchronous"}
    assert setting_values("`PRAGMA synchronous`는 WAL 모드에서 `NORMAL`로 설정해 주세요.") == {
        "=normal@synchronous"}
    # A name, not a value of a setting: what it asks is that `orjson` be there
    # and `json` be gone.
    assert values("`json` 대신 `orjson`으로 바꿔 주세요.") == frozenset()
    assert setting_values("`json` 대신 `orjson`으로 바꿔 주세요.") == {"-@json", "+@orjson"}


def test_more_reviewer_wordings_read_right() -> None:
    assert reviewer_clause("발급 시각이 미래로 찍힌 토큰이 그대로 통과합니다.").act is not Act.ACK
    assert reviewer_clause("테스트가 통과합니다.").act is Act.ACK
    assert reviewer_clause("Neither issue is resolved.").act is Act.REFERENCE
    assert reviewer_clause("Drop it to DEBUG.").act is Act.FINDING
    assert reviewer_clause("I drop my objection.").act is Act.WITHDRAW


def test_a_short_line_ending_in_a_colon_can_still_say_it_again() -> None:
    # "CI still fails, same output:" above the log is a repeat, not a heading.
    got = [(n, text) for n, text in items(["CI still fails, same output:\n```\nFAILED test_x\n```"])]
    assert got and reviewer_clause(got[0][1]).act is Act.REFERENCE
    assert items(["Review of `ratelimit.ts`:"]) == []  # a plain heading stays one


def test_what_the_reviewer_did_and_a_refusal_beside_its_reason() -> None:
    assert reviewer_clause("Pulled `7be0d44` and re-ran the CI job.").act is Act.FACT
    assert reviewer_clause("Tested on staging: the cache never expires.").act is Act.FINDING
    assert owner_clause("코드는 이대로 두겠습니다.").act is Act.DECLINE
    findings: list[Finding] = []
    judge_round(findings, [("r", ["[P1] `INCR` 뒤 별도로 `EXPIRE`를 겁니다. Lua로 원자 처리해야 합니다.\n"
                                  "[P2] `X-RateLimit-Reset`을 밀리초로 보냅니다. 초로 바꿔야 합니다.\n"
                                  "[P3] 설정 키 `rateLimitPerMinute`만 camelCase입니다. "
                                  "`RATE_LIMIT_PER_MINUTE`로 바꿔 주세요."])], None, 1)
    actions = read_owner(findings, ["[P1] 반영: `ratelimit.lua`로 원자 처리 (`d71c3a8`).\n"
                                    "[P2] 다음 PR에서 SDK 수정과 같이 처리하겠습니다.\n"
                                    "[P3] `rateLimitPerMinute` 키는 프런트 설정과 공유됩니다. 그대로 두겠습니다."])
    assert actions == {"F1": OwnerAction.FIX, "F2": OwnerAction.UNTOUCHED, "F3": OwnerAction.DECLINE}


def test_bounds_and_names_asked_to_be_there_or_gone() -> None:
    """A value inside another reviewer's bound meets it; asking for a name that
    another reviewer asks to be rid of reverses it."""
    def point(author: str, text: str) -> Finding:
        return Finding(label="F1", author=author, summary=text,
                       anchors=sorted(topic(text).anchors), values=sorted(setting_values(text)))

    bound = point("search-bot", "`AUTOCOMPLETE_CACHE_TTL`은 600초 이하로 낮춰 주십시오.")
    assert "<=600초@autocomplete_cache_ttl" in bound.values
    inside = point("perf-bot", "`AUTOCOMPLETE_CACHE_TTL`을 240초로 해 주십시오.")
    outside = point("perf-bot", "`AUTOCOMPLETE_CACHE_TTL`을 900초로 해 주십시오.")
    assert not reverses(inside, bound)
    assert reverses(outside, bound)
    at_least = point("sec-bot", "Keep `LOG_RETENTION` at least 30d.")
    assert reverses(point("cost-bot", "Set `LOG_RETENTION` to 7d."), at_least)
    assert not reverses(point("cost-bot", "Set `LOG_RETENTION` to 90d."), at_least)

    add = point("sec-bot", "Add `--frozen-lockfile` so CI fails when the lockfile is out of date.")
    remove = point("dx-bot", "Please remove `--frozen-lockfile` from the install steps.")
    assert reverses(remove, add) and reverses(add, remove)
    avoid = point("dba-bot", "`AddIndexConcurrently`를 쓰지 말고 일반 `AddIndex`로 유지해 주십시오.")
    switch = point("perf-bot", "`AddIndexConcurrently`로 바꾸고 `atomic = False`를 지정해 주십시오.")
    assert reverses(avoid, switch)
    # Keeping a name and giving the same name a value are not opposites.
    assert not reverses(point("a", "Keep `retry_after`."), point("b", "Set `retry_after` to 30."))
    # "Don't add X" asks X gone, not there.
    assert setting_values("`X_CACHE`를 추가하지 말아 주세요.") == {"-@x_cache"}


def test_labels_next_to_hangul_are_read() -> None:
    assert selectors("F1과 F2는 함께 만족할 수 없습니다.")[3] == ("F1", "F2")


def test_no_conflict_is_not_a_declared_conflict() -> None:
    assert declares_conflict("F1과 F2는 함께 만족할 수 없습니다.")
    for text in ("두 요청은 대상이 달라 충돌하지 않습니다.", "These two requests do not conflict.",
                 "They are not in conflict; both can be met.", "둘 다 반영할 수 있습니다."):
        assert not declares_conflict(text), text
    # From a reviewer, saying there is no conflict is no point either.
    assert reviewer_clause("참고로 obs-bot의 요청과는 대상이 달라 충돌하지 않습니다.").act is Act.FACT


def test_settings_of_values_in_spans_in_the_point_and_in_korean_switches() -> None:
    assert setting_values("`max_delay=300`초 상한을 두어 주십시오.") == {"300@max_delay"}
    assert "=strict@session_cookie_samesite" in setting_values(
        'New: `SESSION_COOKIE_SAMESITE` is `"Lax"`. Set it to `"Strict"` in all profiles.')
    # A profile named in the clause is not the setting; a host is not one either.
    assert "=none@session_cookie_samesite" in setting_values(
        'On `SESSION_COOKIE_SAMESITE`, for `widget.partner-site.com` in `prod` it must be `"None"`.')
    assert "=true@cors_allow_credentials" in setting_values(
        "`CORS_ALLOW_CREDENTIALS`를 `True`로 켜 주셔야 합니다.")
    assert "=false@cors_allow_credentials" in setting_values(
        "`CORS_ALLOW_CREDENTIALS`는 지금처럼 꺼 둔 상태(`False`)로 유지해 주셔야 합니다.")
    # (`~add`: adding in any of its words; and the thing not to be added.)
    assert prohibited("`orders`에 인덱스를 추가하는 것은 하지 말아 주십시오.") == {
        "추가", "~add", "인덱스"}


def test_a_point_against_another_reviewers_request_reverses_it() -> None:
    from bot.demands import opposed

    assert opposed("다만 perf-bot의 `gzip` 요청에는 반대합니다.", {"perf-bot", "qa-bot"}) == {
        "perf-bot"}
    assert opposed("I disagree with sec-bot on the cipher list.", {"sec-bot"}) == {"sec-bot"}
    assert not opposed("sec-bot의 요청과는 충돌하지 않습니다.", {"sec-bot"})
    on = Finding(label="F1", author="perf-bot", summary="", anchors=["code:gzip"], direction=1)
    against = Finding(label="F2", author="sec-bot", summary="", anchors=["code:gzip"],
                      opposes=["perf-bot"])
    elsewhere = Finding(label="F3", author="sec-bot", summary="", anchors=["code:ssl_ciphers"],
                        opposes=["perf-bot"])
    assert reverses(against, on) and not reverses(elsewhere, on)
    # One file, two settings: opposite directions on each are no reversal.
    metrics = Finding(label="F4", author="obs-bot", summary="", direction=1,
                      anchors=["code:metrics_enabled", "path:observability.toml"])
    echo = Finding(label="F5", author="sec-bot", summary="", direction=-1,
                   anchors=["code:sqlalchemy_echo", "path:observability.toml"])
    assert not reverses(echo, metrics)


def test_must_be_values_revert_requests_and_resolved_acks() -> None:
    assert setting_values("`new_checkout_flow` 기본값이 `true` 입니다. 기본값은 `false` 여야 합니다.") == {
        "=false@new_checkout_flow"}
    # A literal is no name asked to be there ("`true`로 되돌려").
    assert setting_values("`new_checkout_flow` 는 `true` 로 되돌려 주십시오.") == {
        "=true@new_checkout_flow"}
    fixed = Finding(label="F1", author="privacy-bot", summary="", status=FindingStatus.FIXED,
                    anchors=["code:user_events", "path:purge.py"], direction=-1)
    revert = Finding(label="F2", author="analytics-bot", summary="", asks=["revert"],
                     anchors=["code:user_events", "path:purge.py"])
    assert reverses(revert, fixed)
    fixed.status = FindingStatus.OPEN  # reverting is about a change already made
    assert not reverses(revert, fixed)
    assert reviewer_clause("보안 측 의견은 모두 해소되었습니다.").act is Act.ACK


def test_a_check_that_found_the_fix_wanting_acknowledges_nothing() -> None:
    findings: list = []
    judge_round(findings, [("rev", ["- `formatCurrency()` prints `¥1,200.00` for `ja-JP`; yen has "
                                    "no minor unit, it must be `¥1,200`."])], None, 1)
    owner = read_owner(findings, ["Fixed `formatCurrency()`: digits per locale (`3f9e1a2`)."])
    assert owner == {"F1": OwnerAction.FIX}
    out = judge_round(findings, [("rev", ["스테이징에서 다시 확인했습니다. 결제 요약의 합계가 여전히 "
                                          "`¥1,200.00` 입니다. 소수점 문제는 해결되지 않았습니다."])],
                      owner, 2)
    assert out.events == {"F1": "repeated (fix rejected)"} and not out.progress
    # Without a word that the fix failed, the same check acknowledges it.
    findings = []
    judge_round(findings, [("rev", ["- `formatCurrency()` prints `¥1,200.00`; it must be `¥1,200`."])],
                None, 1)
    out = judge_round(findings, [("rev", ["스테이징에서 다시 확인했습니다."])], owner, 2)
    assert out.events == {"F1": "acknowledged"}


def test_insisting_after_a_refusal_says_the_point_again() -> None:
    findings: list = []
    judge_round(findings, [("rev", ["- `invoice_pdf.py:24` embeds the whole font: 4.2MB a page. "
                                    "Embed a subset of the glyphs used."])], None, 1)
    owner = read_owner(findings, ["Not changing it: subsetting drops glyphs."])
    out = judge_round(findings, [("rev", ["Even so, 4.2MB a page is too much for production."])],
                      owner, 2)
    assert out.events == {"F1": "repeated"} and not out.progress
    assert restates("그래도 장당 4.2MB 는 운영에서 받아들이기 어렵습니다.")
    # "Still" with the value as it stands repeats the point; it asks for no other value.
    findings = []
    judge_round(findings, [("rev", ["`batch_size=1000` 은 FCM 권장치를 넘습니다. 500 이하로 줄여야 합니다."])],
                None, 1)
    owner = read_owner(findings, ["`batch_size` 는 1000 을 유지하겠습니다."])
    out = judge_round(findings, [("rev", ["`batch_size=1000` 은 여전히 문제입니다. 500 이하로 조정해 주십시오."])],
                      owner, 2)
    assert out.events == {"F1": "repeated"} and not out.raised


def test_drop_it_asked_of_the_owner_withdraws_nothing() -> None:
    for text in ("Drop it or serve a cached estimate from `pg_class.reltuples`.",
                 "PII in logs — drop it or hash it.", "Drop the column from `OrderListSerializer`."):
        assert reviewer_clause(text).act is not Act.WITHDRAW, text
    for text in ("That's the right trade-off, so I'm dropping that point.",
                 "Dropping the sampling point.", "I'll drop this one."):
        assert reviewer_clause(text).act is Act.WITHDRAW, text


def test_a_table_header_is_no_point_and_its_requested_column_asks() -> None:
    review = ("| # | where | now | requested |\n|---|---|---|---|\n"
              "| 1 | `upload.conf:9` `client_max_body_size` | `100m` | `2g` |\n"
              "| 2 | `api/uploads.py:12` `MAX_UPLOAD_BYTES` | 100 MiB | 2 GiB |")
    points = [text for _, text in items([review])]
    assert not any("where" in p and "now" in p for p in points)  # the header is not read
    findings: list = []
    judge_round(findings, [("media-bot", [review])], None, 1)
    assert findings[0].values == ["=2g@client_max_body_size"]
    # A table under a header without such a column asks nothing of its own.
    plain = "| file | lines |\n|---|---|\n| `a.py` | 120 |"
    assert all("must be" not in p for _, p in items([plain]))


def test_korean_not_this_but_that_kubernetes_units_and_settings_stated_as_they_are() -> None:
    # "X로 바꾸시면 안 되고 Y로": Y is asked, for the setting named before.
    assert setting_values("`maxmemory-policy`는 `allkeys-lru`로 바꾸시면 안 되고 "
                          "`volatile-lru`로 설정해야 합니다.") == {"=volatile-lru@maxmemory-policy"}
    assert setting_values("`1s` 말고 `30s`로 해 주세요.") == {"30s@"}
    assert setting_values("`resources.limits.memory`를 1Gi로 올려야 합니다.") == {"1gi@memory"}
    # "`retention_period: 720h`를 `8760h`로": 720h is what it is now.
    assert setting_values("`retention_period: 720h`를 최소 `8760h`로 설정해야 합니다.") == {
        "8760h@retention_period", ">=8760h@retention_period"}
    # A size with no setting in its clause gives none a value.
    assert setting_values("`JPEG_QUALITY = 80`에 동의합니다. 다만 48KB → 83KB로 늘어나니 "
                          "WebP를 내려 주십시오.") == {"83kb@"}
    # "주시고" asks.
    assert asked("`retention_period`는 `720h`로 되돌려 주시고, 아카이브로 빼는 게 맞습니다.")
    memory = Finding(label="F1", author="perf-bot", summary="", values=["1gi@memory"],
                     anchors=["code:limits", "code:memory"])
    cheaper = Finding(label="F2", author="cost-bot", summary="", values=["512mi@memory"],
                      anchors=["code:limits", "code:memory"])
    assert reverses(cheaper, memory)
    lru = Finding(label="F3", author="cache-bot", summary="", values=["=allkeys-lru@"],
                  anchors=["code:maxmemory", "code:policy", "code:allkeys-lru"])
    volatile = Finding(label="F4", author="session-bot", summary="",
                       values=["=volatile-lru@maxmemory-policy"],
                       anchors=["code:maxmemory-policy", "code:allkeys-lru"])
    assert reverses(volatile, lru)


def test_understood_but_unchanged_withdraws_nothing() -> None:
    assert reviewer_clause("말씀하신 배경은 충분히 이해했습니다만").act is not Act.WITHDRAW
    assert reviewer_clause("이해했습니다. 그 부분은 넘어가겠습니다.").act is Act.WITHDRAW
    assert restates("제 의견은 바뀌지 않았습니다.")


def test_a_point_that_says_it_does_not_conflict_and_requests_in_other_places() -> None:
    from bot.demands import requests, unopposed
    from bot.places import places

    text = ("`location /api/`에 `gzip off;`를 명시해 주세요. perf-bot의 1번은 `/static/` 대상이라 "
            "이것과 겹치지 않습니다.")
    assert unopposed(text, {"perf-bot"}) == {"perf-bot"}
    on = Finding(label="F1", author="perf-bot", summary="", anchors=["code:gzip"], direction=1)
    off = Finding(label="F2", author="sec-bot", summary="", anchors=["code:gzip"], direction=-1,
                  agrees=["perf-bot"])
    assert not reverses(off, on)
    off.agrees = []
    assert reverses(off, on)
    # The same setting asked otherwise in another file is met in both places.
    staging = "`deploy/celery/staging.env`의 `CELERY_CONCURRENCY`를 2로 낮춰 주세요."
    prod = "`deploy/celery/prod.env`의 `CELERY_CONCURRENCY`를 16으로 올려 주세요."
    here, there = (Finding(label=f"F{i}", author=a, summary="", anchors=sorted(topic(t).anchors),
                           direction=d, places=sorted(places(requests(t))))
                   for i, (a, t, d) in enumerate([("cost-bot", staging, -1), ("perf-bot", prod, 1)]))
    assert here.places == ["env:staging", "path:deploy/celery/staging.env"]
    assert not reverses(here, there)
    # One file name in two folders is two places; a path and its file name one.
    low, high = ("`overlays/staging/hpa.yaml:8`의 `minReplicas`를 `1`로 낮춰 주십시오.",
                 "`overlays/prod/hpa.yaml:8`의 `minReplicas`는 `6`으로 올려 주십시오.")
    here, there = (Finding(label=f"F{i}", author=a, summary="", anchors=sorted(topic(t).anchors),
                           direction=d, places=sorted(places(requests(t))))
                   for i, (a, t, d) in enumerate([("sre-bot", low, -1), ("cap-bot", high, 1)]))
    assert not reverses(here, there)
    there.places = ["path:hpa.yaml"]
    assert reverses(here, there)
    # A folder or key prefix (`tmp/`) and a method's route are places too.
    assert places("`tmp/`의 `expiration.days`를 `7`로 줄여 주십시오.") == {"code:tmp/"}
    assert "code:/api/v1/catalog" in places(
        "Please set `Cache-Control: private` on `GET /api/v1/catalog` (`catalog/views.py:41`).")


def test_still_inside_a_point_about_one_finding_is_about_that_one() -> None:
    findings: list = []
    judge_round(findings, [("rev", [
        "1. No server-side encryption configuration; SSE-KMS is required.\n"
        "2. `force_destroy = true` (`main.tf:18`) must be `false` for prod.\n"
        "3. No public access block; add one with all four flags set."])], None, 1)
    owner = read_owner(findings, ["Keeping `force_destroy` as it is."])
    out = judge_round(findings, [("rev", [
        "On `force_destroy`: make it a variable per environment. As it stands prod can still "
        "be wiped."])], owner, 2)
    assert out.events == {"F2": "repeated"}


def test_review_cases_bounds_presence_refusals_conflicts_and_tables() -> None:
    def asking(author: str, values: list[str]) -> Finding:
        return Finding(label="F1", author=author, summary="", anchors=["code:timeout"],
                       values=values)

    # Two bounds meet unless one's floor is above the other's ceiling.
    assert not reverses(asking("a", ["<=600s@timeout"]), asking("b", ["<=300s@timeout"]))
    assert not reverses(asking("a", [">=300일@timeout"]), asking("b", ["<=365일@timeout"]))
    assert reverses(asking("a", [">=400일@timeout"]), asking("b", ["<=365일@timeout"]))
    # "`X`를 변경" changes X; it does not ask X to be there. "do not switch to `yarn`"
    # does not ask for `yarn`.
    assert setting_values("`allkeys-lru`를 변경해 주세요.") == frozenset()
    assert setting_values("Please use `pnpm` and do not switch to `yarn`.") == {"+@pnpm"}
    # "말고" / "면 안 되고" refuse the value or name just before them, not everything.
    assert setting_values("`ttl`을 30s로 설정하고 캐시는 쓰지 말고 그대로 두세요.") == {"30s@ttl"}
    assert setting_values("`timeout`은 600초 이하여야 하고 이를 넘기면 안 됩니다.") == {
        "<=600초@timeout"}
    # "that" as a conjunction refers back to nothing.
    assert setting_values("`SESSION_TTL` is 3600 today. Make sure that the cache timeout "
                          "is 30s.") == {"30s@"}
    # A conflict denied, asked for, or stated without a way out.
    assert reviewer_clause("The new parser is not backward compatible and must keep the "
                           "old format.").act is Act.FINDING
    assert reviewer_clause("The retry budget must not conflict with the login rate limit; "
                           "please add a cap.").act is Act.FINDING
    assert declares_conflict("F1과 F2는 충돌합니다. 두 요청을 동시에 만족할 수 있는 값이 없습니다.")
    from bot.demands import opposed

    assert not opposed("반대하지 않습니다, sec-bot 요청대로 하셔도 됩니다.", {"sec-bot"})
    assert not opposed("I don't object to sec-bot's request.", {"sec-bot"})
    fixed = Finding(label="F1", author="sec-bot", summary="", status=FindingStatus.FIXED,
                    anchors=["code:rate_limit"])
    rollout = Finding(label="F2", author="sre-bot", summary="", anchors=["code:rate_limit"],
                      asks=sorted(asked_verbs("Please roll out `rate_limit` to staging first.")))
    assert not reverses(rollout, fixed)
    # Tables: GFM's ":-:" rules, "요청자" is who asked, a "|" in a code span.
    assert [p for _, p in items(["| key | 요청자 |\n|:-:|---|\n| `gzip_level` | perf-bot |"])] == [
        "| `gzip_level` | perf-bot |"]
    assert [p for _, p in items(["| key | requested |\n|---|---|\n| `sep` | `a|b` |"])] == [
        "| `sep` | `a|b` | — `sep` must be `a|b`."]


def test_long_unbroken_lines_are_read_like_any_other() -> None:
    """A 30,000-character run (a minified line, a digest, padding) is read in
    one pass; several patterns used to try it again from every character
    (minutes of CPU on the event loop). Correctness only: nothing here times."""
    for text in (" " * 30_000 + "x", "a" * 30_000, "1" * 30_000, "ab12" * 7_500,
                 "-" * 30_000, ", " * 15_000, "`x` still " * 3_000, "=1" * 15_000,
                 "**a " * 7_500, "12:" * 10_000, "(" * 30_000, "세 번 " * 7_500,
                 "참고로 " + "가 " * 15_000, "`x`로 고정 " * 3_750,
                 "Please set the timeout to 1" + " " * 2_000 + "x", "주세요, " * 5_000):
        clause = reviewer_clause(text)
        assert clause.act in (Act.FINDING, Act.FACT, Act.REFERENCE), text[:10]
        assert owner_clause(text).act in (Act.FACT, Act.FIX), text[:10]
        assert all(not v.startswith("!") for v in setting_values(text)), text[:10]
        judge_round([], [("rev", [text])], None, 1)


def test_values_fixed_with_an_aside_in_dotted_keys_and_not_from_line_numbers() -> None:
    # "고정", with "(v2)" between the value and the particle.
    assert setting_values("`DEFAULT_API_VERSION`은 기본값을 `\"2024-06-01\"`(v2)로 고정해 주십시오.") == {
        "=2024-06-01@default_api_version"}
    # `limits.memory` is a setting, not a file: its value is given to it.
    assert setting_values("`limits.memory`도 `7Gi`로 맞춰 주십시오.") == {"7gi@memory"}
    # The line of a path is where, not a value.
    assert setting_values(
        "Set `logging.level` to `DEBUG` in `config/prod/logging.yaml:12`.") == {"=debug@level"}


def test_a_reversal_is_not_folded_into_another_points_argument() -> None:
    # cost-bot's first bullet is the argument; its second asks the opposite of
    # sre-bot's request: a point of its own, with its value, and a contradiction.
    findings: list = []
    out = judge_round(findings, [
        ("sre-bot", ["- Set `logging.loggers.refund.level` to `DEBUG` in `config/logging.yaml:12`."]),
        ("cost-bot", ["- `refund` logging already costs 38 GB/day in prod.\n"
                      "- Set `logging.loggers.refund.level` to `WARN` in `config/logging.yaml`."]),
    ], {}, 1)
    assert [f.values for f in findings if f.author == "sre-bot"] == [["=debug@level"]]
    warn = [f for f in findings if "=warn@level" in f.values]
    assert len(warn) == 1 and out.contradictions == [("F1", warn[0].label)]


def test_reading_a_reply_acknowledges_nothing_and_both_asks_for_both() -> None:
    # "I read your answer, but I keep both points": no fix acknowledged.
    assert reviewer_clause("답변 확인했습니다만 두 항목 모두 유지합니다.").act is Act.REFERENCE
    assert reviewer_clause("Thanks for the explanation, I have read it.").act is not Act.ACK
    assert reviewer_clause("수정 확인했습니다.").act is Act.ACK
    # "Both must be fixed" asks again for what is open; it names nothing new.
    both = reviewer_clause("두 가지 모두 고쳐져야 합니다.")
    assert both.act is Act.REFERENCE and both.everything
    assert reviewer_clause("두 가지 문제가 있습니다.").act is Act.FACT


def test_emphasis_is_read_as_plain_words() -> None:
    text = "Please do **not** redirect `logout()` to `end_session_endpoint`."
    assert clauses([text]) == ["Please do not redirect `logout()` to `end_session_endpoint`."]
    assert "redirect" in prohibited(text)
    assert clauses(["Keep `**kwargs**` as is"]) == ["Keep `**kwargs**` as is"]


def test_cache_directives_that_cannot_both_hold_and_places_named_before_the_request() -> None:
    store = _finding("F1", "sec-bot", "For `/api/v2/profile` `Cache-Control` must be `no-store`.")
    longer = _finding("F2", "perf-bot", "On `/api/v2/profile` raise it to `max-age=3600`.")
    private = _finding("F3", "perf-bot", "On `/api/v2/profile` set `Cache-Control: private`.")
    assert reverses(store, longer) and reverses(longer, store)
    assert not reverses(store, private)  # "no-store" and "private" hold together
    # The file is named a sentence before the request: still the request's place.
    staging = _finding("F1", "cost-bot", "`deploy/staging.env`의 `CELERY_CONCURRENCY=8`은 과합니다. "
                      "분당 40건이라 2로 낮춰 주세요.")
    prod = _finding("F2", "perf-bot", "`deploy/prod.env`의 `CELERY_CONCURRENCY`를 16으로 올려 주세요.")
    assert staging.places == ["env:staging", "path:deploy/staging.env"]
    assert not reverses(staging, prod)


def test_an_owner_aside_about_other_work_fixes_no_open_finding() -> None:
    root = Finding(label="F1", author="rev", summary="The runtime stage has no `USER`",
                   anchors=["code:user"], terms=["root", "run", "runtime", "stage"])
    turn = ["I'm keeping root for now; the manifests expect port 80.\n\n"
            "Unrelated: `gunicorn` now starts via `CMD` instead of the shell script. commit `7a1e9f3`."]
    assert read_owner([root], turn) == {"F1": OwnerAction.DECLINE}
    # Without the refusal, the aside still answers nothing: the finding is untouched.
    aside = ["Unrelated: `gunicorn` now starts via `CMD` instead of the shell script. commit `7a1e9f3`."]
    assert read_owner([root], aside) == {"F1": OwnerAction.UNTOUCHED}
    assert read_owner([root], ["Added `USER app` in the runtime stage. commit `7a1e9f3`."]) == {
        "F1": OwnerAction.FIX}


def test_a_setting_named_in_words_beside_a_value_for_no_named_setting() -> None:
    early = _finding("F1", "data-bot", '`schedule: "0 3 * * *"` runs too late. Move it to `"0 1 * * *"`.')
    back = _finding("F2", "sre-bot", 'It overlaps `pg-basebackup`. The schedule has to go back to `"0 3 * * *"`.')
    assert reverses(back, early)
    # A value given to a setting it names in code is about that setting only.
    ttl = _finding("F3", "privacy-bot", "Private thumbnails leak. Please cut `THUMB_URL_TTL` to 1 hour.")
    longer = _finding("F4", "perf-bot", "Please raise the max-age on `thumbnail()` to `86400`.")
    assert not reverses(ttl, longer)


def test_a_turn_that_asks_for_nothing_states_facts() -> None:
    findings: list = []
    judge_round(findings, [("partner-bot", [
        "STEP_DONE\nChecked against the partner SDKs (acme-sync 2.3): both send `offset` "
        "today and nothing breaks. No findings from me."])], {}, 1)
    assert findings == []
    judge_round(findings, [("partner-bot", [
        "`offset` still breaks acme-sync. Please keep `offset` on `/v1/orders`. No findings from me "
        "beyond that."])], {}, 1)
    assert len(findings) == 1  # it asks, in so many words
    assert reviewer_clause("별도 요청은 없습니다.").act is Act.FACT
    assert reviewer_clause("테스트 결과 공유드립니다.").act is Act.FACT
    assert reviewer_clause("Sharing the test results:").act is Act.FACT


def test_a_name_that_must_stay_is_asked_to_be_there() -> None:
    assert setting_values("`offset` must stay on `/v1/orders`; deprecate it instead.") == {"+@offset"}
    assert setting_values("Remove the `offset` parameter from `/v1/orders`.") == {"-@offset"}


def test_counts_and_rates_asked_in_words_and_their_contradiction() -> None:
    # (Each also asks for retries, bounded: `+@~retry`.)
    assert setting_values("재시도는 세 번까지만 하고, 그 뒤에는 dead-letter 큐로 보내 주십시오.") == {
        "<=3회@", "+@~retry"}
    assert setting_values("재전송 횟수를 8회 이상으로 늘려 주십시오.") == {">=8회@", "+@~retry"}
    assert setting_values("Please send no more than 50 messages per second overall.") == {
        "<=50/second@"}
    # "2번" is a point's number, not a count; "but" keeps two halves apart.
    assert setting_values("2번은 여전히 수정해 주십시오.") == frozenset()
    assert setting_values("캐시는 좋지만, TTL을 30초로 줄여 주세요.") == {"30초@"}


    cap = _finding("F1", "deliv-bot", "Please cap how fast we send: no more than 50 messages per second.")
    fast = _finding("F2", "ops-bot", "The sending rate has to go up to at least 200 messages a second.")
    assert reverses(fast, cap)
    within = _finding("F3", "ops-bot", "The sending rate has to go up to at least 40 messages a second.")
    assert not reverses(within, cap)  # 40 to 50 a second meets both
    few = _finding("F4", "rel-bot", "재시도는 세 번까지만 하고, 그 뒤에는 dead-letter 큐로 보내 주십시오.")
    many = _finding("F5", "partner-bot", "재전송 횟수를 8회 이상으로 늘려 주십시오.")
    assert reverses(many, few)
    # A bound with no unit is no time: "합계 30 이하" and "5초로" are two settings.
    total = _finding("F6", "dba-bot", "`pool_size + max_overflow` 합계는 30 이하로 맞춰 주세요.")
    timeout = _finding("F7", "perf-bot", "`pool_size` 는 충분합니다. `pool_timeout` 30초는 깁니다. 5초로 줄여 주세요.")
    assert not reverses(timeout, total)


def test_more_wording_read_from_held_out_24_and_25() -> None:
    # "the fixed 30-day divisor" is an adjective; "Same two issues as before" says it again.
    same = reviewer_clause("Same two issues as before: the fixed 30-day divisor and float math.")
    assert same.act is Act.FINDING and restates(same.text)
    # A rebuttal that cites a figure is still a rebuttal.
    assert reviewer_clause("I can't find that decision in the ticket, and February is "
                           "over-charged by about 7%.").act is Act.REFERENCE
    assert owner_clause("No further changes from my side: it matches the legacy system.").act is Act.DECLINE
    assert reviewer_clause("Pooling change looks reasonable, no performance concerns at this stage."
                           ).act is Act.FACT
    # A "required" column asks for its cell.
    table = ("| setting | current | required |\n|---|---|---|\n| `pool_size` | 20 | 8 |")
    assert any("must be 8" in c for c in clauses([table]))


def test_a_point_withdrawn_a_message_later_in_the_same_turn_was_never_raised() -> None:
    findings: list = []
    out = judge_round(findings, [
        ("net-bot", ["- NATs drop idle mappings at 30s. `HEARTBEAT_INTERVAL_S` must be below that; set it to 20."]),
        ("mobile-bot", ["- A 20s ping drains battery. Keep `HEARTBEAT_INTERVAL_S` at 60.",
                        "Correction: 60s does not work with 30s NAT timeouts. I withdraw my previous "
                        "comment; 20s is fine with me.\nMy only remaining ask: skip pings in the "
                        "background (`visibilitychange`)."]),
    ], {}, 1)
    assert out.contradictions == []
    assert [f.author for f in findings] == ["net-bot", "mobile-bot"]
    # "그대로 두셔도 됩니다" about one point withdraws nothing else of the turn.
    findings = []
    judge_round(findings, [("ux-bot", ["1. `SESSION_TTL`은 24h로 늘려 주셔야 합니다.\n"
                                       "2. 토스트 문구(`session.expiring_soon`)는 좋습니다. 그대로 두셔도 됩니다."])],
                {}, 1)
    assert [f.values for f in findings] == [["24h@session_ttl"]]


def test_a_maximum_is_a_bound_and_objecting_to_a_change_made_reverses_it() -> None:
    assert "<=100@page_size" in setting_values("`page_size` 에 상한이 없습니다. 최대값을 100 으로 제한해 주십시오.")
    cache = Finding(label="F1", author="perf-bot", summary="", anchors=["code:api", "code:products"],
                    status=FindingStatus.FIXED)
    objection = Finding(label="F2", author="consistency-bot", summary="",
                        anchors=["code:api", "code:products"], asks=["object"])
    assert reverses(objection, cache)
    cache.status = FindingStatus.OPEN
    assert not reverses(objection, cache)  # nothing made yet to object to


def test_times_of_day_defaults_fixed_to_a_value_and_statements_that_ask_nothing() -> None:
    # "04:00" and "03:30 이후" are times of day (a unit of their own), a value and a bound.
    assert setting_values("실행 시각을 04:00 으로 옮겨 주십시오.") == {"0400시각@"}
    assert setting_values("실행 시각은 03:30 이후여야 합니다.") == {">=0330시각@"}
    # "`ko` 로 고정" gives a value ("`orjson`으로 바꿔" switches to a name).
    assert setting_values("`defaultLocale` 을 `ko` 로 고정해 주십시오.") == {"=ko@defaultlocale"}
    assert setting_values("Set `defaultLocale: 'en'` and keep Korean under `/ko`.") == {
        "=en@defaultlocale"}
    for text in ("PG 응답 코드 매핑은 연동 가이드와 일치합니다.", "값은 다음처럼 조정해 주십시오.",
                 "이번 변경도 사용자 문구에는 영향이 없습니다.", "Please change them as follows:"):
        assert reviewer_clause(text).act is Act.FACT, text


def test_a_dotted_name_that_is_no_file_is_a_name_and_polite_korean_refusals() -> None:
    assert "code:args" in topic("`record.args` 는 건드리지 않습니다.").anchors
    assert "path:settings.py" in topic("`app/settings.py:12` 를 보십시오.").anchors
    for text in ("`record.msg` 만으로 충분하다고 봅니다.", "`extra` 는 대상이 아니라고 판단합니다.",
                 "그 부분은 별도 작업에서 다루는 것이 맞다고 봅니다."):
        assert owner_clause(text).act is Act.DECLINE, text


def test_switching_on_and_off_and_the_effect_a_change_will_have() -> None:
    from bot.demands import direction

    on = ("The body is repetitive JSON: enable response compression on `/api/reports/{id}`; "
          "it should shrink roughly tenfold.")
    assert direction(on) == 1  # "it should shrink" is the effect, not a request
    assert direction("Compression must be turned off for `/api/reports/{id}`.") == -1
    assert reviewer_clause("Stable now, thanks.").act is Act.ACK


def test_removing_what_another_reviewers_fixed_finding_added() -> None:
    assert setting_values("요청 로그에서 `user_email` 필드를 아예 제거해 주십시오.") == {"-@user_email"}
    index = Finding(label="F1", author="dba-bot", summary="",
                    anchors=["code:created_at", "code:idx_orders_created_at"],
                    status=FindingStatus.FIXED)
    drop = Finding(label="F2", author="write-bot", summary="",
                   anchors=["code:created_at", "code:idx_orders_created_at"],
                   values=["-@idx_orders_created_at"], direction=-1)
    assert reverses(drop, index)
    index.values, index.direction = ["-@idx_orders_created_at"], -1
    assert not reverses(drop, index)  # it asked for the same removal
    assert reviewer_clause("주문 생성 경로 부하 테스트 결과입니다.").act is Act.FACT
    assert reviewer_clause("특이 사항 없습니다.").act is Act.FACT


def test_praise_under_a_good_heading_and_a_lead_in_to_a_log_are_no_findings() -> None:
    turn = ("Two problems before this can ship:\n\n1. **Key.** Hash the flag key too.\n\n"
            "Things I verified and am happy with:\n- Removing the `session_bucket` cookie writer. It is clean.\n"
            "- The distribution numbers above are within noise.\n\nAlso `docs/flags.md` is out of date, please fix.")
    acts = [(reviewer_clause(t).act, t) for _, t in items([turn])]
    assert [t for a, t in acts if a is Act.FINDING] == [
        "Hash the flag key too.", "Also `docs/flags.md` is out of date, please fix."]
    # A heading that praises, then lists issues, lists issues.
    issues = "The conversion looks good. Two issues:\n1. `sync.py:64` logs the `api_token`. Drop it."
    assert [reviewer_clause(t).act for _, t in items([issues])] == [Act.FINDING, Act.FINDING]
    lead = "For reference, here's what `handle_event()` looks like at `9c0d4b2` (trimmed):"
    assert reviewer_clause(lead).act is Act.FACT
    assert reviewer_clause("For reference, `timeout` must be 30s.").act is Act.FINDING


def test_an_aside_in_parentheses_and_a_change_that_reads_fine() -> None:
    turn = ("It fails exactly as before:\n(It passes locally only without `--stripe-fixtures=fin1187`; "
            "the default fixture has a single full refund.)\nThe two keys never collide, please fix.")
    acts = [reviewer_clause(t).act for _, t in items([turn])]
    assert acts.count(Act.FINDING) == 1 and acts[-1] is Act.FINDING
    assert reviewer_clause("(Please also bump `MAX_RETRIES` to 5.)").act is Act.FINDING
    assert reviewer_clause("The proration itself reads fine.").act is Act.FACT


def test_an_acknowledgement_of_other_work_acknowledges_no_finding() -> None:
    plural = Finding(label="F1", author="rev", summary="`count` 문구 복수형",
                     anchors=["code:count"], terms=["복수", "수형", "문구"])
    turn = ["검수 반영 확인했습니다.\n\n`count` 문구의 복수형 처리는 여전히 남아 있습니다."]
    findings = [plural]
    judge_round(findings, [("rev", turn)], {"F1": OwnerAction.FIX}, 2)
    assert plural.status is FindingStatus.OPEN
    findings = [plural := plural.model_copy(update={"history": []})]
    judge_round(findings, [("rev", ["반영 확인했습니다."])], {"F1": OwnerAction.FIX}, 2)
    assert plural.status is FindingStatus.FIXED
    assert reviewer_clause("문제 위치입니다.").act is Act.FACT


def test_the_rest_of_a_point_that_repeats_and_facts_against_an_excuse() -> None:
    findings: list = []
    judge_round(findings, [("rev", ["1. `badge` is not refreshed after `mark_as_read`. Send a silent push.\n"
                                    "2. `unread_count()` runs a `COUNT(*)` per send. Batch it."])], None, 1)
    out = judge_round(findings, [("rev", [
        "리팩터링은 감사합니다. 코드 읽기가 훨씬 편해졌습니다.\n\n"
        "다만 지난번 지적이 아직 해결되지 않았습니다. 이 부분이 반영되어야 CS 건이 닫힙니다.\n"
        "앱 쪽 `didReceiveRemoteNotification`은 이미 구현되어 있습니다."])], None, 2)
    assert out.raised == [] and set(out.events.values()) == {"repeated"}


def test_a_line_of_context_is_no_finding_unless_it_asks() -> None:
    line = ("참고로 재현 방법은 처음과 같습니다: `pytest tests/audit/test_concurrency.py -q`. "
            "락 획득을 헤드 조회보다 먼저 하도록 순서만 바꾸면 통과하는 것을 확인했습니다.")
    assert {reviewer_clause(t).act for _, t in items([line])} == {Act.FACT}
    assert reviewer_clause("참고로 `x`도 고쳐 주세요.").act is Act.FINDING
    assert reviewer_clause("마이그레이션 구조는 적절합니다.").act is Act.FACT


def test_environments_are_places() -> None:
    from bot.places import places

    assert places("**스테이징만** `traces_sample_rate=1.0`으로 올려 주세요.") == {"env:staging"}
    assert "env:production" in places("Set it in `overlays/prod/hpa.yaml`.")
    assert places("`deploy/celery/staging.env`") == {"env:staging", "path:deploy/celery/staging.env"}


    stage = _finding("F1", "obs-bot", "**스테이징만** `traces_sample_rate=1.0`으로 올려 주세요.")
    prod = _finding("F2", "cost-bot", "운영(`ENV=production`)은 `traces_sample_rate`를 0.05로 낮춰야 합니다. "
                   "스테이징 값은 상관없습니다.")
    anywhere = _finding("F3", "cost-bot", "`traces_sample_rate`를 0.05로 낮춰야 합니다.")
    assert not reverses(prod, stage) and reverses(anywhere, stage)


def test_korean_numbers_with_particles_and_a_refusal_of_the_one_point_left() -> None:
    anchors = topic("`bulk` 요청이 5000건 고정이라 ES 클러스터에서 429가 납니다.").anchors
    assert {"num:5000건", "num:429"} <= anchors
    assert owner_clause("증분 경로에는 넣지 않겠습니다.").act is Act.DECLINE
    # "줄었습니다" reports a drop, good or bad: "처리량이 절반으로 줄었습니다" is a problem.
    assert reviewer_clause("배포 후 처리량이 절반으로 줄었습니다.").act is Act.FINDING
    deleted = Finding(label="F1", author="search-bot", summary="", anchors=["code:deleted_at"],
                      terms=["상품", "색인", "제거"])
    bulk = Finding(label="F2", author="perf-bot", summary="", anchors=["code:bulk", "num:429"],
                   terms=["bulk", "요청", "나눠"])
    turn = ["STEP_DONE\n- `bulk` 배치 크기 1000으로 조정, 429 응답 시 backoff 재시도 추가\n"
            "- 삭제 처리는 야간 재색인이 정리하므로 넣지 않겠습니다.\n커밋 `0d93ab7`. pytest 146 passed."]
    assert read_owner([deleted, bulk], turn) == {"F1": OwnerAction.DECLINE, "F2": OwnerAction.FIX}


def test_a_setting_named_by_its_last_word_and_who_is_speaking() -> None:
    strict = Finding(label="F1", author="sec-bot", summary="", anchors=["code:session_cookie_samesite"],
                     values=["=strict@session_cookie_samesite"])
    none = Finding(label="F2", author="embed-bot", summary="",
                   anchors=["code:session_cookie_samesite", "code:samesite"],
                   values=["=none; secure@samesite"])
    assert reverses(none, strict)
    assert setting_values("SameSite 속성은 `None`(`Secure`와 함께)이어야 합니다.") == {"=none@"}
    assert reviewer_clause("임베드 관점에서 확인 부탁드립니다.").act is Act.FACT


def test_review_regressions_from_this_sessions_rules() -> None:
    """Ordinary review sentences an independent review found misread by this
    session's rules; each was read right before them."""
    from bot.demands import direction


    # Unrelated quantities are no contradiction: a rate per second and per request,
    # a latency and a timeout, a time of day and a duration.
    pairs = [("Send no more than 50 messages per second to the SMS provider.",
              "Please batch at least 200 messages per request to the SMS provider."),
             ("Keep p99 latency of the checkout API under 300ms.",
              "Please raise the checkout API client timeout to at least 5s."),
             ("배치 실행은 03:30 이후로 옮겨 주세요.", "배치 타임아웃은 60분 이하로 줄여 주세요.")]
    for one, other in pairs:
        assert not reverses(_finding("F2", "b", other), _finding("F1", "a", one)), one
    # "한 번에" is "at a time"; a ratio is no time of day.
    assert setting_values("재전송은 한 번에 최대 100건까지만 보내 주세요.") == {"<=100건@"}
    assert not any("시각" in v for v in setting_values("Keep the ratio at 1:10, please."))
    # A fix reported beside "no further changes needed" is a fix.
    assert owner_clause("No further changes needed elsewhere.").act is not Act.DECLINE
    assert reviewer_clause("Turn 2 looked fine to me.").act is not Act.FINDING
    assert reviewer_clause("The regex matches `../`, so path traversal is possible.").act is Act.FINDING
    assert reviewer_clause("The fix has no effect on the race: two workers still debit twice."
                           ).act is not Act.FACT
    assert reviewer_clause("수정 후에도 p99 지연에는 변화는 없습니다.").act is not Act.FACT
    assert reviewer_clause("보안 관점에서 토큰이 노출됩니다.").act is Act.FINDING
    # A closing "nothing else" keeps the turn's findings; "요청이 없습니다" mid-sentence is a finding.
    findings: list = []
    judge_round(findings, [("rev", ["- `retry()` never gives up. Cap it.\n"
                                    "- `orders.py:40` logs the card number.\nNothing else from me."])],
                None, 1)
    assert len(findings) == 2
    assert reviewer_clause("결제 실패 시 재시도 요청이 없습니다.").act is Act.FINDING
    # "I withdraw my previous comment" takes back the latest point, not every one.
    findings = []
    judge_round(findings, [("rev", ["- Please add an index on `orders.created_at`.",
                                    "- Please add jitter to `reconnect()` backoff.",
                                    "I withdraw my previous comment; `reconnect()` already randomizes."])],
                None, 1)
    assert [f.summary for f in findings] == ["Please add an index on `orders.created_at`."]
    # "it should increase to 30s" asks; "at this stage" names no environment.
    assert direction("The timeout is too short, it should increase to 30s.") == 1
    lower = _finding("F1", "a", "Please lower `MAX_CONN` to 20 at this stage.")
    assert reverses(_finding("F2", "b", "Please raise `MAX_CONN` to 200 in prod."), lower)
    # A measurement after a colon asks nothing; the request after it does.
    assert setting_values("Benchmark: cache hit rate is 95% with the `CACHE_TTL` at 300s. "
                          "Please lower `CACHE_TTL` to 60s.") == {"60s@cache_ttl"}
    # A dot inside a name ends no sentence.
    assert setting_values("`retry.max` 는 3회까지만 하고, 그 뒤에는 DLQ로 보내 주십시오.") == {"<=3회@max"}


def test_a_default_within_a_cap_a_point_opening_on_its_file_and_a_conflict_that_only_seemed() -> None:
    # "Cap `X` at 100": a maximum, with the setting between the verb and the number.
    assert setting_values("Cap `page_size` at 50 (`MAX_ROWS`) and reject anything larger.") == {
        "<=50@page_size"}
    default = _finding("F1", "api-bot", "Lower the default `page_size` from 200 to 25.")
    cap = _finding("F2", "db-bot", "Cap `page_size` at 50 (`MAX_ROWS`) and reject anything larger.")
    over = _finding("F3", "db-bot", "Cap `page_size` at 10 (`MAX_ROWS`) and reject anything larger.")
    assert not reverses(cap, default)  # 25 is within 50
    assert reverses(over, default)  # 25 is not within 10
    # Two points that open on two files ask the same call to differ in each file.
    sync = _finding("F1", "sre-bot", "`jobs/http/fetch.py:40`의 조회는 동기 경로입니다. "
                    "`stop_after_attempt(2)`로 줄여 주세요.")
    batch = _finding("F2", "data-bot", "`jobs/batch/loader.py:88`의 적재는 야간 배치입니다. "
                     "`stop_after_attempt(7)`로 늘려 주세요.")
    assert not reverses(batch, sync)
    prose = _finding("F3", "data-bot", "야간 배치가 자주 실패합니다. `stop_after_attempt(7)`로 늘려 주세요.")
    assert reverses(prose, sync)  # no place of its own: the same call, another value
    # "looked as if both could not be met, but both are met below": no conflict.
    assert not declares_conflict("F1과 F3은 처음엔 동시에 만족할 수 없는 것처럼 보였지만, "
                                 "아래처럼 하면 둘 다 충족됩니다.")
    assert not declares_conflict("At first these seemed like they conflict, but the retry "
                                 "queue below satisfies both.")
    assert declares_conflict("F1과 F3은 동시에 만족할 수 없습니다.")


def test_a_commit_heading_reports_a_fix_a_later_look_asks_nothing_and_removing_under_a_longer_name() -> None:
    # "Done in `abc1234`:" above the list of changes reports the fix (no heading).
    cache = Finding(label="F1", author="perf-bot", summary="", anchors=["code:ttl_seconds"],
                    terms=["ttl", "cache", "~cache"])
    turn = ["STEP_DONE\nAll addressed in `c0ffee1`:\n- `ttl_seconds` read from settings\n"
            "pytest: 40 passed"]
    assert read_owner([cache], turn) == {"F1": OwnerAction.FIX}
    # The reviewer's own later look is no request to the owner.
    for text in ("I'll look at the migration once there is one.",
                 "마이그레이션이 올라오면 그때 보겠습니다."):
        assert reviewer_clause(text).act is Act.FACT, text
    # "…을 추가하면 안 됩니다" prohibits adding; "추가하고 … 만들어야" asks to add.
    assert prohibited("`pg_trgm` 확장을 추가하면 안 됩니다.") == {"추가", "~add", "확장"}
    assert "추가" in asked_verbs("`pg_trgm`을 추가하고 `gin` 인덱스를 만들어야 합니다.")
    # Dropping the migration `0042_users_email_idx` removes the index `users_email_idx`.
    index = _finding("F1", "perf-bot", "Add an index: `CREATE INDEX users_email_idx ON users (email)`.")
    index.status = FindingStatus.FIXED
    drop = _finding("F2", "dba-bot", "Please drop `0042_users_email_idx`; we should not add an "
                    "index on `users.email`.")
    assert reverses(drop, index)
    other = _finding("F3", "dba-bot", "Please drop `0042_users_name_idx`.")
    assert not reverses(other, index)


def test_a_refused_value_a_word_of_a_longer_name_and_nothing_to_add() -> None:
    # "to 60 minutes, not 15": 15 is the value refused, not asked.
    assert setting_values("Set `SESSION_TTL` to 60 minutes, not 15.") == {"60min@session_ttl"}
    assert setting_values("Use 30s instead of 10s.") == {"30s@"}
    ttl = _finding("F1", "sec-bot", "Sessions must expire in 15 minutes: `SESSION_TTL = 15`.")
    longer = _finding("F2", "app-bot", "Set `SESSION_TTL` to 60 minutes, not 15.")
    assert reverses(longer, ttl)
    # `checkout` is a word of `checkout-success-rate`, not the checkout named in words.
    rate = _finding("F1", "sre-bot", "`analysis.yaml:18` allows 90% success on checkout; it has to be 0.99.")
    step = _finding("F2", "release-bot", "The first step needs 25% so `checkout-success-rate` can tell "
                    "99% from 97%.")
    assert not reverses(step, rate)
    # "I have nothing to add this round": the turn's statements ask nothing.
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Add a canary rollout for checkout.")
    sim.say(Role.OWNER, "STEP_DONE\nCanary steps 10/50/100 in `rollout.yaml`.")
    sim.say(Role.REVIEWER, "Step layout and pause durations match the release calendar; "
            "I have nothing to add this round.")
    sim.say(Role.OWNER, "STEP_DONE\nNothing changed.")
    assert sim.state.findings == []


def test_a_fix_reported_and_refuted_raises_nothing_new() -> None:
    assert set(selectors("커밋 `1c88f0b`에서 1, 2, 3번 모두 수정했습니다.")[0]) == {1, 2, 3}
    assert set(selectors("1·2번 모두 그대로입니다.")[0]) == {1, 2}
    assert 2 not in selectors("2/3번 실패합니다.")[0]  # a fraction, not points 2 and 3
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "배치 작업이 가끔 중복 실행됩니다. 고쳐 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`jobs/runner.py`에 락을 추가했습니다. 커밋 `a1b2c3d`.")
    sim.say(Role.REVIEWER, "두 가지 요청드립니다.\n"
            "1. 락 만료 시간이 없어 워커가 죽으면 락이 영원히 남습니다. TTL을 두어야 합니다.\n"
            "2. `jobs/runner.py:40`의 재시도가 락을 다시 잡지 않습니다. 재시도 전에 락을 확인해 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n1, 2번 모두 수정했습니다. 커밋 `e4f5a6b`.")
    sim.say(Role.REVIEWER, "커밋 `e4f5a6b`를 확인했는데, 말씀하신 변경이 실제로 들어가 있지 않습니다. "
            "해당 커밋은 `docs/jobs.md`만 수정합니다.\n1·2번 모두 그대로입니다.")
    sim.say(Role.OWNER, "STEP_DONE\n죄송합니다, push가 누락되었습니다. 커밋 `c7d8e9f`에서 1, 2번 모두 수정했습니다.")
    sim.say(Role.REVIEWER, "`c7d8e9f`도 살펴봤습니다. 락 TTL 설정도 `jobs/runner.py`에서 보이지 않습니다. "
            "앞서 드린 두 가지 요청이 아직 하나도 해결되지 않았습니다.")
    sim.say(Role.OWNER, "STEP_DONE\n확인하겠습니다.")
    assert [f.label for f in sim.state.findings] == ["F1", "F2"]
    assert [d.trigger for d in sim.deadlocks()] == [Trigger.NO_PROGRESS]


def test_values_made_or_declared_kept_or_changed_and_an_owner_who_cannot_do_both() -> None:
    from bot.owner_turn import declared_conflict

    assert setting_values("Make it `ON DELETE SET NULL` so orders survive.") == {"=on delete set null@"}
    assert setting_values("Declare the FK on `orders.user_id` as `ON DELETE RESTRICT`.") == {
        "=on delete restrict@"}
    # A timestamp's zone offset is no time of day.
    assert setting_values("`ts`는 `2024-05-01T09:00:00+09:00`이어야 합니다.") == {
        "=2024-05-01t09:00:00+09:00@ts"}
    # Keeping a name as it is reverses changing it.
    change = _finding("F1", "api-bot", "`price`를 정수(원)로 바꿔 주세요.")
    keep = _finding("F2", "app-bot", "`price`는 지금처럼 문자열 decimal로 유지해 주세요.")
    other = _finding("F3", "app-bot", "`currency`는 지금처럼 유지해 주세요.")
    assert reverses(keep, change) and not reverses(other, change)
    assert setting_values("Keep `locale` as it is.") == {"^@locale", "+@locale"}
    assert setting_values("Change `locale` to `en-US`.") == {"~@locale", "=en-us@locale"}
    # An owner who can't do both, naming neither finding nor author: the two
    # reviewers' points in play.
    bind = Finding(label="F1", author="sec-bot", summary="", anchors=["code:bind"],
                   terms=["bind", "address", "interface"], status=FindingStatus.FIXED)
    scrape = Finding(label="F2", author="sre-bot", summary="", anchors=["code:bind"],
                     terms=["listen", "scrape", "bind", "address"])
    assert declared_conflict([bind, scrape], ["I can't do both — waiting for a call on the "
                                              "bind address."]) == ("F1", "F2")
    assert declared_conflict([bind, scrape], ["두 분 요청이 충돌하는 것처럼 보일 수 있지만 둘 다 "
                                              "반영 가능합니다."]) is None
    assert declared_conflict([bind, scrape], ["트랜잭션 범위에 대해 두 분 요청이 반대라서 "
                                              "대기하겠습니다."]) == ("F1", "F2")


def test_a_table_row_keys_its_value_a_span_assigned_after_set_and_a_prohibition_in_words() -> None:
    # The row's setting takes the asked value, whatever the reason column names.
    (_, row), = items(["| 키 | 요청 값 | 근거 |\n|---|---|---|\n| `WORKERS` | 4 | `cpu_count` 8 / 2 |"])
    assert row.endswith("— `WORKERS` must be 4.")
    assert "4@workers" in _finding("F1", "ops-bot", row).values
    # "please set `X = True`" gives X its value.
    assert setting_values("Please set `ALLOW_SIGNUP = True` for the beta.") == {"=true@allow_signup"}
    # "남기면 안 됩니다" prohibits what "남겨 주십시오" asks (one verb in two
    # forms), but with no name in common the words around cannot tell whether
    # both speak of one thing: the card number is not the order number.
    from bot.demands import asked_verbs, prohibited
    assert "남기" in asked_verbs("요청 본문 전체를 감사 로그에 남겨 주십시오.")
    assert prohibited("요청 본문은 감사 로그에 남기면 안 됩니다.") == {"남기"}
    card = _finding("F1", "sec-bot", "결제 요청의 카드 번호는 감사 로그에 남기면 안 됩니다.")
    order = _finding("F2", "ops-bot", "결제 요청의 주문 번호는 감사 로그에 남겨 주십시오.")
    assert not reverses(card, order)
    # "…처럼 보이지만 함께 만족할 수 있습니다": no conflict declared.
    from bot.owner_turn import declared_conflict
    a = Finding(label="F1", author="sec-bot", summary="", terms=["로그", "카드"])
    b = Finding(label="F2", author="ops-bot", summary="", terms=["로그", "주문"])
    assert declared_conflict([a, b], ["두 요청이 서로 반대 방향처럼 보이지만 함께 만족할 수 있습니다."]) is None
    assert declared_conflict([a, b], ["These look like they pull in opposite directions, but "
                                      "both can be satisfied together."]) is None
    assert declared_conflict([a, b], ["본문 로깅은 두 분 요청이 정반대라 손대지 않았습니다."]) == ("F1", "F2")


def test_a_run_number_announces_a_point_answered_by_number_and_praise_of_the_gain() -> None:
    for text in ("CI #4820 결과입니다.", "추가로 보이는 문제입니다.", "그리고 하나 더 있습니다.",
                 "성능 개선 폭이 큽니다.", "응답 형식도 기존 클라이언트와 호환되게 잘 맞추셨습니다."):
        assert reviewer_clause(text).act is Act.FACT, text
    # "1번은 실제로 발생합니다": the owner's "it never happens" answered, point 1 again.
    clause = reviewer_clause("1번은 실제로 발생합니다.")
    assert clause.act is Act.REFERENCE and clause.ordinals == (1,)
    assert reviewer_clause("It does happen, on every bulk import.").act is Act.REFERENCE


def test_a_point_under_a_quotation_is_about_what_the_quotation_names() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "주문 API 응답을 정리해 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`orders/api.py` 정리했습니다.")
    sim.say(Role.REVIEWER, "`price`는 문자열 decimal로 바꿔 주십시오.", author="api-bot")
    sim.say(Role.REVIEWER, "모바일 쪽은 지금 이대로 괜찮습니다.", author="app-bot")
    sim.say(Role.OWNER, "STEP_DONE\n- `price`를 `\"12900.00\"` 형식으로 변경했습니다 (`1fd0c77`).")
    sim.say(Role.REVIEWER, "LGTM", author="api-bot")
    sim.say(Role.REVIEWER, "> `price`를 `\"12900.00\"` 형식으로 변경했습니다\n"
            "이 부분은 받아들이기 어렵습니다. 구버전 앱이 숫자로 파싱합니다. `/v1`에서는 원복해 주십시오.",
            author="app-bot")
    sim.say(Role.OWNER, "STEP_DONE\n확인 중입니다.")
    assert [d.trigger for d in sim.deadlocks()] == [Trigger.CONTRADICTION]


def test_retries_asked_for_and_against_and_not_adding_a_name() -> None:
    def stance(text: str) -> set[str]:
        return {v for v in setting_values(text) if v.endswith("@~retry")}

    assert stance("`@retry(stop=stop_after_attempt(5))`를 추가해 주십시오.") == {"+@~retry"}
    assert stance("`sync.py:40`의 `retry_on_timeout=True`도 제거해 주십시오.") == {"-@~retry"}
    assert stance("정산 요청은 자동 재시도를 하지 말아야 합니다.") == {"-@~retry"}
    assert stance("The worker should try it again a few times with backoff.") == {"+@~retry"}
    assert stance("The worker must never re-send a payout by itself.") == {"-@~retry"}
    assert stance("Please put retries back on the `refund` call.") == {"+@~retry"}
    # A name holding "retry", a statement, or both ways at once ask neither.
    assert stance("Make `retry_backoff` exponential, starting at 200 ms.") == set()
    assert stance("Add jitter; without it every instance retries in lockstep.") == set()
    assert stance("Retry on 5xx, but do not retry on 4xx.") == set()
    again = _finding("F1", "rel-bot", "When a payout fails, the worker should try it again a few "
                     "times with backoff before giving up.")
    never = _finding("F2", "fin-bot", "The worker must never re-send a payout by itself; a failed "
                     "payout goes to manual review.")
    other = _finding("F3", "fin-bot", "The exporter must never re-send a report email.")
    assert reverses(never, again) and not reverses(other, again)
    # "`X`는 넣지 말아 주세요" against "`X`를 추가해 주세요".
    assert setting_values("그리고 `idx_orders_created`는 넣지 말아 주세요.") == {"-@idx_orders_created"}


def test_an_explicit_list_only_reverses_the_wildcard() -> None:
    assert setting_values("Please restrict `cors_origins` to an explicit list.") == {"!=*@cors_origins"}
    assert setting_values("`cors_origins`는 `*`로 열어야 합니다.") == {"=*@cors_origins"}
    assert setting_values('Set `cors_origins` back to `["*"]`.') == {"=*@cors_origins"}
    only = _finding("F1", "sec-bot", "`CORS_ORIGINS`에 와일드카드를 두면 안 됩니다. 명시적으로 나열한 "
                    "목록만 허용해야 합니다.")
    star = _finding("F2", "compat-bot", "`CORS_ORIGINS`는 `*`로 열어야 합니다.")
    other = _finding("F3", "compat-bot", "`CDN_ORIGINS`는 `*`로 열어야 합니다.")
    assert reverses(star, only) and not reverses(other, only)


def test_taking_a_version_back_down_is_lowering_it_and_serving_is_not() -> None:
    from bot.demands import direction

    assert direction("`.nvmrc`와 베이스 이미지를 다시 `node:18-alpine`으로 내려야 합니다.") == -1
    assert direction("`Accept: image/webp` 클라이언트에는 WebP를 내려 주십시오.") == 0
    assert direction("아티팩트를 내려받아 다시 돌려 주십시오.") == 0
    up = _finding("F1", "sec-bot", "`web/.nvmrc`를 Node 22 LTS로 올려야 합니다.")
    up.status = FindingStatus.FIXED
    down = _finding("F2", "build-bot", "`.nvmrc`를 다시 `node:18`로 내려야 합니다.")
    assert reverses(down, up)


def test_review_cases_a_merge_conflict_a_real_claim_a_kept_change_and_retries_governed() -> None:
    from bot.owner_turn import declared_conflict

    perf = Finding(label="F1", author="perf-bot", summary="", anchors=["code:pool_size"],
                   terms=["pool", "size", "raise"])
    sec = Finding(label="F2", author="sec-bot", summary="", anchors=["code:pool_size"],
                  terms=["pool", "size", "lower"])
    # No reviewers' disagreement: a merge conflict, an upsert, a rebase.
    for text in ("STEP_DONE\nRebased on main and resolved the merge conflict in `README.md`; "
                 "working on both points now.",
                 "`main`과 충돌이 나서 리베이스했습니다. 두 요청 모두 작업 중입니다.",
                 "Upsert now uses `ON CONFLICT (id) DO UPDATE`; both points are next."):
        assert declared_conflict([perf, sec], [text]) is None, text
    # A claim that names in code something of one side only is about that side.
    assert declared_conflict([perf, sec], ["I can't do both: `retry_budget` conflicts."]) is None
    # Real claims stay claims.
    assert declares_conflict("This looks like a real conflict: F1 and F2 cannot both be met.")
    assert declares_conflict("F1과 F2는 충돌합니다. 둘 다 반영 가능한 방법이 없습니다.")
    assert declared_conflict([perf, sec], ["두 분 요청이 반대라서 `pool_size`는 대기하겠습니다."]) == (
        "F1", "F2")
    # "지금처럼 …이면 …바꿔 주세요" asks a change; "바꾸지 말아" keeps it.
    assert "^@created_at" not in setting_values(
        "`created_at`은 지금처럼 문자열이면 정렬이 깨지니 정수로 바꿔 주세요.")
    assert "~@created_at" not in setting_values("`created_at`을 다른 형식으로 바꾸지 말아 주세요.")
    assert "~@created_at" not in setting_values("`created_at`을 정수로 변경하면 안 됩니다.")
    # The refusal must govern the retry.
    for text in ("Don't drop the message, retry it up to 3 times.",
                 "Please disable the alert and retry the job up to 3 times."):
        assert "+@~retry" in setting_values(text), text
    # A clause with a figure is a point even beside "이견 없습니다".
    assert reviewer_clause("스키마 쪽은 이견 없습니다만 풀 크기는 20으로 늘려 주세요.").act is Act.FINDING
    from bot import wording as w
    assert w.THE_COMMIT.match("That commit only touches the docs.")
    assert setting_values("`ts`는 `2024-05-01T09:00:00-05:00`이어야 합니다.") == {
        "=2024-05-01t09:00:00-05:00@ts"}


def test_a_cache_key_is_one_name_not_a_key_and_its_value() -> None:
    assert setting_values("`user:profile` TTL은 3600초로 늘려 주세요.") == {"3600초@user:profile"}
    assert setting_values("`Cache-Control: no-store`로 바꿔 주세요.") == {"=no-store@cache-control"}
    assert "code:user:feed:{user_id}" in topic("`user:feed:{user_id}` 캐시").anchors
    longer = _finding("F1", "perf-bot", "`user:profile` TTL은 3600초로 늘려 주세요.")
    shorter = _finding("F2", "data-bot", "`user:feed:{user_id}` TTL은 60초로 줄여 주세요.")
    same = _finding("F3", "data-bot", "`user:profile` TTL은 60초로 줄여 주세요.")
    assert not reverses(shorter, longer) and reverses(same, longer)


def test_a_fix_reported_for_a_silent_reviewer_stays_open_and_undoing_it_is_a_contradiction() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "신규 체크아웃 플로우를 feature flag 뒤에 넣어 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`flags/checkout.yaml`에 `new_checkout_enabled: false`를 추가했습니다.")
    sim.say(Role.REVIEWER, "DONE_WITH_CONCERNS\nproduction에서는 `new_checkout_enabled`가 `true`여야 합니다.",
            author="product-bot")
    sim.say(Role.OWNER, "STEP_DONE\n- production `new_checkout_enabled: true`로 변경 (commit d7e3a90)")
    # product-bot stays silent: only it can say the fix holds, so its point
    # stays open; but the change is made, and sre-bot asks it undone.
    sim.say(Role.REVIEWER, "DONE_WITH_CONCERNS\n- production의 `new_checkout_enabled: true` 변경은 "
                           "되돌려야 합니다.", author="sre-bot")
    sim.end()
    first = next(f for f in sim.state.findings if f.author == "product-bot")
    assert first.status is FindingStatus.OPEN
    assert [d.trigger for d in sim.deadlocks()] == [Trigger.CONTRADICTION]


def test_a_silent_reviewer_s_untouched_finding_stays_open() -> None:
    findings = [_finding("F1", "product-bot", "`new_checkout_enabled`는 `true`여야 합니다."),
                _finding("F2", "qa-bot", "on/off 테스트를 추가해 주세요.")]
    out = judge_round(findings, [("qa-bot", ["테스트 확인했습니다."])],
                      {"F1": OwnerAction.UNTOUCHED, "F2": OwnerAction.FIX}, 2)
    assert findings[0].status is FindingStatus.OPEN and out.fixed == ["F2"]


def test_a_name_in_code_in_an_acknowledgement_asks_nothing() -> None:
    # `NOT NULL` holds "not …", which is no request.
    assert reviewer_clause("`NOT NULL` 제약 확인했습니다.").act is Act.ACK
    assert reviewer_clause("마스킹이 올바르게 적용되었습니다.").act is Act.ACK
    assert reviewer_clause("마스킹이 제대로 적용되지 않았습니다.").act is not Act.ACK
    assert reviewer_clause("`NOT NULL` 제약 확인했습니다. 다만 인덱스를 추가해야 합니다.").act is Act.FINDING


def test_removing_a_call_another_reviewer_asked_for_reverses_it() -> None:
    assert setting_values("`src/billing/logging.py`의 `mask_pii()` 호출은 제거해야 합니다.") == {
        "-@mask_pii"}
    mask = _finding("F1", "privacy-bot", "`email`은 `mask_pii()`로 마스킹해야 합니다.")
    mask.status = FindingStatus.FIXED
    gone = _finding("F2", "ops-bot", "`src/billing/logging.py`의 `mask_pii()` 호출은 제거해야 합니다.")
    assert reverses(gone, mask)


def test_a_setting_asked_back_to_its_old_value_in_words_reverses_a_fixed_finding() -> None:
    assert "~back" in asked_verbs("Please put the login limit back to 20 per minute.")
    assert "~back" in asked_verbs("최소 길이는 원래대로 8자로 돌려야 합니다.")
    assert "~back" not in asked_verbs("Please add a test for the login limit.")
    tight = _finding("F1", "sec-bot", "The login limit is far too loose. It should be 5 attempts "
                     "per minute per IP.")
    tight.status = FindingStatus.FIXED
    back = _finding("F2", "support-bot", "Five a minute locks out every office behind a NAT. "
                    "Please put the login limit back to 20 per minute.")
    assert reverses(back, tight)
    # Still open (no fix to undo), or back on something else, or with no value: no reversal.
    tight.status = FindingStatus.OPEN
    assert not reverses(back, tight)
    tight.status = FindingStatus.FIXED
    other = _finding("F3", "support-bot", "Please put the upload size limit back to 20 MB.")
    assert not reverses(other, tight)
    vague = _finding("F4", "support-bot", "Please put the login limit back to what it was.")
    assert not reverses(vague, tight)
    longer = _finding("F1", "sec-bot", "비밀번호 최소 길이는 8자가 아니라 12자여야 합니다.")
    longer.status = FindingStatus.FIXED
    shorter = _finding("F2", "ux-bot", "최소 길이 12자는 가입 전환율을 떨어뜨립니다. 최소 길이는 원래대로 "
                       "8자로 돌려야 합니다.")
    assert reverses(shorter, longer)


def _same_test_room(errors: list[str]) -> Sim:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "주소 테이블 분리 마이그레이션을 작성해 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`migrations/0042_split_address.py` 작성했습니다.")
    for n, error in enumerate(errors):
        lead = "CI에서" if n == 0 else "다만 같은"
        sim.say(Role.REVIEWER, f"{lead} `test_backfill`이 실패합니다.\n```\n{error}: row 17\n```")
        sim.say(Role.OWNER, f"STEP_DONE\n백필 조건을 고쳤습니다 (commit `{n + 1}a2f8d3`).")
    return sim


def test_the_same_test_failing_with_a_new_error_each_round_is_progress() -> None:
    from bot.textscan import errors_beside

    shown = "`IntegrityError`는 사라졌습니다. 같은 테스트가 실패합니다.\n```\nAssertionError: 1187\n```"
    assert errors_beside(shown, "같은 테스트가 실패합니다.") == {"AssertionError"}
    assert errors_beside("`t` fails:\n```\nKeyError: 'x'\n(the fence never closes", "`t` fails:") == set()
    # Only the fence beside the point: the next point's output is its own.
    two = "1. `test_a` still fails.\n2. `test_b` now fails:\n```\nKeyError: 'amount'\n```"
    assert errors_beside(two, "`test_a` still fails.") == set()
    assert errors_beside(two, "`test_b` now fails:") == {"KeyError"}
    moving = _same_test_room(["IntegrityError", "AssertionError", "UnicodeEncodeError"])
    assert moving.deadlocks() == []
    assert [f.status for f in moving.state.findings] == [
        FindingStatus.FIXED, FindingStatus.FIXED, FindingStatus.OPEN]
    # The same error each time: the owner's fixes do not hold.
    stuck = _same_test_room(["IntegrityError", "IntegrityError", "IntegrityError", "IntegrityError"])
    assert [d.trigger for d in stuck.deadlocks()] == [Trigger.NO_PROGRESS]


def test_not_convinced_is_no_withdrawal_and_the_same_error_is_said_again() -> None:
    assert reviewer_clause("I'm convinced, dropping it.").act is Act.WITHDRAW
    for text in ("Still not convinced on the `remote_addr` key, it needs to come from the "
                 "forwarded client IP.", "I'm not convinced on 1: a dead endpoint pins a worker."):
        assert reviewer_clause(text).act is not Act.WITHDRAW, text
    assert restates("`test_retry_backoff`가 같은 `TimeoutError: worker did not ack`로 떨어집니다.")
    assert restates("It fails with the same `KeyError: 'tenant'`.")
    assert not restates("같은 `test_backfill`이 이번엔 다른 이유로 실패합니다.")


def test_the_remainder_of_a_sum_selects_no_point() -> None:
    # "나머지" is "the rest" of the points, but not the remainder of a division.
    assert selectors("나머지는 아직 그대로입니다.")[1]
    assert not selectors("10,000원을 3건으로 나눠 환불할 때 1원 단위 나머지를 버리고 있습니다.")[1]
    assert reviewer_clause("나머지 배분은 맞게 되었습니다.").act is Act.ACK
    assert reviewer_clause("정렬이 맞게 됐는지 확인 부탁드립니다.").act is not Act.ACK


def test_what_a_verification_lists_after_its_colon_is_no_request() -> None:
    assert reviewer_clause("Verified `9c3e77a`: no email in the payload and IPs are truncated.").act \
        is Act.ACK
    assert reviewer_clause("Verified `9c3e77a`: the email is still in the payload.").act is not Act.ACK


def test_a_name_logged_again_reverses_a_name_that_must_not_be_logged() -> None:
    assert setting_values("`user_email` must not be written to the audit log; it's PII.") == {
        "-@user_email"}
    assert setting_values("`AuditEvent` needs to log `user_email` again.") == {"+@user_email"}
    never = _finding("F1", "privacy-bot", "`user_email` must not be written to the audit log; "
                     "log `user_id` only.")
    never.status = FindingStatus.FIXED
    again = _finding("F2", "support-bot", "`AuditEvent` needs to log `user_email` again.")
    other = _finding("F3", "support-bot", "`AuditEvent` needs to log `ticket_id` again.")
    assert reverses(again, never) and not reverses(other, never)


def test_not_to_be_changed_into_what_another_reviewer_asks_reverses_it() -> None:
    assert prohibited("locale별 포맷으로 바꾸지 말아 주십시오.") == {"포맷"}
    by_locale = _finding("F1", "i18n-bot", "`formatDate`는 사용자 locale에 따라 "
                         "`Intl.DateTimeFormat(locale)`로 포맷해야 합니다.")
    fixed = _finding("F2", "qa-bot", "`formatDate`는 locale과 무관하게 항상 `'YYYY.MM.DD'`를 반환해야 "
                     "합니다. locale별 포맷으로 바꾸지 말아 주십시오.")
    assert reverses(fixed, by_locale)


def test_in_the_request_against_out_of_it_on_one_function_is_a_contradiction() -> None:
    assert setting_values("`send_receipt()` has to run synchronously inside the checkout "
                          "transaction.") == {"+@~sync"}
    assert setting_values("Move `send_receipt()` out of the web process: enqueue it as a Celery "
                          "task and let checkout return without waiting for it.") == {"-@~sync"}
    # Both ways, or refused: no stance. (`sync.py` is a name, not a way to run.)
    assert setting_values("Don't make `send_receipt()` async.") == set()
    assert setting_values("Please call `sync.py` from the background worker.") == {"-@~sync"}
    later = _finding("F1", "perf-bot", "Move `send_receipt()` out of the web process: enqueue "
                     "it as a Celery task.")
    now = _finding("F2", "billing-bot", "`send_receipt()` has to run synchronously inside the "
                   "checkout transaction.")
    other = _finding("F3", "billing-bot", "`send_invoice()` has to run synchronously.")
    assert reverses(now, later) and not reverses(other, later)


def test_one_setting_restricted_to_one_value_against_the_wildcard() -> None:
    assert setting_values("`CORS_ALLOWED_ORIGINS`는 `https://app.example.com` 하나로만 제한해 "
                          "주세요.") == {"=https://app.example.com@cors_allowed_origins"}
    one = _finding("F1", "sec-bot", "`CORS_ALLOWED_ORIGINS`는 `https://app.example.com` 하나로만 "
                   "제한해 주세요.")
    star = _finding("F2", "partner-bot", "`CORS_ALLOWED_ORIGINS`를 `*`로 열어 주세요.")
    assert reverses(star, one)


def test_two_new_names_for_one_name_are_two_values() -> None:
    assert setting_values("Please rename `darkMode` to `FF_DARK_MODE`.") == {"=ff_dark_mode@darkmode"}
    assert setting_values("`darkMode` 키를 `FF_DARK_MODE`로 바꾸지 말아 주세요.") == set()
    lint = _finding("F1", "lint-bot", "`darkMode` 플래그 키를 `settings.dark_mode_enabled`로 바꿔 "
                    "주세요.")
    ops = _finding("F2", "ops-bot", "`darkMode` 플래그 키를 `FF_DARK_MODE`로 바꿔 주세요.")
    same = _finding("F3", "ops-bot", "`darkMode` 플래그 키를 `settings.dark_mode_enabled`로 바꿔 "
                    "주세요.")
    assert reverses(ops, lint) and not reverses(same, lint)


def test_both_over_the_names_of_two_open_points_repeats_them() -> None:
    findings = [
        _finding("F1", "flag-review", "`templates/checkout/summary.html`에 `{% if flags.new_checkout_v2 %}` "
                 "분기가 남아 있습니다. 템플릿에서도 제거해야 합니다."),
        _finding("F2", "flag-review", "`tests/checkout/test_legacy.py`가 skip 처리로만 남아 있습니다. "
                 "테스트 파일을 삭제해야 합니다."),
    ]
    out = judge_round(findings, [("flag-review", [
        "템플릿에 남은 `flags.new_checkout_v2` 분기와 skip된 `test_legacy.py`, 이 두 가지는 이번 PR에서 "
        "정리되어야 합니다."])], {"F1": OwnerAction.DECLINE, "F2": OwnerAction.DECLINE}, 2)
    assert out.raised == [] and [f.stall for f in findings] == [1, 1]


def test_going_up_to_a_value_is_no_cap() -> None:
    assert setting_values("The default `jpeg_quality` needs to go up to 90, not down.") == {
        "90@jpeg_quality"}
    assert "<=90@" in setting_values("Allow up to 90 connections.")
    low = _finding("F1", "perf-bot", "Set the default `jpeg_quality` to 70.")
    high = _finding("F2", "brand-bot", "The default `jpeg_quality` needs to go up to 90, not down.")
    assert reverses(high, low)


def test_not_setting_a_name_against_a_value_for_it() -> None:
    assert setting_values("`collapse_key`는 설정하지 말고 세 알림을 모두 개별로 전달해야 합니다.") == {
        "-@collapse_key"}
    value = _finding("F1", "perf-bot", "`collapse_key`를 `order_{order_id}`로 설정해 마지막 상태만 "
                     "전달되게 해야 합니다.")
    none = _finding("F2", "product-bot", "`collapse_key`는 설정하지 말고 세 알림을 모두 개별로 "
                    "전달해야 합니다.")
    other = _finding("F3", "product-bot", "`ttl`은 설정하지 말고 기본값을 써야 합니다.")
    assert reverses(none, value) and not reverses(other, value)


def test_two_new_names_for_a_dotted_field() -> None:
    web = _finding("F1", "api-bot", "`Profile.name`을 `displayName`으로 바꿔 주세요.")
    app = _finding("F2", "mobile-bot", "`Profile.name`을 `userName`으로 바꿔 주세요.")
    agree = _finding("F3", "mobile-bot", "`Profile.name`을 `displayName`으로 바꿔 주세요.")
    assert reverses(app, web) and not reverses(agree, web)


def test_a_reviewer_named_as_not_acceptable_is_opposed() -> None:
    gapless = _finding("F1", "finance-bot", "발행 취소가 있어도 번호에 결번이 없어야 합니다.")
    gaps = Finding(label="F2", author="dba-bot", summary="",
                   terms=sorted(topic("결번은 허용하고 사유를 남겨야 합니다.").terms),
                   **demands_of("결번은 허용해야 합니다. finance-bot이 말한 결번 없는 채번은 이 "
                                "트래픽에서는 받아들일 수 없습니다.", {"finance-bot"}))
    assert gaps.opposes == ["finance-bot"] and reverses(gaps, gapless)
    unrelated = Finding(label="F3", author="dba-bot", summary="", terms=["인덱스"],
                        **demands_of("finance-bot이 말한 방식은 받아들일 수 없습니다.", {"finance-bot"}))
    assert not reverses(unrelated, gapless)


def test_bringing_back_a_step_another_reviewer_got_removed() -> None:
    removed = _finding("F1", "ux-bot", "Typing DELETE into the modal is awkward on phones. Replace the "
                       "typed confirmation with a plain red \"Delete my account\" button.")
    removed.status = FindingStatus.FIXED
    back = _finding("F2", "legal-bot", "The dialog has to require an explicit typed confirmation, a "
                    "single button is too easy to hit. Please bring back the type-DELETE step in the "
                    "modal of the account page.")
    elsewhere = _finding("F3", "legal-bot", "Please bring back the export button on the invoices page.")
    assert reverses(back, removed) and not reverses(elsewhere, removed)


def test_a_unit_shared_by_two_dotted_names_is_no_shared_setting() -> None:
    fewer = _finding("F1", "stream-bot", "`max.poll.interval.ms`만 늘리면 안 됩니다. `max.poll.records` 를 "
                     "500 에서 100 으로 줄여 주십시오.")
    longer = _finding("F2", "sre-bot", "`session.timeout.ms` 는 45000 으로 올려 주십시오.")
    assert not reverses(longer, fewer)


def test_a_file_and_a_route_may_be_one_place() -> None:
    from bot.places import same_place

    assert same_place(["path:openapi.yaml"], ["code:/v2/profile"])
    assert not same_place(["path:staging.env"], ["path:prod.env"])
    assert same_place(["path:x.yaml", "code:/api"], ["path:y.yaml", "code:/api"])
    renamed = _finding("F1", "api-bot", "응답 필드 `userId` 를 `accountId` 로 이름을 바꿔 주십시오 "
                       "(`openapi.yaml` 포함).")
    renamed.status = FindingStatus.FIXED
    back = _finding("F2", "compat-bot", "`/v2/profile` 은 구버전 앱이 씁니다. 필드명은 `userId` 로 "
                    "되돌려 주십시오.")
    assert reverses(back, renamed)


def test_a_cron_schedule_moved_to_another_time() -> None:
    assert setting_values("`schedule` 을 새벽 3시(`0 3 * * *`)로 옮겨 주십시오.") == {
        "=0 3 * * *@schedule"}
    three = _finding("F1", "ops-bot", "`schedule` 을 새벽 3시(`0 3 * * *`)로 옮겨 주십시오.")
    one = _finding("F2", "data-bot", "`schedule` 은 새벽 1시(`0 1 * * *`)로 해 주셔야 합니다.")
    assert reverses(one, three)


def test_a_radius_in_kilometres_is_a_value() -> None:
    assert setting_values("기본 반경은 15km 로 해 주십시오.") == {"15km@"}
    three = _finding("F1", "search-bot", "`DEFAULT_RADIUS_KM` 를 3 으로 줄여 주십시오.")
    three.status = FindingStatus.FIXED
    wider = _finding("F2", "product-bot", "`DEFAULT_RADIUS_KM` 이 부분은 받아들이기 어렵습니다. 기본 반경은 "
                     "15km 로 해 주십시오.")
    assert reverses(wider, three)


def test_not_putting_in_what_another_reviewer_asks_added_in_words() -> None:
    assert "~add" in prohibited("고객 주소는 인보이스 PDF 에 넣지 말아 주십시오.")
    assert "~add" in asked_verbs("현재 템플릿에 고객 주소가 없으니 추가해 주십시오.")
    add = _finding("F1", "finance-bot", "공급받는 자의 사업장 주소가 인보이스에 반드시 들어가야 합니다. 현재 "
                   "템플릿에 고객 주소가 없으니 추가해 주십시오.")
    keep_out = _finding("F2", "privacy-bot", "그리고 고객 주소는 인보이스 PDF 에 넣지 말아 주십시오.")
    # Only the polite ending in common: another thing.
    other = _finding("F3", "privacy-bot", "로그에는 전화번호를 넣지 말아 주십시오.")
    assert reverses(keep_out, add) and not reverses(other, add)


# -- from an independent review of the rules above: wordings they misread -----


def _fixed(label: str, author: str, text: str) -> Finding:
    finding = _finding(label, author, text)
    finding.status = FindingStatus.FIXED
    return finding


def test_review_negations_and_conditions_are_no_presence() -> None:
    assert setting_values("Agreed on the audit log: we must never log `user_email` again.") == set()
    assert setting_values("`mask_pii()` 호출은 제거하지 마세요.") == set()
    agree = _finding("F1", "b", "Agreed on the audit log: we must never log `user_email` again.")
    remove = _finding("F2", "a", "Remove `user_email` from the audit log payload.")
    assert not reverses(agree, remove)
    same = _finding("F1", "b", "`collapse_key`를 `order_{order_id}`로 설정해 주세요.")
    unless = _finding("F2", "a", "`collapse_key`를 설정하지 않으면 알림이 쌓이니 `collapse_key`를 "
                      "`order_{order_id}`로 설정해 주세요.")
    assert not reverses(same, unless)


def test_review_falling_back_and_keeping_as_before_undo_nothing() -> None:
    assert "~back" not in asked_verbs("When `fetch_price()` times out, it should fall back to the "
                                      "cached price.")
    assert "~back" not in asked_verbs("`export_csv()`의 컬럼 순서는 이전처럼 유지해 주세요.")
    timeout = _fixed("F1", "a", "`fetch_price()` has no timeout; add a 2s timeout.")
    fallback = _finding("F2", "b", "When `fetch_price()` times out, it should fall back to the cached "
                        "price.")
    assert not reverses(fallback, timeout)
    # One long word in common is one word, not five.
    start = _fixed("F1", "a", "애플리케이션 시작 시간이 너무 깁니다. 3초 이내로 줄여 주세요.")
    icon = _finding("F2", "b", "애플리케이션 아이콘은 원래대로 돌려 주세요.")
    assert not reverses(icon, start)


def test_review_agreeing_with_a_reviewer_is_no_opposition() -> None:
    for text in ("Agree with sec-bot: we cannot accept unsigned webhook requests. Also check the "
                 "timestamp.", "sec-bot이 지적한 대로 서명 없는 요청은 받아들일 수 없습니다."):
        assert demands_of(text, {"sec-bot"})["opposes"] == [], text


def test_review_a_file_and_a_route_are_one_place_only_for_an_api_contract() -> None:
    from bot.places import same_place

    assert not same_place(["path:nginx/assets.conf"], ["code:/api/"])
    assert same_place(["path:api/openapi.yaml"], ["code:/v2/profile"])
    assert same_place(["env:production"], ["env:production", "path:partners/codegen.yml"])
    off = _finding("F1", "a", "Disable `gzip` for `/api/` responses (BREACH).")
    on = _finding("F2", "b", "Enable `gzip` in `nginx/assets.conf` for the JS bundles.")
    assert not reverses(on, off)


def test_review_syncing_a_file_and_korean_async() -> None:
    assert setting_values("After `export_report()` writes the file, sync it to the S3 bucket.") == set()
    assert setting_values("`send_receipt()`는 비동기로 처리해 주세요.") == {"-@~sync"}
    assert setting_values("`send_receipt()` must run synchronously, so there is no race.") == {
        "+@~sync"}
    # (A way refused is the other asked: not asynchronously, so in the request.)
    assert setting_values("`send_receipt()`를 비동기로 하지 말아 주세요.") == {"+@~sync"}


def test_review_acknowledgements_with_a_spaced_negation_or_a_failure() -> None:
    for text in ("마스킹이 제대로 적용 안 됐습니다.", "제대로 처리 못 했습니다.",
                 "Verified locally: `test_refund` fails on Python 3.12, please pin the version."):
        assert reviewer_clause(text).act is not Act.ACK, text


def test_review_a_request_for_the_same_error_and_the_rest_to_fix() -> None:
    assert not restates("Please raise the same `ValueError` for negative amounts too.")
    assert restates("`test_retry_backoff`가 같은 `TimeoutError: worker did not ack`로 떨어집니다.")
    assert selectors("나머지를 고쳐 주세요.")[1]


def test_review_adding_a_test_is_not_adding_what_another_refuses() -> None:
    test = _finding("F1", "a", "로그에 이메일이 마스킹되는지 검사하는 테스트를 추가해 주세요.")
    no_email = _finding("F2", "b", "애플리케이션 로그에 사용자 이메일을 넣지 마세요.")
    assert not reverses(no_email, test)
    assert "~add" in asked_verbs("인보이스에 고객 주소를 넣어 주십시오.")
    assert "~add" in prohibited("Don't add the customer address to the invoice PDF.")


def test_review_moving_a_function_to_a_file_gives_it_no_value() -> None:
    move = _finding("F1", "a", "`parse_date()`를 `utils/dates.py`로 옮겨 주세요.")
    zone = _finding("F2", "b", "`parse_date()`의 기본 타임존은 `UTC`로 해 주세요.")
    assert not reverses(zone, move)


def test_review_settings_named_by_a_unit_and_caps_and_renames() -> None:
    day = _finding("F1", "a", "Set `retention.ms` to 86400000.")
    week = _finding("F2", "b", "Set `retention.ms` to 604800000.")
    assert reverses(week, day)
    assert "<=30s@request_timeout" in setting_values(
        "`REQUEST_TIMEOUT` should be up to 30 seconds, never more.")
    for text in ("Rename the `darkMode` flag to `FF_DARK_MODE`.",
                 "`darkMode` should be renamed to `FF_DARK_MODE`.",
                 "`darkMode` 플래그는 `FF_DARK_MODE`로 이름을 바꿔 주세요."):
        assert "=ff_dark_mode@darkmode" in setting_values(text), text


def test_review_a_reviewer_cut_by_the_turn_cap_is_not_silent() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "add the cache")
    sim.say(Role.OWNER, "STEP_DONE added the cache (`1a2b3c4`).")
    sim.say(Role.REVIEWER, "CHANGES_REQUESTED\n`cancel_order()` does not evict the cache; cancelled "
                           "orders stay in the list.", author="qa-bot")
    log = "APPROVED\nLoad test output:\n```\n" + "GET /orders 200 912ms\n" * 800 + "```"
    for n in range(3):
        sim.say(Role.OWNER, f"Fixed the eviction in `cancel_order()` (`{n + 2}b3c4d5`).")
        sim.say(Role.REVIEWER, log, author="perf-bot")
        sim.say(Role.REVIEWER, "CHANGES_REQUESTED\n`cancel_order()` still does not evict the cache.",
                author="qa-bot")
    sim.end()
    assert not sim.state.approved
    assert [d.trigger for d in sim.deadlocks()] == [Trigger.NO_PROGRESS]


def test_review_both_over_two_points_names_nothing_new() -> None:
    findings = [
        _finding("F1", "r", "`api/orders.py`의 `list_orders` 핸들러에 페이지 크기 제한이 없습니다."),
        _finding("F2", "r", "`api/orders.py`의 `cancel_order` 핸들러가 캐시를 지우지 않습니다."),
    ]
    out = judge_round(findings, [("r", [
        "`api/orders.py`의 `list_orders`, `cancel_order`, `refund_order` 핸들러는 모두 인증 검사가 "
        "빠져 있습니다."])], {"F1": OwnerAction.DECLINE, "F2": OwnerAction.DECLINE}, 2)
    assert out.raised == ["F3"]


def test_rejecting_values_above_a_number_caps_it_and_a_test_s_inputs_ask_nothing() -> None:
    assert setting_values("`first` must be capped: reject anything above 100.") == {"<=100@first"}
    assert setting_values("`timeout` should be above 30.") == {">=30@timeout"}
    assert setting_values("Add a test that `first: 101` is rejected; I only see the one for 100.") \
        == set()
    # What comes before the test is still asked; the test's input is not.
    kept = setting_values("Keep `MAX_RETRIES = 3`, and add a test that `MAX_RETRIES = 9` is rejected.")
    assert kept and not any("9" in v for v in kept), kept
    cap = _finding("F1", "perf-bot", "`first` must be capped: reject anything above 100.")
    default = _finding("F2", "api-bot", "Default `first` to 20; that's within perf-bot's cap of 100.")
    assert not reverses(default, cap)


def test_a_number_in_groups_of_three_digits_is_one_value() -> None:
    # "3,000원" is three thousand won, not 3 and 000: two reviewers asking
    # 3,000 and 2,000 for one setting no longer share "000".
    assert setting_values("`remote_surcharge`를 2,000원으로 내려 주세요.") == {
        "2000원@remote_surcharge"}
    assert setting_values("Set `MAX_ROWS` to 1,000,000.") == {"1000000@max_rows"}
    anchors = topic("`remote_surcharge`를 3,000원으로 올려야 합니다.").anchors
    assert "num:3000" in anchors and "num:000" not in anchors
    # A list of points is not a number.
    assert selectors("1, 2, and 3 are still open")[0] == (1, 2, 3)


def test_one_value_in_two_units_is_no_contradiction() -> None:
    from bot.quantities import compatible

    assert compatible({"30s"}, {"30초"}) and compatible({"60s"}, {"1m"})
    assert compatible({"3000원"}, {"3000won"})
    assert not compatible({"30s"}, {"31초"}) and not compatible({"2000원"}, {"3000원"})
    pricing = _finding("F1", "pricing-bot", "`remote_surcharge`를 3,000원으로 올려야 합니다.")
    ops = _finding("F2", "ops-bot", "`remote_surcharge`를 2,000원으로 내려 주세요.")
    same = _finding("F3", "ops-bot", "Please set `remote_surcharge` to 3,000 won.")
    assert reverses(ops, pricing) and not reverses(same, pricing)


def test_a_switch_turned_on_against_one_asked_off_is_a_contradiction() -> None:
    assert setting_values("Please turn `LOG_REQUEST_BODIES` back on in prod.") == {
        "+@log_request_bodies"}
    assert setting_values("`LOG_REQUEST_BODIES`는 꺼 주세요.") == {"-@log_request_bodies"}
    assert setting_values("do not turn `X` off") == frozenset()
    assert setting_values("`X`를 켜서 확인했습니다") == frozenset()  # a report, not a request
    # "on" and "true" are one value of a switch.
    assert setting_values("Set `DEBUG` to `on`.") == setting_values("Set `DEBUG` to `true`.")
    off = _finding("F1", "sec-bot", "Set `LOG_REQUEST_BODIES=false` in prod; we are in PCI scope.")
    on = _finding("F3", "support-bot", "Please turn `LOG_REQUEST_BODIES` back on in prod.")
    also_off = _finding("F4", "ops-bot", "Turn `LOG_REQUEST_BODIES` off in prod too.")
    assert reverses(on, off) and not reverses(also_off, off)


def test_asking_not_to_put_a_constraint_in_reverses_asking_to_put_it_in() -> None:
    from bot.demands import asks

    # "…하지 마세요" and "…면 안 됩니다" ask, as "…해 주세요" does.
    assert asks("`NOT NULL`은 이번 마이그레이션에 넣으면 안 됩니다.")
    assert asks("인덱스는 추가하지 마세요.")
    dba = _finding("F1", "dba-bot", "이번 마이그레이션에서 `status_v2`에 `NOT NULL`을 같이 걸어야 합니다.")
    release = _finding("F4", "release-bot", "`NOT NULL`은 이번 마이그레이션에 넣으면 안 됩니다. "
                       "`status_v2`는 nullable로 두고 다음 릴리스로 빼 주세요.")
    also = _finding("F5", "perf-bot", "`status_v2`의 `NOT NULL`은 backfill 뒤에 걸어야 합니다.")
    assert reverses(release, dba) and not reverses(also, dba)


def test_not_exceeding_a_number_is_an_upper_bound() -> None:
    assert setting_values("`PURGE_BATCH_SIZE`는 5000을 넘지 않게 해 주세요.") == {
        "<=5000@purge_batch_size"}
    assert setting_values("`X`는 5000을 초과하지 않도록 해 주세요") == {"<=5000@x"}
    assert setting_values("`X` must not exceed 5000.") == {"<=5000@x"}
    assert setting_values("5000을 넘었습니다") == frozenset()  # a report, not a request


def test_two_quantities_of_two_things_named_in_code_are_no_contradiction() -> None:
    size = _finding("F1", "perf-bot", "`PURGE_BATCH_SIZE=100`이면 왕복이 많습니다. "
                    "배치 크기를 최소 1000 이상으로 올려 주세요.")
    pause = _finding("F3", "db-bot", "배치 사이에 `time.sleep(0.2)`를 넣어 복제본이 따라올 시간을 주세요.")
    cap = _finding("F2", "db-bot", "`PURGE_BATCH_SIZE`는 5000을 넘지 않게 해 주세요.")
    low = _finding("F4", "db-bot", "`PURGE_BATCH_SIZE`는 500 이하로 낮춰 주세요.")
    assert not reverses(pause, size) and not reverses(size, pause)
    assert not reverses(cap, size)  # at least 1000 and at most 5000 both hold
    assert reverses(low, size)


def test_a_setting_said_by_the_last_words_of_its_name_gets_the_other_value() -> None:
    assert setting_values("`session_idle_timeout`을 15분(900초) 이하로 낮춰 주셔야 합니다.") == {
        "<=15분@session_idle_timeout", "<=900초@session_idle_timeout"}
    sec = _finding("F1", "sec-bot", "`session_idle_timeout`을 15분(900초) 이하로 낮춰 주셔야 합니다.")
    ux = _finding("F3", "ux-bot", "다시 로그인하지 않도록 idle timeout을 최소 8시간(28800초)으로 잡아 주시기 바랍니다.")
    agree = _finding("F4", "ops-bot", "idle timeout은 10분 정도면 충분합니다. 600초로 맞춰 주세요.")
    other = _finding("F5", "ops-bot", "request timeout은 최소 60초로 잡아 주세요.")
    assert reverses(ux, sec) and not reverses(agree, sec) and not reverses(other, sec)


def test_a_setting_named_in_code_against_the_same_quantity_in_words() -> None:
    perf = _finding("F1", "perf-bot", "상품 정보는 자주 바뀌지 않으니 `CATALOG_CACHE_TTL`을 "
                    "3600초 이상으로 올려 주세요.")
    ops = _finding("F3", "ops-bot", "재고 수량이 응답에 포함된다면 5분도 깁니다. 상품 캐시 만료 "
                   "시간은 30초로 줄여 주세요.")
    fine = _finding("F4", "ops-bot", "상품 캐시 만료 시간은 2시간으로 맞춰 주세요.")
    assert reverses(ops, perf) and not reverses(fine, perf)
    # Two counts of two things ("40 requests", "10 connections") are no setting.
    dba = _finding("F1", "dba-bot", "파드당 `pool_size + max_overflow`는 10 이하로 줄여 주세요.")
    load = _finding("F3", "perf-bot", "파드당 동시 요청 40에서 커넥션 대기 타임아웃이 0건이어야 합니다.")
    assert not reverses(load, dba)


def test_keep_what_another_asks_gone_and_a_route_under_its_pattern() -> None:
    from bot.places import same_place

    assert setting_values("`GET /v2/orders`의 `page`/`offset` 파라미터는 없애면 안 됩니다.") == {
        "+@offset"}
    api = _finding("F1", "api-bot", "`GET /v2/orders`는 `page`/`offset` 대신 `cursor` 기반 "
                   "페이지네이션으로 바꿔 주십시오.")
    mobile = _finding("F2", "mobile-bot", "`GET /v2/orders`의 `page`/`offset` 파라미터는 없애면 안 됩니다.")
    assert reverses(mobile, api)
    assert same_place(["code:/v2/embed/*"], ["code:/v2/embed"])
    assert same_place(["code:/v2/embed/*"], ["code:/v2/embed/widget"])
    assert not same_place(["code:/v2/embed/*"], ["code:/v2/embedded"])
    assert not same_place(["code:/v2/embed"], ["code:/v2/admin"])
    sec = _finding("F1", "sec-bot", "A wildcard origin on `/v2/embed` is too broad. Replace `'*'` "
                   "with an explicit allowlist read from `PARTNER_ORIGINS`.")
    api2 = _finding("F3", "api-bot", "Do not move `/v2/embed/*` to an allowlist: `origin` has to "
                    "stay `'*'` on these routes.")
    admin = _finding("F4", "api-bot", "`origin` has to stay `'*'` on `/v2/public/*`.")
    assert reverses(api2, sec) and not reverses(admin, sec)


def test_must_not_put_in_a_widget_another_asks_shown() -> None:
    assert setting_values("로그인 폼에 이미지 기반 CAPTCHA(`ImageCaptcha`)를 넣어서는 안 됩니다.") == {
        "-@imagecaptcha"}
    assert setting_values("3회 실패 이후에는 로그인 폼에 `ImageCaptcha` 위젯을 반드시 띄워 주세요.") == {
        "+@imagecaptcha"}
    # (A rate, and "최소" makes it a bound: at least 100 a minute.)
    assert setting_values("`LOGIN_RATE_LIMIT`은 5가 아니라 최소 `100/minute`은 되어야 합니다.") == {
        ">=100/minute@login_rate_limit"}
