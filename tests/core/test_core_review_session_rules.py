"""Wrong readings an independent review found in the rules for held-out 88
to 92 (each checked against the code before the rule), now mended:

- "`A`와 `B`은 같은 설정이 아닙니다" (not one setting) and "같은 값으로
  맞췄습니다" (set to the same value) make no alias;
- "I'm fine with raising the timeout. `IDLE_TIMEOUT` should be 90s" agrees
  on the way, not on the value: against 300s it contradicts;
- "I agree with perf-bot on raising `worker_concurrency`" followed by a value
  of its own for that setting is no agreement with the other value;
- "100/h" is the rate "100 per hour"."""

from __future__ import annotations

from test_core_detection import Sim

from bot.models import Role
from bot.setting_aliases import aliases_said
from bot.values import setting_values


def _pair(owner: str, first: str, second: str) -> Sim:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Tune the service settings.")
    sim.say(Role.OWNER, owner)
    sim.say(Role.REVIEWER, first, author="perf-bot")
    sim.say(Role.REVIEWER, second, author="sec-bot")
    sim.say(Role.OWNER, "Noted.")
    sim.end()
    return sim


def test_two_names_said_not_to_be_one_setting_are_two() -> None:
    assert aliases_said(["`REDIS_DEFAULT_EXPIRE`와 `CACHE_TTL`은 같은 설정이 아닙니다."]) == []
    assert aliases_said(["`A_TTL`과 `B_TTL`은 동일한 값이 아니어도 됩니다."]) == []
    assert aliases_said(["`worker_concurrency`와 `db_pool_size`는 같은 값으로 맞췄습니다 (8)."]) == []
    sim = _pair("STEP_DONE\n`REDIS_DEFAULT_EXPIRE`와 `CACHE_TTL`은 같은 설정이 아닙니다."
                " `REDIS_DEFAULT_EXPIRE`는 세션 저장소에만, `CACHE_TTL`은 응답 캐시에만 쓰입니다.",
                "1. `REDIS_DEFAULT_EXPIRE`는 3600초로 늘려 주세요. 세션 재생성이 너무 잦습니다.",
                "1. `CACHE_TTL`은 60초로 줄여 주세요. 오래된 권한 정보가 캐시에 남습니다.")
    assert sim.contradictions() == []


def test_fine_with_the_way_but_another_value_contradicts() -> None:
    sim = _pair("STEP_DONE\nAdded `IDLE_TIMEOUT` (120s).",
                "1. Raise `IDLE_TIMEOUT` to 300s; long report downloads get cut off.",
                "1. I'm fine with raising the timeout. `IDLE_TIMEOUT` should be 90s so idle"
                " sessions do not linger.")
    assert [d.after_message for d in sim.contradictions()] == ["m4"]


def test_agreeing_on_a_setting_then_asking_it_otherwise_contradicts() -> None:
    sim = _pair("STEP_DONE\nWorkers read `worker_concurrency` (2).",
                "1. Set `worker_concurrency` to 8; the queue backs up at 2.",
                "I agree with perf-bot on raising `worker_concurrency`.\n1. `worker_concurrency`"
                " should be 4 at most: each worker holds ~400MB and the pod limit is 2Gi.")
    assert [d.after_message for d in sim.contradictions()] == ["m4"]


def test_a_rate_per_hour_abbreviated_is_the_same_rate() -> None:
    assert setting_values("Set `LOGIN_RATE_LIMIT` to 100/h; stuffing gets through.") == {
        "100/hour@login_rate_limit"}
    sim = _pair("STEP_DONE\nAdded `LOGIN_RATE_LIMIT`.",
                "1. Set `LOGIN_RATE_LIMIT` to 100/h; credential stuffing gets through otherwise.",
                "1. `LOGIN_RATE_LIMIT` should be 100 per hour so shared office IPs are not"
                " locked out.")
    assert sim.contradictions() == []
