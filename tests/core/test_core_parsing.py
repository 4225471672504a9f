"""Pure parsers: digit answers, /arbiter arguments, transcript lines, button ids."""

from __future__ import annotations

import pytest

from bot import buttons
from bot.answers import parse_digit_answer
from bot.commands import Command, CommandError, normalize_user, parse_command
from bot.models import Role
from bot.transcript import MessageLine, RoomLine, TranscriptError, parse_line


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2", 2), ("2번", 2), ("２", 2), ("２번", 2), ("2.", 2), ("#2", 2), ("# 2", 2),
        ("옵션 2", 2), ("option 2", 2), ("Option 3", 3), ("2번이요", 2), (" 3 ", 3),
        ("2)", 2), ("선택 1", 1), ("12", 12), ("2 please", None), ("PR 만들어 주세요", None),
        ("", None), ("2와 3 둘 다", None), ("v2", None), ("2.5", None), ("-1", None),
    ],
)
def test_digit_answers(text: str, expected: int | None) -> None:
    assert parse_digit_answer(text) == expected


@pytest.mark.parametrize(
    ("text", "name", "number"),
    [
        ("status", "status", None), ("/arbiter threshold 3", "threshold", 3),
        ("max-rounds 50", "max-rounds", 50), ("max_rounds 1", "max-rounds", 1),
        ("summon", "summon", None), ("PAUSE", "pause", None), ("resume", "resume", None),
        ("history", "history", None),
    ],
)
def test_valid_commands(text: str, name: str, number: int | None) -> None:
    parsed = parse_command(text)
    assert isinstance(parsed, Command)
    assert (parsed.name, parsed.number) == (name, number)


@pytest.mark.parametrize(
    "text",
    ["threshold 0", "threshold 21", "threshold abc", "threshold", "max-rounds 51",
     "frobnicate", "status now", "roles owner:U1", "roles owner:U1 reviewer:U1",
     "roles owner:<@U1> boss:U2", "roles owner:<bad reviewer:U2"],
)
def test_bad_commands_get_usage(text: str) -> None:
    parsed = parse_command(text)
    assert isinstance(parsed, CommandError)
    # One language per reply (by design): the room's, with its usage.
    korean, english = parsed.text("ko"), parsed.text("en")
    assert "사용법" in korean and "Usage" not in korean
    assert "Usage" in english and "사용법" not in english


def test_empty_command_is_help() -> None:
    parsed = parse_command("")
    assert isinstance(parsed, CommandError) and "status" in parsed.text("ko")


def test_roles_accept_mentions_and_bot_ids() -> None:
    parsed = parse_command("roles owner:<@U123|owner-bot> reviewer:<@!456>,B789")
    assert isinstance(parsed, Command)
    assert parsed.owner == ["U123"] and parsed.reviewer == ["456", "B789"]
    assert parsed.changes_state
    assert normalize_user("@U9") == "U9" and normalize_user("<@U9>") == "U9"
    assert normalize_user("a b") is None


def test_status_and_history_change_nothing() -> None:
    assert not Command("status").changes_state and not Command("history").changes_state


def test_transcript_lines() -> None:
    room = parse_line('{"type": "room", "room": "r1", "roles": {"owner": "o", "reviewer": ["r"]}}', 1)
    assert isinstance(room, RoomLine) and room.roles == {"owner": ["o"], "reviewer": ["r"]}
    msg = parse_line('{"type": "message", "id": 5, "author": "o", "role": "owner", "text": "hi",'
                     ' "ts": "2026-11-29T10:00:05"}', 2)
    assert isinstance(msg, MessageLine) and msg.id == "5" and msg.role is Role.OWNER
    assert msg.ts is not None and msg.ts.tzinfo is not None
    assert parse_line("   ", 3) is None


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ("{not json", "invalid JSON"),
        ("[1, 2]", "JSON object"),
        ('{"type": "chat"}', "unknown type"),
        ('{"type": "message", "author": "a"}', "text"),
        ('{"type": "message", "author": "a", "text": "x", "role": "king"}', "role"),
        ('{"type": "message", "author": "a", "text": "x", "ts": "yesterday"}', "ts"),
    ],
)
def test_malformed_transcript_lines_name_the_line(raw: str, fragment: str) -> None:
    with pytest.raises(TranscriptError) as info:
        parse_line(raw, 7)
    assert info.value.line == 7
    assert str(info.value).startswith("line 7:") and fragment in str(info.value)


def test_button_ids_round_trip_and_reject_foreign_values() -> None:
    value = buttons.encode(123456, 3)
    assert buttons.decode(value) == (123456, 3) and len(value) <= 100
    for foreign in ("", "tribunal:esc:x:1", "other:esc:1:2", "tribunal:esc:1:2:3"):
        assert buttons.decode(foreign) is None


@pytest.mark.parametrize(
    ("platform", "good", "bad"),
    [("slack", "roles owner:UOWNER reviewer:B0REVIEW,W0REV", "roles owner:UOWNER reviewer:alice"),
     ("slack", "roles owner:UOWNER reviewer:UREV", "roles owner:@bob reviewer:UREV"),
     ("slack", "roles owner:UOWNER reviewer:UREV", "roles owner:<#C0CHAN> reviewer:UREV"),
     ("discord", "roles owner:<@123> reviewer:<@!456>", "roles owner:<@123> reviewer:ReviewerBot"),
     ("discord", "roles owner:123 reviewer:456", "roles owner:123 reviewer:@reviewer")],
)
def test_roles_on_a_platform_take_users_not_names(platform: str, good: str, bad: str) -> None:
    assert isinstance(parse_command(good, platform), Command)
    refused = parse_command(bad, platform)
    assert isinstance(refused, CommandError) and refused.key == f"err_not_a_user_{platform}"
    # The hint, in the room's language, says how this platform names a user.
    korean, english = refused.text("ko"), refused.text("en")
    assert "사용자가 아닙니다" in korean and "is not a user" not in korean
    assert "is not a user" in english and "사용자" not in english
    assert ("Slack" if platform == "slack" else "option") in english
    # Without a platform (replays) a plain name stays an id, as before.
    assert isinstance(parse_command(bad.replace("<#C0CHAN>", "C0CHAN")), Command)


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_usage_is_written_in_each_platforms_own_syntax(lang: str) -> None:
    from bot.commands import usage

    slack, discord, plain = usage(lang, "slack"), usage(lang, "discord"), usage(lang)
    assert "@tribunal status" in slack and "Arbitrate this thread" in slack
    assert "n:<n>" not in slack and "reviewer2" not in slack
    assert "/arbiter threshold n:<n>" in discord and "reviewer2:@" in discord
    assert "@tribunal" not in discord
    assert "@tribunal" not in plain and "n:<n>" not in plain
