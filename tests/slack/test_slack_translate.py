"""Slack payloads -> core types, on the recorded-style fixtures."""

from __future__ import annotations

from adapters.slack import translate
from bot.models import RoomKey
from tests.slack.conftest import fixture

ME = translate.Identity(user_id="UBOT", bot_id="BBOT")


def test_top_level_user_message_opens_its_own_room() -> None:
    event = fixture("event_message_user")["event"]
    msg = translate.incoming_message(event, ME)
    assert msg is not None
    assert msg.room == RoomKey("slack", "C0WATCH", "1732870800.000100")
    assert msg.message_id == "C0WATCH:1732870800.000100"
    assert msg.author_id == "UALICE" and not msg.is_bot
    assert msg.text == "로그인 버그 고쳐줘 <pls>"  # entities unescaped for the core
    assert msg.ts.year == 2024


def test_legacy_bot_message_is_recognised_by_bot_id() -> None:
    msg = translate.incoming_message(fixture("event_message_bot")["event"], ME)
    assert msg is not None and msg.is_bot
    assert msg.author_id == "BOWNER" and "A0OWNER" in msg.author_alt_ids
    assert msg.thread == "1732870800.000100"
    assert msg.author_name == "owner-agent"


def test_app_bot_posting_as_its_bot_user_carries_both_ids() -> None:
    msg = translate.incoming_message(fixture("event_message_app_bot")["event"], ME)
    assert msg is not None and msg.is_bot
    assert msg.author_id == "UREVIEWER" and "BREVIEW" in msg.author_alt_ids
    assert msg.author_name == "reviewer-agent"


def test_edits_deletes_and_own_messages_are_not_for_the_core() -> None:
    assert translate.incoming_message(fixture("event_message_changed")["event"], ME) is None
    assert translate.incoming_message(fixture("event_message_deleted")["event"], ME) is None
    own = dict(fixture("event_message_bot")["event"], bot_id="BBOT")
    assert translate.incoming_message(own, ME) is None
    own_user = dict(fixture("event_message_user")["event"], user="UBOT")
    assert translate.incoming_message(own_user, ME) is None
    join = dict(fixture("event_message_user")["event"], subtype="channel_join")
    assert translate.incoming_message(join, ME) is None


def test_text_from_blocks_when_text_is_empty() -> None:
    event = dict(fixture("event_message_user")["event"], text="")
    msg = translate.incoming_message(event, ME)
    assert msg is not None and msg.text == "로그인 버그 고쳐줘 <pls>"


def test_malformed_events_are_dropped_not_raised() -> None:
    assert translate.incoming_message({"type": "message"}, ME) is None
    assert translate.incoming_message({"type": "message", "channel": "C", "ts": "1"}, ME) is None
    msg = translate.incoming_message(
        {"type": "message", "channel": "C", "ts": "bogus", "user": "U1", "text": None}, ME)
    assert msg is not None and msg.text == ""


def test_button_click_decodes_escalation_and_thread() -> None:
    body = fixture("block_actions")
    click = translate.button_click(body, body["actions"][0], is_platform_admin=True)
    assert click is not None
    assert (click.escalation_id, click.option) == (1, 2)
    assert click.thread == "1732870800.000100" and click.channel == "C0WATCH"
    assert click.user_id == "UALICE" and click.is_platform_admin
    foreign = dict(body["actions"][0], value="something-else", action_id="other")
    assert translate.button_click(body, foreign, is_platform_admin=False) is None


def test_slash_command_mentions_become_plain_ids() -> None:
    body = dict(fixture("slash_command"),
                text="roles owner:<@UOWNER|owner-bot> reviewer:<@UREV> &amp;")
    req = translate.command_request(body, is_platform_admin=False)
    assert req.text == "roles owner:UOWNER reviewer:UREV &"
    assert req.channel == "C0WATCH" and req.user_id == "UALICE" and req.thread is None


def test_message_ids_round_trip() -> None:
    assert translate.split_message_id("C1:123.456", "C9") == ("C1", "123.456")
    assert translate.split_message_id("123.456", "C9") == ("C9", "123.456")
