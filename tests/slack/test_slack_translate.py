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


# -- commands from threads: links, the message shortcut, mentions ---------------------

LINK = "https://fake.slack.com/archives/C0WATCH/p1732870800000100"


def test_a_thread_link_names_the_thread_in_any_of_slacks_spellings() -> None:
    reply = "https://fake.slack.com/archives/C0WATCH/p1732870805000200"
    for text, thread in [
        (f"status <{LINK}>", "1732870800.000100"),  # should_escape: links come in <...>
        (f"status <{LINK}|this thread>", "1732870800.000100"),
        (f"status {LINK}", "1732870800.000100"),
        # "Copy link" on a reply: the reply's own ts, its thread in thread_ts
        (f"status <{reply}?thread_ts=1732870800.000100&amp;cid=C0WATCH>", "1732870800.000100"),
        (f"<{LINK}> summon", "1732870800.000100"),
    ]:
        body = {**fixture("slash_command"), "text": text}
        req = translate.command_request(body, is_platform_admin=False)
        assert (req.channel, req.thread, req.typed_in) == ("C0WATCH", thread, None), text
        assert req.text in ("status", "summon"), text


def test_a_link_to_another_channel_says_where_the_command_was_typed() -> None:
    body = {**fixture("slash_command"),
            "text": "status <https://fake.slack.com/archives/C0OTHER/p1732870800000100>"}
    req = translate.command_request(body, is_platform_admin=False)
    assert (req.channel, req.thread, req.typed_in) == ("C0OTHER", "1732870800.000100", "C0WATCH")


def test_without_a_link_a_command_is_about_the_channel() -> None:
    req = translate.command_request(fixture("slash_command"), is_platform_admin=False)
    assert (req.channel, req.thread, req.text) == ("C0WATCH", None, "status")


def test_the_message_shortcut_summons_on_the_messages_thread() -> None:
    body = fixture("message_action")
    req = translate.shortcut_request(body)
    assert req is not None
    assert (req.channel, req.thread, req.user_id, req.text) == (
        "C0WATCH", "1732870800.000100", "UALICE", "summon")
    del body["message"]["thread_ts"]  # a top-level message opens its own thread
    req = translate.shortcut_request(body)
    assert req is not None and req.thread == "1732870805.000200"
    assert translate.shortcut_request({**body, "channel": None}) is None


def test_an_in_thread_mention_is_a_command_about_that_thread() -> None:
    event = fixture("event_app_mention")["event"]
    req = translate.mention_request(event, ME)
    assert req is not None
    assert (req.channel, req.thread, req.text) == ("C0WATCH", "1732870800.000100", "status")
    top = {**event, "thread_ts": None}  # at the top of the channel: about the channel
    req = translate.mention_request(top, ME)
    assert req is not None and req.thread is None
    for text, command in [("<@UBOT>", ""), ("<@UBOT|tribunal>: history", "history"),
                          ("<@UBOT> summon", "summon"), ("<@UBOT> 2", None),
                          ("<@UBOT> what now?", None), ("hi <@UBOT> status", None),
                          ("<@UOTHER> status", None)]:
        assert translate.mention_command({**event, "text": text}, ME) == command, text


def test_a_message_that_is_a_command_mention_is_not_room_talk() -> None:
    event = {**fixture("event_message_user")["event"], "text": "<@UBOT> status"}
    assert translate.incoming_message(event, ME) is None  # catch-up reads it too
    event["text"] = "<@UBOT> 2"  # a digit answer that happens to mention the bot
    assert translate.incoming_message(event, ME) is not None


def test_a_thread_is_linked_in_its_workspace() -> None:
    room = "slack:C0WATCH:1732870800.000100"
    assert translate.permalink("https://fake.slack.com/", room) == f"<{LINK}>"
    assert translate.permalink(None, room) == "<#C0WATCH>"
    assert translate.permalink("https://x.slack.com/", "slack:<!here>:1") == "?"
