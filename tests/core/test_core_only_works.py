"""A success somewhere is what is wrong elsewhere; courtesy asks nothing.

"It passes in CI only.", "The export only works in Chrome.", "Nothing works
on staging." and "로컬에서만 통과합니다" each state a problem, as "the
backfill is not idempotent" does after "Reviewed the migration and". "I'd like
to thank you for the quick turnaround." asks for nothing."""

from __future__ import annotations

import pytest
from test_core_detection import Sim

from bot.finding import FindingStatus
from bot.findings import Act, reviewer_clause
from bot.models import Role, Trigger


@pytest.mark.parametrize("text", [
    "It passes in CI only.",
    "The export only works in Chrome.",
    "This works only on Linux.",
    "The login works when the cache is warm only.",
    "Nothing works on staging.",
    "로컬에서만 통과합니다.",
    "크롬에서만 동작합니다.",
])
def test_success_in_one_place_is_a_finding(text: str) -> None:
    assert reviewer_clause(text).act is Act.FINDING


@pytest.mark.parametrize("text", [
    "Passes on staging.",
    "Works in CI now, thanks.",
    "The retry works on staging.",
    "Re-ran the suite and it passes.",
])
def test_success_without_a_limit_still_acknowledges_or_reports(text: str) -> None:
    assert reviewer_clause(text).act in (Act.ACK, Act.FACT)


def test_reviewed_then_a_problem_is_a_finding() -> None:
    assert reviewer_clause("Reviewed the migration and the backfill is not idempotent.").act \
        is Act.FINDING
    assert reviewer_clause("Reviewed the migration against the docs.").act is Act.FACT


def test_thanks_in_a_wish_asks_nothing() -> None:
    assert reviewer_clause("I'd like to thank you for the quick turnaround.").act is not Act.FINDING
    assert reviewer_clause("I would like to thank you for the thorough tests.").act \
        is not Act.FINDING
    assert reviewer_clause("I'd like the timeout lowered to 30s.").act is Act.FINDING


def test_passing_in_ci_only_does_not_acknowledge_the_fix() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Make the snapshot tests deterministic.")
    sim.say(Role.OWNER, "STEP_DONE\nSorted the dict keys in `tests/snap/render.py`.")
    sim.say(Role.REVIEWER, "`test_render_invoice` compares a timestamp; please freeze the clock.")
    sim.say(Role.OWNER, "Froze the clock with `freezegun` in `a81c2d0`.")
    sim.say(Role.REVIEWER, "It passes in CI only. On macOS the locale still changes the"
            " decimal separator in `render_amount`.")
    sim.say(Role.OWNER, "Looking at the macOS locale next.")
    # The reviewer holds the point open (or raises the macOS failure beside
    # it): nothing was acknowledged and nothing is closed.
    assert not any("acknowledged" in step for f in sim.state.findings for step in f.history)
    assert all(f.status is FindingStatus.OPEN for f in sim.state.findings)


def test_a_reviewer_repeating_only_works_here_stalls() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Fix the CSV export encoding.")
    sim.say(Role.OWNER, "STEP_DONE\nThe export writes UTF-8 with a BOM now (`c7d1e40`).")
    sim.say(Role.REVIEWER, "The export only works in Excel for Windows. Numbers on macOS shows"
            " mojibake in `export/csv_writer.py`.")
    sim.say(Role.OWNER, "Excel is what finance uses; I'll keep the BOM as it is.")
    sim.say(Role.REVIEWER, "Still: `export/csv_writer.py` output only works in Excel for Windows.")
    sim.say(Role.OWNER, "Not changing it, the BOM is what finance asked for.")
    sim.say(Role.REVIEWER, "The mojibake on macOS Numbers from `export/csv_writer.py` remains.")
    sim.end()
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS
    assert deadlock.after_message == "m7"
