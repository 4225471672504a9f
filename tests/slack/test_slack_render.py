"""Block Kit rendering: Slack's limits, buttons, decisions, and no stray pings."""

from __future__ import annotations

import json
import re

from adapters.slack.render import (
    BUTTON_LABEL_LIMIT,
    MAX_BLOCKS,
    SECTION_LIMIT,
    neutralise,
    render,
    render_plain,
    to_mrkdwn,
)
from bot import buttons
from bot.models import MessageKind, Option, OutgoingMessage

PING = re.compile(r"<(!channel|!here|!everyone|@[UWB][A-Z0-9]+|!subteam\^[A-Z0-9]+)")


def all_text(rendered) -> str:
    return rendered.text + json.dumps(rendered.blocks, ensure_ascii=False)


def verdict(text: str, **kw) -> OutgoingMessage:
    return OutgoingMessage(kind=MessageKind.VERDICT, text=text, **kw)


def test_mentions_in_untrusted_text_are_neutralised() -> None:
    evil = ("ESCALATE <!channel> <!here> <!everyone> <@U999|boss> <!subteam^S123|@devs> "
            "@channel @here ＠everyone & done")
    r = render(verdict(evil))
    assert not PING.search(all_text(r))
    assert "&lt;!channel&gt;" in r.text and "&amp; done" in r.text
    assert "@channel" not in all_text(r) and "@here" not in all_text(r)
    assert all(b["text"]["verbatim"] for b in r.blocks if b["type"] == "section")


def test_only_requested_users_are_pinged() -> None:
    r = render(verdict("decide <@UEVIL>", mention_user_ids=["UALICE", "not-an-id>", "UALICE"]))
    assert PING.findall(all_text(r)) == ["@UALICE", "@UALICE"]  # once in text, once in blocks
    assert r.text.startswith("decide") and r.text.endswith("<@UALICE>")


def test_long_verdict_is_split_across_sections_within_limits() -> None:
    text = "REVISE\n" + "\n".join(f"line {i}: " + "가" * 90 for i in range(100))
    r = render(verdict(text))
    sections = [b for b in r.blocks if b["type"] == "section"]
    assert len(sections) >= 3
    assert all(len(b["text"]["text"]) <= SECTION_LIMIT for b in sections)
    joined = "\n".join(b["text"]["text"] for b in sections)
    assert "line 0:" in joined and "line 99:" in joined
    assert r.text and len(r.text) <= SECTION_LIMIT + 10


def test_escaping_growth_still_fits_a_section() -> None:
    r = render(verdict("&" * 7000))
    assert all(len(b["text"]["text"]) <= SECTION_LIMIT for b in r.blocks)
    assert sum(b["text"]["text"].count("&amp;") for b in r.blocks) == 7000


def test_huge_text_is_truncated_to_fifty_blocks() -> None:
    r = render(verdict("x\n" * 200_000, escalation_id=1,
                       options=[Option(n=1, label="a"), Option(n=2, label="b")]))
    assert len(r.blocks) <= MAX_BLOCKS
    assert r.blocks[-1]["type"] == "actions"
    assert "truncated" in r.blocks[-2]["text"]["text"]


def test_escalate_has_one_button_per_option_with_restart_safe_values() -> None:
    options = [Option(n=1, label="배포 진행"), Option(n=2, label="롤백 " + "x" * 200)]
    r = render(verdict("ESCALATE 결정 필요", escalation_id=42, options=options))
    actions = [b for b in r.blocks if b["type"] == "actions"]
    assert len(actions) == 1
    elements = actions[0]["elements"]
    assert [buttons.decode(e["value"]) for e in elements] == [(42, 1), (42, 2)]
    assert len({e["action_id"] for e in elements}) == 2
    assert all(len(e["text"]["text"]) <= BUTTON_LABEL_LIMIT for e in elements)


def test_decided_message_shows_the_decision_instead_of_buttons() -> None:
    options = [Option(n=1, label="a"), Option(n=2, label="b <!here>")]
    r = render(verdict("ESCALATE", escalation_id=3, options=options, decided=options[1],
                       decided_note="UALICE님이 2026-11-29 10:00 UTC에 결정함 <@UALICE>"))
    assert not any(b["type"] == "actions" for b in r.blocks)
    last = r.blocks[-1]["text"]["text"]
    assert last.startswith("✅ 2. b") and "UALICE님이" in last
    assert not PING.search(all_text(r))


def test_free_text_decision_is_shown_as_is() -> None:
    r = render(verdict("ESCALATE", escalation_id=3, options=[Option(n=1, label="a")],
                       decided=Option(n=0, label="✅ 사용자 결정(자유 입력): 다른 방법")))
    assert r.blocks[-1]["text"]["text"] == "✅ 사용자 결정(자유 입력): 다른 방법"


def test_markdown_bold_and_headings_become_mrkdwn_outside_fences() -> None:
    text = "## 결정\n**PROCEED** now\n```\n**keep**\n```"
    assert to_mrkdwn(text) == "*결정*\n*PROCEED* now\n```\n**keep**\n```"


def test_plain_fallback_keeps_options_readable() -> None:
    r = render_plain(verdict("ESCALATE pick", escalation_id=1,
                             options=[Option(n=1, label="yes"), Option(n=2, label="no")]))
    assert r.blocks == [] and "1. yes" in r.text and "2. no" in r.text


def test_neutralise_is_idempotent_for_plain_text() -> None:
    assert neutralise("plain 한국어 text") == "plain 한국어 text"
