""""X works with Y, thanks": an acknowledgement, whatever X is called.

"Error code works with the form, thanks." names a thing the product shows
("error code"), not a problem; and "only works in Chrome" or "no longer
works" is no acknowledgement."""

from __future__ import annotations

from test_core_detection import Sim

from bot.finding import FindingStatus
from bot.findings import Act, reviewer_clause
from bot.models import Role


def test_works_with_something_then_thanks_acknowledges() -> None:
    assert reviewer_clause("Error code works with the form, thanks.").act is Act.ACK
    assert reviewer_clause("The retry works on staging.").act is Act.ACK
    assert reviewer_clause("Export passes in CI, thank you!").act is Act.ACK


def test_works_only_somewhere_or_no_longer_is_no_acknowledgement() -> None:
    assert reviewer_clause("The export only works in Chrome.").act is not Act.ACK
    assert reviewer_clause("It no longer works with the form.").act is not Act.ACK
    assert reviewer_clause("Nothing works on staging.").act is not Act.ACK
    assert reviewer_clause("It works with the form but breaks the API.").act is not Act.ACK
    assert reviewer_clause("Error messages leak the stack trace.").act is Act.FINDING


def test_the_fixed_point_is_settled_and_the_new_one_raised() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Rate-limit the login endpoint.")
    sim.say(Role.OWNER, "STEP_DONE\nAdded a limiter on `POST /auth/login`.")
    sim.say(Role.REVIEWER, 'The 429 body is a bare `{"detail": "Too Many Requests"}`. The login'
            " form needs a localisable error code.")
    sim.say(Role.OWNER, 'The 429 body is now `{"code": "login_rate_limited"}` (`c41d2e0`).'
            " pytest: 120 passed.")
    sim.say(Role.REVIEWER, "Error code works with the form, thanks.\nOne more: please show the"
            " `retry_after` seconds on the 429 screen.")
    sim.say(Role.OWNER, "Shown now (`d90aa13`).")
    sim.end()
    first = sim.state.findings[0]
    assert first.status is FindingStatus.FIXED
    assert len(sim.state.findings) == 2
