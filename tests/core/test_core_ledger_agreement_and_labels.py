"""Agreeing with another reviewer's request ("7일로 줄이는 데 이견 없습니다")
is no finding, whatever it names; an owner who answers findings by label
("- F2: `prod.env` → `LOG_LEVEL=WARN`") keeps an unlabelled refusal beside
them ("base stays `INFO`") off those findings."""

from __future__ import annotations

from test_core_ledger_wording import _finding

from bot.finding import OwnerAction
from bot.findings import Act, reviewer_clause
from bot.owner_turn import read_owner


def test_no_objection_is_no_finding() -> None:
    for text in ("법무팀 확인 내용대로 `app-db`는 4.2항 대상이 아니므로 7일로 줄이는 데 이견 없습니다.",
                 "No objection to lowering `BACKUP_RETENTION_DAYS` to 7."):
        assert reviewer_clause(text).act is Act.FACT, text
    # An objection, or a "but" after it, is still a point.
    assert reviewer_clause("`app-db` 보존 기간을 7일로 줄이는 데 이견이 있습니다.").act is Act.FINDING
    assert reviewer_clause("No objection to lowering it, but `ledger-db` must keep 35 days.").act \
        is not Act.FACT


def test_an_unlabelled_refusal_beside_labelled_fixes() -> None:
    staging = _finding("F1", "dev-review", "`deploy/orders-api/staging.env` should set `LOG_LEVEL=DEBUG`.")
    prod = _finding("F2", "sre-review", "`deploy/orders-api/prod.env` should set `LOG_LEVEL=WARN`. "
                                        "Prod INFO volume is 1.1 TB/day in Loki.")
    turn = ("STEP_DONE\n`2b7e9f4`:\n- F1: `staging.env` → `LOG_LEVEL=DEBUG`\n"
            "- F2: `prod.env` → `LOG_LEVEL=WARN`\n- base stays `INFO`; the overlay test now asserts "
            "the effective level per environment")
    assert read_owner([staging, prod], [turn]) == {"F1": OwnerAction.FIX, "F2": OwnerAction.FIX}
    # A refusal that names the finding by label still refuses it.
    refusing = "STEP_DONE\n- F1: `staging.env` → `LOG_LEVEL=DEBUG`\n- F2: not changing prod, it stays `INFO`."
    assert read_owner([staging, prod], [refusing])["F2"] is OwnerAction.DECLINE
