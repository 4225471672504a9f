"""Rates read one way in prose and in code.

"5 per minute", "5/min", "5 a minute" and `LIMIT = "5/minute"` are one rate;
two reviewers asking one limit two rates contradict, once the owner's fix has
named the setting the first asked in words."""

from __future__ import annotations

from test_core_detection import Sim

from bot.models import Role
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
