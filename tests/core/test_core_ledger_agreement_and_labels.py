"""Agreeing with another reviewer's request ("7일로 줄이는 데 이견 없습니다")
is no finding, whatever it names; an owner who answers findings by label
("- F2: `prod.env` → `LOG_LEVEL=WARN`") keeps an unlabelled refusal beside
them ("base stays `INFO`") off those findings; an approving reviewer's
evidence ("LGTM — staging pods show `LOG_LEVEL=DEBUG`") is no point."""

from __future__ import annotations

from test_core_ledger_wording import _finding

from bot.finding import OwnerAction
from bot.findings import Act, reviewer_clause
from bot.ledger import judge_round
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


def test_an_approving_reviewers_evidence_is_no_point() -> None:
    staging = _finding("F1", "dev-review", "`deploy/orders-api/staging.env` should set `LOG_LEVEL=DEBUG`.")
    prod = _finding("F2", "sre-review", "`deploy/orders-api/prod.env` should set `LOG_LEVEL=WARN`.")
    turns = [("dev-review", ["LGTM — staging pods show `LOG_LEVEL=DEBUG` (`kubectl -n orders-staging "
                             "exec deploy/orders-api -- env | grep LOG_LEVEL`)."]),
             ("sre-review", ["The `uvicorn.access` logger ignores `LOG_LEVEL`; set it to WARN for prod."])]
    owner = {"F1": OwnerAction.FIX, "F2": OwnerAction.FIX}
    findings = [staging.model_copy(deep=True), prod.model_copy(deep=True)]
    out = judge_round(findings, turns, owner, 2, approving=frozenset({"dev-review"}))
    assert [f.author for f in findings if f.label not in ("F1", "F2")] == ["sre-review"]
    assert out.events["F1"] == "fixed"
    # Not approving, the same statement is a point of its own.
    findings = [staging.model_copy(deep=True), prod.model_copy(deep=True)]
    judge_round(findings, [("dev-review", ["Staging pods show `LOG_LEVEL=INFO` (`kubectl exec`)."])],
                owner, 2)
    assert len(findings) == 3
