"""Wrong readings an independent review found in the rules added for held-out
93 to 96 (each reproduced by the review, then mended):

- "Set `MAX_RETRIES` to 5 as the default.": "as" is no "a" + "s" (per second);
- "Confirmed it only runs once now, thanks." confirms a limit, it finds none;
- a new point right after a refusal, sharing the refusal's words but saying
  nothing against them, is new;
- "Pulled `7be0d44` and the warning is not there anymore." reports the fix;
- "Switched to `orjson`; this will ship in the next release." is a fix;
- "is already sanitized", "be capped at 100?" report no change;
- "The first in my list is still not fixed." is point 1;
- "5분당 1회" is one per five minutes; "50 rps로" and "50/s로" are rates; "from
  10/s to 50/s" asks 50/s."""

from __future__ import annotations

import pytest
from test_core_detection import Sim
from test_core_readings_93 import refused_lock_room

from bot.finding import FindingStatus
from bot.findings import Act, owner_clause, reviewer_clause
from bot.models import Role
from bot.quantities import compatible
from bot.values import setting_values


@pytest.mark.parametrize("text", [
    "Set `MAX_RETRIES` to 5 as the default.",
    "Keep `POOL_SIZE` at 20 as before.",
])
def test_as_is_no_rate(text: str) -> None:
    assert not any("/second" in value for value in setting_values(text))


def test_the_same_pool_size_as_before_does_not_contradict() -> None:
    sim = Sim(stall_threshold=3)
    sim.say(Role.USER, "Fix the connection pool exhaustion.")
    sim.say(Role.OWNER, "STEP_DONE\nThe pool is 5 connections in `db/pool.py`.")
    sim.say(Role.REVIEWER, "Set `POOL_SIZE` to 20; five is too few.", author="perf-bot")
    sim.say(Role.REVIEWER, "The health check hits the DB every second; make it 10s.",
            author="ops-bot")
    sim.say(Role.OWNER, "`POOL_SIZE = 20` and the health check runs every 10s (`4a1c9e2`).")
    sim.say(Role.REVIEWER, "Confirmed. LGTM", author="perf-bot")
    sim.say(Role.REVIEWER, "Health check works. Keep `POOL_SIZE` at 20 as it is.",
            author="ops-bot")
    sim.say(Role.OWNER, "Thanks.")
    sim.end()
    assert sim.contradictions() == []


@pytest.mark.parametrize("text", [
    "Confirmed it only runs once now, thanks.",
    "The migration runs only once now, as intended. Thanks.",
    "Nothing runs on import anymore, thanks.",
    "이제 관리자일 때만 동작합니다.",
    "Confirmed, the cleanup only runs on the leader now. Thanks.",
])
def test_a_limit_confirmed_is_no_finding(text: str) -> None:
    assert reviewer_clause(text).act is not Act.FINDING


def test_a_confirmed_limit_settles_the_point() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Stop the cleanup job from running on every replica.")
    sim.say(Role.OWNER, "STEP_DONE\nThe cleanup is a cron in `jobs/cleanup.py`.")
    sim.say(Role.REVIEWER, "Every replica runs `cleanup()`; run it on the leader only.")
    sim.say(Role.OWNER, "`cleanup()` now checks `is_leader()` first (`9e1d2c0`).")
    sim.say(Role.REVIEWER, "Confirmed, the cleanup only runs on the leader now. Thanks.")
    sim.say(Role.OWNER, "Thanks.")
    [finding] = sim.state.findings
    assert finding.status is FindingStatus.FIXED


def test_a_new_point_sharing_the_refusals_words_is_new() -> None:
    sim = refused_lock_room("앱에서 버튼을 비활성화한 뒤 취소가 실패하면 버튼이 다시 활성화되지"
                            " 않습니다. 실패 시 버튼을 다시 켜 주세요.")
    assert len(sim.state.findings) == 2


@pytest.mark.parametrize("text", [
    "Pulled `7be0d44` and the warning is not there anymore.",
    "Tested on Safari and the layout doesn't shift anymore.",
])
def test_a_problem_gone_anymore_is_no_finding(text: str) -> None:
    assert reviewer_clause(text).act is not Act.FINDING


@pytest.mark.parametrize("text", [
    "Reviewed the migration and the backfill has no index.",
    "Reviewed the migration and the backfill lacks an index.",
])
def test_reviewed_then_what_is_missing_is_a_finding(text: str) -> None:
    assert reviewer_clause(text).act is Act.FINDING


@pytest.mark.parametrize("text", [
    "Switched to `orjson`; this will ship in the next release.",
    "Moved the check into `middleware.py` so every route will come with it.",
    "`config/prod.yaml`에 반영했고 다음 배포에 나갑니다.",
])
def test_a_change_that_ships_later_is_a_fix(text: str) -> None:
    assert owner_clause(text).act is Act.FIX


def test_a_fix_beside_a_related_promise_fixes_the_point() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Make refunds idempotent.")
    sim.say(Role.OWNER, "STEP_DONE\n`POST /refunds` in `payments/refunds.py`.")
    sim.say(Role.REVIEWER, "A retried request creates a second refund. Honour an"
            " `Idempotency-Key` header.")
    sim.say(Role.OWNER, "Wrapped the handler in `DedupeGuard` (`payments/dedupe.py`), which"
            " replays the stored response for a repeated key (`a1b2c3d`). Purging stale keys"
            " will come with the cleanup job next sprint.")
    sim.say(Role.REVIEWER, "Please also add a test for the retried refund.")
    sim.say(Role.OWNER, "Added `test_retried_refund` (`b2c3d4e`).")
    sim.end()
    assert sim.state.findings[0].status is FindingStatus.FIXED
    assert len(sim.state.findings) == 2


@pytest.mark.parametrize("text", [
    "The input is already sanitized by the ORM, so there is nothing to add.",
    "The value is already clamped by the DB constraint.",
    "Should `page_size` be capped at 100 or 500?",
])
def test_a_state_is_no_fix(text: str) -> None:
    assert owner_clause(text).act is not Act.FIX


@pytest.mark.parametrize("text", [
    "The first in my list is still not fixed.",
    "The first on my list still fails.",
    "First, then: the retry still double-charges.",
])
def test_the_first_in_a_list_is_point_one(text: str) -> None:
    assert reviewer_clause(text).ordinals == (1,)


def test_korean_rates_per_several_units_and_before_particles() -> None:
    assert setting_values("`RATE_LIMIT`는 5분당 1회로 해 주세요.") == {"12/hour@rate_limit"}
    assert setting_values("`RATE_LIMIT`는 10초당 1회로 해 주세요.") == {"6/minute@rate_limit"}
    assert setting_values("`RATE_LIMIT`를 50 rps로 낮춰 주세요.") == {"50/second@rate_limit"}
    assert setting_values("`RATE_LIMIT`를 50/s로 낮춰 주세요.") == {"50/second@rate_limit"}
    assert setting_values("`RATE_LIMIT`를 50/minute로 낮춰 주세요.") == {"50/minute@rate_limit"}
    assert setting_values("Raise `RESET_RATE_LIMIT` from 10/s to 50/s.") == {
        "50/second@reset_rate_limit"}
    assert compatible({"12/hour"}, {"0.2/minute"})
    assert compatible({"0.7/minute"}, {"42/hour"})
    assert not compatible({"12/hour"}, {"1/minute"})
