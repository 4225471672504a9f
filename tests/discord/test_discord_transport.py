"""DiscordTransport over real HTTP: chunking, mentions, buttons, edits, errors."""

from __future__ import annotations

import logging
import re

import discord_payloads as P
import pytest
from discord_helpers import RecordingCore

from adapters.discord.render import render
from adapters.discord.runner import DiscordAdapter, api_base
from bot import buttons
from bot.models import MessageKind, Option, OutgoingMessage, RoomKey
from bot.ports import TransportError

ROOM = RoomKey("discord", P.CHANNEL, P.THREAD)
TOP_ROOM = RoomKey("discord", P.CHANNEL, None)


def escalation(text: str, escalation_id: int = 7, **extra) -> OutgoingMessage:
    return OutgoingMessage(
        kind=MessageKind.VERDICT, text=text, escalation_id=escalation_id,
        options=[Option(n=1, label="배포 진행"), Option(n=2, label="보류")], **extra)


@pytest.fixture
async def adapter(fake_discord, make_settings, start_adapter) -> DiscordAdapter:
    return await start_adapter(make_settings(), RecordingCore())


def long_verdict() -> str:
    """~5,000 characters with a fenced code block straddling the 2,000 limit."""
    prose = "\n".join(f"{i}. 검토 결과를 정리합니다: 로그인 만료 처리와 재시도 로직."
                      for i in range(34))
    code = "\n".join(f"    assert validate_token(token_{i}) is not None  # case {i}"
                     for i in range(64))
    text = f"ESCALATE\n{prose}\n```python\n{code}\n```\n마지막으로 결정해 주세요.\n1. 배포\n2. 보류"
    assert 4800 < len(text) < 6000
    return text


def test_api_base_accepts_host_or_full_base() -> None:
    assert api_base(None) == "https://discord.com/api/v10"
    assert api_base("http://127.0.0.1:8080/") == "http://127.0.0.1:8080/api/v10"
    assert api_base("http://proxy:8080/api/v9") == "http://proxy:8080/api/v9"


def test_rendered_view_is_persistent_and_custom_ids_fit() -> None:
    rendered = render(escalation("ESCALATE\n1. a\n2. b", escalation_id=10**11))
    assert rendered.view is not None and rendered.view.timeout is None
    ids = [c["custom_id"] for row in rendered.view.to_components() for c in row["components"]]
    assert ids == [buttons.encode(10**11, 1), buttons.encode(10**11, 2)]
    assert all(len(i) <= 100 for i in ids)


async def test_five_thousand_char_verdict_is_split_on_lines_with_fences(
    adapter, fake_discord
) -> None:
    text = long_verdict()
    first_id = await adapter.transport.post(ROOM, escalation(text))
    posted = fake_discord.find("POST", rf"^/channels/{P.THREAD}/messages$")
    assert len(posted) >= 3
    chunks = [c.json["content"] for c in posted]
    assert all(len(c) <= 2000 for c in chunks)
    for chunk in chunks:  # every chunk renders on its own: fences are balanced
        assert len(re.findall(r"^```", chunk, flags=re.M)) % 2 == 0
    body = "\n".join(chunks)
    for line in text.splitlines():
        assert line in body  # nothing lost, no line cut in the middle
    # buttons only under the last chunk; the id the engine keeps is the first one
    assert [bool(c.json.get("components")) for c in posted] == [False] * (len(posted) - 1) + [True]
    assert first_id == fake_discord.channel_messages(P.THREAD)[0]["id"]


async def test_allowed_mentions_never_everyone_roles_or_strangers(adapter, fake_discord) -> None:
    text = "ESCALATE @everyone @here <@&1000> <@3003> 결정해 주세요\n1. a\n2. b"
    await adapter.transport.post(ROOM, escalation(text, mention_user_ids=[P.ALICE]))
    [call] = fake_discord.find("POST", rf"^/channels/{P.THREAD}/messages$")
    mentions = call.json["allowed_mentions"]
    assert mentions["parse"] == []  # no @everyone/@here, no role pings, no parsed users
    assert [str(u) for u in mentions["users"]] == [P.ALICE]  # only the requester
    assert call.json["content"].startswith(f"<@{P.ALICE}>")
    await adapter.transport.post(ROOM, OutgoingMessage(kind=MessageKind.NOTICE,
                                                       text="@everyone hi"))
    assert fake_discord.calls[-1].json["allowed_mentions"]["parse"] == []
    assert "users" not in fake_discord.calls[-1].json["allowed_mentions"]


