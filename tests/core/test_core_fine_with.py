""""I'm fine with dropping the body. But … has to keep `export_id`": a
reviewer that accepts what another asked done does not reverse it, though its
own request keeps something on the same route. Saying it is *not* fine with
that still contradicts."""

from __future__ import annotations

from test_core_detection import Sim

from bot.demands import accepted
from bot.models import Role


def test_what_a_point_is_fine_with_being_done() -> None:
    assert accepted("I'm fine with dropping the body. But our runbook needs the id.") == {"~drop"}
    assert accepted("No objection to removing the header.") == {"~remov"}
    assert accepted("본문을 빼는 것은 괜찮습니다.") == {"~빼"}
    assert accepted("로그 본문을 삭제하는 것에는 동의합니다.") == {"~삭제"}


def test_not_fine_or_fine_but_is_no_acceptance() -> None:
    assert accepted("I'm not fine with dropping the body.") == frozenset()
    assert accepted("I'm fine with dropping it, but not for the payments route.") == frozenset()
    assert accepted("본문을 빼는 것은 괜찮지 않습니다.") == frozenset()


def _room(second: str) -> Sim:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Add an audit log for admin exports.")
    sim.say(Role.OWNER, "STEP_DONE\nAudit lines for `/admin/export` now carry `admin_id`,"
            " `client_ip` and `request_body`.")
    sim.say(Role.REVIEWER, "`/admin/export` writes `request_body` into the audit log, which"
            " holds customer data. Drop `request_body` from the audit line.", author="sec-bot")
    sim.say(Role.REVIEWER, second, author="ops-bot")
    sim.say(Role.OWNER, "Working on it.")
    sim.end()
    return sim


def test_fine_with_the_other_request_then_keeping_something_else_is_no_contradiction() -> None:
    sim = _room("I'm fine with dropping the body. But the audit line for `/admin/export` has"
                " to keep a searchable `export_id` field.")
    assert sim.deadlocks() == []


def test_not_fine_with_it_still_contradicts() -> None:
    sim = _room("I'm not fine with dropping the body: the audit line for `/admin/export` has"
                " to keep `request_body`.")
    assert [d.after_message for d in sim.contradictions()] == ["m4"]
