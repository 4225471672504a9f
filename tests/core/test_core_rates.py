"""Rates read one way in prose and in code.

"5 per minute", "5/min", "5 a minute" and `LIMIT = "5/minute"` are one rate;
two reviewers asking one limit two rates contradict, once the owner's fix has
named the setting the first asked in words."""

from __future__ import annotations

from test_core_detection import Sim

from bot.models import Role
from bot.quantities import compatible
from bot.values import setting_values


def test_a_rate_in_words_and_in_code_reads_one_way() -> None:
    assert setting_values("Limit login attempts to 5 per minute per IP.") == {"5/minute@"}
    assert setting_values("`LOGIN_RATE_LIMIT` needs to be 20/minute.") == {
        "20/minute@login_rate_limit"}
    assert "5/minute@login_rate_limit" in setting_values('Set `LOGIN_RATE_LIMIT = "5/minute"`.')
    assert setting_values("Please set it to 5 a minute.") == {"5/minute@"}
    assert setting_values("A rate limit of 100 requests/minute is enough.") == {"100/minute@"}
    assert setting_values("Cap it at 100/sec.") == {"<=100/second@"}


def test_a_count_per_request_is_no_rate_of_time() -> None:
    assert setting_values("Set retries to 3 per request.") == {"3@"}


def _room(second: str) -> Sim:
    sim = Sim(stall_threshold=3)
    sim.say(Role.USER, "Add rate limiting to the password reset endpoint.")
    sim.say(Role.OWNER, "STEP_DONE\nAdded a limiter on `POST /auth/reset`; the limit is a placeholder.")
    sim.say(Role.REVIEWER, "Limit reset requests to 3 per minute per account.", author="sec-bot")
    sim.say(Role.REVIEWER, "The 429 page needs a link back to the login form.", author="ux-bot")
    sim.say(Role.OWNER, 'Done in `4e1f9a2`: `RESET_RATE_LIMIT = "3/minute"` in `auth/limits.py`,'
            " and the 429 page links to the login form. pytest: 118 passed.")
    sim.say(Role.REVIEWER, "Confirmed, 3/minute per account. LGTM", author="sec-bot")
    sim.say(Role.REVIEWER, second, author="ux-bot")
    sim.say(Role.OWNER, "Noted.")
    sim.end()
    return sim


def test_another_rate_for_the_setting_the_fix_named_contradicts() -> None:
    sim = _room("Link works. But shared office IPs hit this all day:"
                " `RESET_RATE_LIMIT` needs to be 10/min.")
    assert [d.after_message for d in sim.contradictions()] == ["m7"]


def test_the_same_rate_written_another_way_does_not_contradict() -> None:
    sim = _room("Link works. Please keep `RESET_RATE_LIMIT` at 3 per minute and add a"
                " test for the fourth request.")
    assert sim.contradictions() == []


def test_a_rate_for_another_setting_does_not_contradict() -> None:
    sim = _room("Link works. While you are there, `SIGNUP_RATE_LIMIT` needs to be 10/min.")
    assert sim.contradictions() == []


def test_one_rate_written_in_other_units_reads_as_one() -> None:
    assert setting_values("`RESET_RATE_LIMIT` needs to be 100 req/s.") == {
        "100/second@reset_rate_limit"}
    assert setting_values("Throttle to 50 rps.") == {"50/second@"}
    assert setting_values("`RESET_RATE_LIMIT` should be 5 rpm.") == {"5/minute@reset_rate_limit"}
    assert setting_values("`RESET_RATE_LIMIT`는 분당 5회로 해야 합니다.") == {
        "5/minute@reset_rate_limit"}
    assert setting_values("`RESET_RATE_LIMIT`는 초당 100회여야 합니다.") == {
        "100/second@reset_rate_limit"}
    assert setting_values("`LIMIT`를 분당 10회 이하로 낮춰 주세요.") == {"<=10/minute@limit"}
    # (A time is no rate: "5 s" to load, "10 s" to retry in.)
    assert setting_values("It took 5 s to load.") == set()
    # (The load a setting was tested under is no value asked for it.)
    assert setting_values("`pool_size` 20이면 200 rps 기준 여유도 충분합니다.") == set()
    assert setting_values("`pool_size` 20이면 200/s 기준 여유도 충분합니다.") == set()


def test_rates_meet_across_units() -> None:
    assert compatible({"60/minute"}, {"1/second"})
    assert compatible({"<=3600/hour"}, {"1/second"})
    assert not compatible({"100/second"}, {"100/minute"})
    assert not compatible({"5/minute"}, {"10/minute"})


def test_the_same_rate_per_second_and_per_minute_does_not_contradict() -> None:
    sim = _room("Link works. Please keep `RESET_RATE_LIMIT` at 0.05/second, which is the same.")
    assert sim.contradictions() == []
    sim = _room("링크 확인했습니다. `RESET_RATE_LIMIT`는 분당 3회로 유지해 주세요.")
    assert sim.contradictions() == []


def test_another_rate_in_korean_contradicts() -> None:
    sim = _room("링크 확인했습니다. 다만 공용 IP에서는 부족합니다: `RESET_RATE_LIMIT`는 분당 10회로"
                " 올려야 합니다.")
    assert [d.after_message for d in sim.contradictions()] == ["m7"]