async def test_progress_edited_into_multi_chunk_verdict_then_decided(
    adapter, fake_discord
) -> None:
    progress_id = await adapter.transport.post(
        ROOM, OutgoingMessage(kind=MessageKind.PROGRESS, text="⚖️ 중재자가 검토 중입니다…"))
    verdict = escalation(long_verdict())
    await adapter.transport.edit(ROOM, progress_id, verdict)
    [patch] = fake_discord.find("PATCH", rf"/messages/{progress_id}$")
    assert len(patch.json["content"]) <= 2000
    messages = fake_discord.channel_messages(P.THREAD)
    assert len(messages) >= 3 and messages[0]["id"] == progress_id
    assert messages[-1]["components"] and not messages[0]["components"]

    decided = verdict.model_copy(update={"decided": Option(n=2, label="보류"),
                                         "decided_note": "결정: alice"})
    await adapter.transport.edit(ROOM, progress_id, decided)
    last = fake_discord.channel_messages(P.THREAD)[-1]
    states = [(c["disabled"], c["style"]) for row in last["components"]
              for c in row["components"]]
    assert states == [(True, 2), (True, 3)]  # all disabled, the chosen one green


async def test_decided_edit_after_restart_finds_the_buttons(
    adapter, fake_discord, make_settings, start_adapter
) -> None:
    verdict = escalation(long_verdict(), escalation_id=9)
    first_id = await adapter.transport.post(ROOM, verdict)
    fresh = await start_adapter(make_settings(), RecordingCore())  # no memory of the chunks
    await fresh.transport.edit(ROOM, first_id, verdict.model_copy(
        update={"decided": Option(n=1, label="배포 진행")}))
    last = fake_discord.channel_messages(P.THREAD)[-1]
    assert last["components"] and all(
        c["disabled"] for row in last["components"] for c in row["components"])
    assert fake_discord.find("GET", rf"^/channels/{P.THREAD}/messages$")


async def test_rate_limit_is_paced_by_the_library_and_logged(
    adapter, fake_discord, caplog
) -> None:
    caplog.set_level(logging.WARNING)
    fake_discord.rate_limit_next("POST", rf"^/channels/{P.THREAD}/messages$", retry_after=0.01)
    message_id = await adapter.transport.post(ROOM, OutgoingMessage(kind="notice", text="hi"))
    assert message_id
    assert len(fake_discord.find("POST", rf"^/channels/{P.THREAD}/messages$")) == 2
    assert "rate limited" in caplog.text


async def test_missing_permissions_is_permanent_and_logged(
    adapter, fake_discord, caplog
) -> None:
    fake_discord.forbid_next("POST", rf"^/channels/{P.THREAD}/messages$")
    with pytest.raises(TransportError) as info:
        await adapter.transport.post(ROOM, OutgoingMessage(kind="notice", text="hi"))
    assert info.value.permanent
    assert "50013" in caplog.text and "missing permissions" in caplog.text


async def test_unknown_channel_is_permanent(adapter, fake_discord) -> None:
    fake_discord.unknown_channel_next("PATCH", r"/messages/")
    with pytest.raises(TransportError) as info:
        await adapter.transport.edit(TOP_ROOM, "123", OutgoingMessage(kind="notice", text="x"))
    assert info.value.permanent


async def test_network_failure_is_transient(adapter, fake_discord) -> None:
    await fake_discord.close()
    with pytest.raises(TransportError) as info:
        await adapter.transport.post(ROOM, OutgoingMessage(kind="notice", text="hi"))
    assert not info.value.permanent


async def test_private_message_goes_by_dm_or_falls_back_to_the_room(
    adapter, fake_discord
) -> None:
    await adapter.transport.post_private(ROOM, P.MALLORY, "권한이 없습니다")
    [dm_open] = fake_discord.find("POST", r"^/users/@me/channels$")
    assert str(dm_open.json["recipient_id"]) == P.MALLORY
    # DMs closed: Discord answers the DM post with 403 code 50007
    fake_discord.fail_next("POST", rf"^/channels/(?!{P.THREAD})\d+/messages$", 403,
                           {"message": "Cannot send messages to this user", "code": 50007})
    await adapter.transport.post_private(ROOM, P.MALLORY, "권한이 없습니다")
    [call] = fake_discord.find("POST", rf"^/channels/{P.THREAD}/messages$")
    assert call.json["content"].startswith(f"<@{P.MALLORY}>")
    assert [str(u) for u in call.json["allowed_mentions"]["users"]] == [P.MALLORY]


