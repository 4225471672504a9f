"""Settings named in camelCase, as JavaScript and TypeScript code names them.

`sessionTimeoutMs` counts in milliseconds as `SESSION_TIMEOUT_MS` does, and
"the session timeout" in words names it; anchors keep names lowercased
(`sessiontimeoutms`), so the unit and the words are read from the name as
written, or from where two known words meet."""

from __future__ import annotations

from test_core_detection import Sim

from bot.models import Role
from bot.setting_names import name_words
from bot.values import name_unit, setting_values


def test_a_camel_case_name_ends_in_its_unit() -> None:
    assert setting_values("Please set `pollIntervalMs: 90_000` in `app.config.ts`.") == {
        "90000ms@pollintervalms"}
    assert setting_values("Set `retryDelaySeconds = 30` in the worker config.") == {
        "30s@retrydelayseconds"}
    assert name_unit("sessionTimeoutMs") == "ms"
    assert name_unit("SESSION_TTL_SECONDS") == "s"


def test_a_word_ending_like_a_unit_is_no_unit() -> None:
    # `pollItems`, `maxTerms`: "…ms" and "…s" end words here, not units.
    assert name_unit("pollItems") is None
    assert name_unit("maxTerms") is None
    assert setting_values("Set `pollItems` to 30.") == {"30@pollitems"}


def test_a_name_run_together_splits_where_two_known_words_meet() -> None:
    assert name_words("idletimeoutms") == ["idle", "timeout"]
    assert name_words("cache_ttl") == ["cache", "ttl"]
    assert name_words("verbosity") == ["verbosity"]  # one word, kept


def _room(second: str) -> Sim:
    sim = Sim(stall_threshold=3)
    sim.say(Role.USER, "Log users out of the admin console after some idle time.")
    sim.say(Role.OWNER, "STEP_DONE\nAdded `AdminIdleGuard`; the timeout comes from"
            " `admin.config.ts` (`idleTimeoutMs`, now 1_800_000).")
    sim.say(Role.REVIEWER, "The admin console can delete tenants. The idle timeout must be"
            " 10 minutes at most; half an hour is far too long.", author="sec-bot")
    sim.say(Role.REVIEWER, second, author="ops-bot")
    sim.say(Role.OWNER, "Both noted; waiting for the two of you to agree before I change it.")
    sim.end()
    return sim


def test_the_same_camel_case_setting_asked_in_minutes_and_in_ms_contradicts() -> None:
    # 5,400,000 ms is 90 minutes, which "10 minutes at most" is not.
    sim = _room("On-call admins keep a console open all night. Please set"
                " `idleTimeoutMs: 5_400_000` in `admin.config.ts`.")
    assert [d.after_message for d in sim.contradictions()] == ["m4"]


def test_values_in_ms_that_meet_the_bound_do_not_contradict() -> None:
    # 480,000 ms is 8 minutes: both can hold.
    sim = _room("Please set `idleTimeoutMs: 480_000` in `admin.config.ts` so the"
                " warning dialog has time to show.")
    assert sim.contradictions() == []


def test_another_kind_of_timeout_in_camel_case_is_another_setting() -> None:
    # A connect timeout is not the idle timeout, however long each is asked.
    sim = _room("The upstream is slow to accept connections. Please set"
                " `connectTimeoutMs: 5_400_000` in `admin.config.ts`.")
    assert sim.contradictions() == []