async def test_posting_before_login_is_a_transient_error(make_settings) -> None:
    """`tribunal run` starts the engine (which flushes its outbox) before the adapter."""
    adapter = DiscordAdapter(make_settings(), RecordingCore())
    with pytest.raises(TransportError) as info:
        await adapter.transport.post(ROOM, OutgoingMessage(kind="notice", text="hi"))
    assert not info.value.permanent
    await adapter.stop()


async def test_edit_to_shorter_text_removes_leftover_chunks(adapter, fake_discord) -> None:
    first_id = await adapter.transport.post(ROOM, escalation(long_verdict()))
    assert len(fake_discord.channel_messages(P.THREAD)) >= 3
    await adapter.transport.edit(ROOM, first_id, OutgoingMessage(kind="notice", text="짧게"))
    [left] = fake_discord.channel_messages(P.THREAD)
    assert (left["id"], left["content"], left["components"]) == (first_id, "짧게", [])


async def test_a_post_that_fails_midway_is_taken_back_before_the_retry(
    adapter, fake_discord
) -> None:
    message = escalation(long_verdict())
    fake_discord.fail_next("POST", rf"^/channels/{P.THREAD}/messages$", 401,
                           {"message": "401: Unauthorized", "code": 0}, after=1)
    with pytest.raises(TransportError) as info:
        await adapter.transport.post(ROOM, message)
    assert not info.value.permanent  # kept by the outbox, retried later
    await adapter.transport.post(ROOM, message)  # the outbox's retry
    posted = fake_discord.channel_messages(P.THREAD)
    assert len(posted) == len(render(message, 2000).chunks)  # no chunk twice


def keyed(text: str, key: str = "tribunal:41") -> OutgoingMessage:
    return escalation(text).model_copy(update={"idempotency_key": key})


async def test_posts_carry_a_nonce_per_chunk_that_discord_enforces(adapter, fake_discord) -> None:
    message = keyed(long_verdict())
    first = await adapter.transport.post(ROOM, message)
    sent = [c.json for c in fake_discord.find("POST", rf"^/channels/{P.THREAD}/messages$")]
    assert [(b["nonce"], b["enforce_nonce"]) for b in sent] == [
        (f"tribunal:41:{i}", True) for i in range(len(sent))]
    assert len(sent) >= 3
    # A repeat within Discord's window is answered with the earlier message.
    assert await adapter.transport.post(ROOM, message) == first
    assert len(fake_discord.channel_messages(P.THREAD)) == len(sent)


async def test_find_post_matches_our_own_post_by_content_after_a_time(
    adapter, fake_discord
) -> None:
    from datetime import UTC, datetime, timedelta

    since = datetime.now(UTC) - timedelta(minutes=2)
    message = keyed(long_verdict())
    assert await adapter.transport.find_post(ROOM, message, since) is None
    # Someone else quoting the same text is not our post.
    fake_discord.add_message(P.message(render(message).chunks[0], author=P.OWNER))
    assert await adapter.transport.find_post(ROOM, message, since) is None
    first = await adapter.transport.post(ROOM, message)
    assert await adapter.transport.find_post(ROOM, message, since) == first
    later = datetime.now(UTC) + timedelta(minutes=1)
    assert await adapter.transport.find_post(ROOM, message, later) is None
    lookup = fake_discord.find("GET", rf"^/channels/{P.THREAD}/messages$")[-1]
    assert "after" in lookup.query


async def test_find_post_takes_back_a_post_cut_short(adapter, fake_discord) -> None:
    from datetime import UTC, datetime, timedelta

    message = keyed(long_verdict())
    unauthorized = {"message": "401: Unauthorized", "code": 0}
    fake_discord.fail_next("POST", rf"^/channels/{P.THREAD}/messages$", 401, unauthorized,
                           after=1)
    fake_discord.fail_next("DELETE", r"/messages/", 401, unauthorized)  # the part stays
    with pytest.raises(TransportError):
        await adapter.transport.post(ROOM, message)
    assert len(fake_discord.channel_messages(P.THREAD)) == 1
    since = datetime.now(UTC) - timedelta(minutes=2)
    assert await adapter.transport.find_post(ROOM, message, since) is None
    assert fake_discord.channel_messages(P.THREAD) == []  # posted whole by the retry
