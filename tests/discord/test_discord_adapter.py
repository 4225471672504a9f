"""The adapter on its own: gateway in, core calls out, replies over real HTTP (stub core)."""

from __future__ import annotations

import logging

import discord
import discord_payloads as P
import pytest
from discord_helpers import TOKEN, RecordingCore, until

from bot import buttons
from bot.chunking import split_text
from bot.models import AnswerResult, CommandReply, Option, OutgoingMessage, RoomKey

THREAD_ROOM = RoomKey("discord", P.CHANNEL, P.THREAD)


async def test_start_identifies_with_intents_and_syncs_guild_commands(
    fake_discord, make_settings, start_adapter, caplog
):
    caplog.set_level(logging.DEBUG)
    adapter = await start_adapter(make_settings(), RecordingCore())
    assert adapter.client.user is not None and adapter.client.user.id == int(P.BOT)
    identify = fake_discord.identify_payloads[0]
    intents = discord.Intents._from_value(identify["intents"])
    assert intents.guilds and intents.guild_messages and intents.message_content
    assert not intents.members and not intents.presences
    [sync] = fake_discord.find("PUT", rf"/applications/{P.APP}/guilds/{P.GUILD}/commands$")
    [group] = sync.json
    assert group["name"] == "arbiter"
    subs = {o["name"] for o in group["options"]}
    assert subs == {"status", "threshold", "max-rounds", "summon", "pause", "resume", "roles",
                    "history"}
    assert TOKEN not in caplog.text


async def test_global_sync_when_no_guild_ids(fake_discord, make_settings, start_adapter):
    await start_adapter(make_settings(discord_guild_ids=[]), RecordingCore())
    assert fake_discord.find("PUT", rf"/applications/{P.APP}/commands$")
    assert not fake_discord.find("PUT", r"/guilds/")


async def test_bad_token_is_a_clear_error(fake_discord, make_settings):
    from adapters.discord.runner import DiscordAdapter

    fake_discord.fail_next("GET", r"^/users/@me$", 401, {"message": "401: Unauthorized",
                                                         "code": 0})
    adapter = DiscordAdapter(make_settings(), RecordingCore())
    with pytest.raises(RuntimeError, match="DISCORD_BOT_TOKEN"):
        await adapter.start(ready_within=5)


async def test_message_content_intent_not_enabled_is_a_clear_error(
    fake_discord, make_settings
):
    from adapters.discord.runner import DiscordAdapter

    fake_discord.refuse_identify = 4014
    adapter = DiscordAdapter(make_settings(), RecordingCore())
    with pytest.raises(RuntimeError, match="message_content"):
        await adapter.start(ready_within=5)
    assert adapter.client.is_closed()


async def test_messages_become_core_messages(fake_discord, make_settings, start_adapter):
    core = RecordingCore()
    await start_adapter(make_settings(), core)
    await fake_discord.dispatch("MESSAGE_CREATE", P.message("고쳐줘", author=P.ALICE))
    await fake_discord.dispatch("MESSAGE_CREATE", P.message("STEP_DONE x", author=P.OWNER))
    await fake_discord.dispatch("MESSAGE_CREATE", P.message("top", channel=P.CHANNEL))
    await fake_discord.dispatch("MESSAGE_CREATE", P.message("mine", author=P.BOT))
    await fake_discord.dispatch("MESSAGE_CREATE", P.message("hi", author=P.STRANGER_BOT))
    await until(lambda: len(core.messages) == 4)
    human, owner, top, other = core.messages
    assert (human.channel, human.thread, human.is_bot) == (P.CHANNEL, P.THREAD, False)
    assert human.text == "고쳐줘" and human.author_id == P.ALICE
    assert (owner.author_id, owner.is_bot) == (P.OWNER, True)
    assert (top.channel, top.thread) == (P.CHANNEL, None)
    assert (other.author_id, other.is_bot) == (P.STRANGER_BOT, True)  # the core ignores it
    assert all(m.author_id != P.BOT for m in core.messages)


async def test_thread_unknown_to_cache_is_resolved_once_over_rest(
    fake_discord, make_settings, start_adapter
):
    core = RecordingCore()
    await start_adapter(make_settings(), core)
    thread = {**P.guild_create()["threads"][0], "id": "777", "name": "new thread"}
    fake_discord.channels[777] = thread  # known to REST, not to the gateway cache
    await fake_discord.dispatch("MESSAGE_CREATE", P.message("a", channel="777"))
    await fake_discord.dispatch("MESSAGE_CREATE", P.message("b", channel="777"))
    await until(lambda: len(core.messages) == 2)
    assert [(m.channel, m.thread, m.text) for m in core.messages] == [
        (P.CHANNEL, "777", "a"), (P.CHANNEL, "777", "b")]
    assert len(fake_discord.find("GET", r"^/channels/777$")) == 1


async def _post_escalation(adapter, fake, escalation_id: int = 42) -> dict:
    message = OutgoingMessage(
        kind="verdict", text="ESCALATE\n결정해 주세요.\n1. 배포\n2. 보류",
        escalation_id=escalation_id,
        options=[Option(n=1, label="배포"), Option(n=2, label="보류")],
    )
    message_id = await adapter.transport.post(THREAD_ROOM, message)
    return fake.messages[int(message_id)]


async def test_click_is_translated_and_refusal_is_ephemeral(
    fake_discord, make_settings, start_adapter
):
    core = RecordingCore()
    adapter = await start_adapter(make_settings(), core)
    stored = await _post_escalation(adapter, fake_discord)
    core.answer = AnswerResult(accepted=False, private_text="권한이 없습니다.")
    await fake_discord.dispatch("INTERACTION_CREATE", P.button_click(
        stored, buttons.encode(42, 2), clicker=P.MALLORY))
    [callback] = await until(lambda: fake_discord.find("POST", r"^/interactions/.+/callback$"))
    [click] = core.clicks
    assert (click.escalation_id, click.option, click.user_id) == (42, 2, P.MALLORY)
    assert (click.channel, click.thread, click.is_platform_admin) == (P.CHANNEL, P.THREAD, False)
    assert callback.json["type"] == 4  # CHANNEL_MESSAGE_WITH_SOURCE
    assert callback.json["data"]["flags"] & 64  # ephemeral
    assert callback.json["data"]["content"] == "권한이 없습니다."


async def test_accepted_click_is_acknowledged_silently(fake_discord, make_settings, start_adapter):
    core = RecordingCore()
    adapter = await start_adapter(make_settings(), core)
    stored = await _post_escalation(adapter, fake_discord)
    await fake_discord.dispatch("INTERACTION_CREATE", P.button_click(
        stored, buttons.encode(42, 1), clicker=P.ADMIN, permissions=P.ADMIN_PERMS))
    [callback] = await until(lambda: fake_discord.find("POST", r"^/interactions/.+/callback$"))
    assert callback.json["type"] == 6  # DEFERRED_UPDATE_MESSAGE
    assert core.clicks[0].is_platform_admin is True


async def test_slow_core_is_deferred_within_three_seconds(
    fake_discord, make_settings, start_adapter
):
    core = RecordingCore()
    adapter = await start_adapter(make_settings(), core)
    adapter.client.ack_deadline = 0.01
    core.delay = 0.2
    core.reply = CommandReply(text="느린 응답")
    await fake_discord.dispatch("INTERACTION_CREATE", P.slash("status"))
    await until(lambda: fake_discord.find("POST", rf"^/webhooks/{P.APP}/"))
    [callback] = fake_discord.find("POST", r"^/interactions/.+/callback$")
    assert callback.json["type"] == 5 and callback.json["data"]["flags"] & 64  # deferred, private
    [followup] = fake_discord.find("POST", rf"^/webhooks/{P.APP}/")
    assert followup.json["content"] == "느린 응답" and followup.json["flags"] & 64


async def test_commands_carry_text_and_admin_rights(fake_discord, make_settings, start_adapter):
    core = RecordingCore()
    await start_adapter(make_settings(), core)
    await fake_discord.dispatch("INTERACTION_CREATE", P.slash("threshold", {"n": 3}))
    await fake_discord.dispatch("INTERACTION_CREATE", P.slash(
        "max-rounds", {"n": 9}, invoker=P.ADMIN, permissions=P.ADMIN_PERMS, channel=P.CHANNEL))
    manage_channels = str(3072 | (1 << 4))
    await fake_discord.dispatch("INTERACTION_CREATE", P.slash(
        "pause", invoker=P.ADMIN, permissions=manage_channels, channel=P.CHANNEL))
    await until(lambda: len(fake_discord.find("POST", r"/callback$")) == 3)
    by_text = {c.text: c for c in core.commands}
    assert by_text["threshold 3"].is_platform_admin is False
    assert (by_text["threshold 3"].channel, by_text["threshold 3"].thread) == (P.CHANNEL, P.THREAD)
    assert by_text["max-rounds 9"].is_platform_admin is True
    assert by_text["max-rounds 9"].thread is None
    assert by_text["pause"].is_platform_admin is True
    for call in fake_discord.find("POST", r"/callback$"):
        assert call.json["type"] == 4 and call.json["data"]["flags"] & 64
        assert call.json["data"]["allowed_mentions"] == {"parse": []}


async def test_long_command_reply_is_split_into_private_followups(
    fake_discord, make_settings, start_adapter
):
    core = RecordingCore()
    core.reply = CommandReply(text="\n".join(f"판정 {i}: REVISE — 수정 필요" for i in range(300)))
    await start_adapter(make_settings(), core)
    await fake_discord.dispatch("INTERACTION_CREATE", P.slash("history"))
    expected = len(split_text(core.reply.text, 2000)) - 1
    followups = await until(
        lambda: len(found := fake_discord.find("POST", rf"^/webhooks/{P.APP}/")) >= expected
        and found)
    [callback] = fake_discord.find("POST", r"/callback$")
    parts = [callback.json["data"]["content"]] + [f.json["content"] for f in followups]
    assert all(len(p) <= 2000 for p in parts) and len(parts) >= 3
    assert "\n".join(parts) == core.reply.text
    assert all(f.json["flags"] & 64 for f in followups)


async def test_roles_command_passes_user_mentions(fake_discord, make_settings, start_adapter):
    core = RecordingCore()
    await start_adapter(make_settings(), core)
    payload = P.slash("roles", invoker=P.ADMIN, permissions=P.ADMIN_PERMS)
    payload["data"]["options"][0]["options"] = [
        {"name": "owner", "type": 6, "value": P.OWNER},
        {"name": "reviewer", "type": 6, "value": P.REVIEWER},
    ]
    payload["data"]["resolved"] = {"users": {
        P.OWNER: P.user(P.OWNER, bot=True), P.REVIEWER: P.user(P.REVIEWER, bot=True)}}
    await fake_discord.dispatch("INTERACTION_CREATE", payload)
    await until(lambda: core.commands)
    assert core.commands[0].text == f"roles owner:<@{P.OWNER}> reviewer:<@{P.REVIEWER}>"


async def test_core_failure_gives_an_ephemeral_error_not_a_crash(
    fake_discord, make_settings, start_adapter
):
    core = RecordingCore()

    # The core's part in answering an interaction is storing it now (the
    # command runs after, from storage, where the engine turns a failure into
    # a reply): a store that fails is what the adapter has to survive.
    async def boom(request, delivery_id, **kwargs):
        raise RuntimeError("db locked")

    core.receive_command = boom  # type: ignore[method-assign]
    adapter = await start_adapter(make_settings(), core)
    await fake_discord.dispatch("INTERACTION_CREATE", P.slash("status"))
    [callback] = await until(lambda: fake_discord.find("POST", r"/callback$"))
    assert callback.json["data"]["flags"] & 64 and "오류" in callback.json["data"]["content"]
    assert not adapter.client.is_closed()


async def test_an_unreachable_api_is_retryable_and_a_later_start_works(
    fake_discord, make_settings
):
    import socket

    from adapters.discord.runner import DiscordAdapter
    from bot.ports import PlatformFatal

    with socket.socket() as sock:  # a port nothing listens on: connections are refused
        sock.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{sock.getsockname()[1]}"
    adapter = DiscordAdapter(make_settings(discord_api_url=refused), RecordingCore())
    with pytest.raises(Exception) as err:
        await adapter.start(ready_within=5)
    assert not isinstance(err.value, PlatformFatal)
    await adapter.stop()
    # The same adapter starts once Discord is reachable (what the retry does).
    adapter.settings = make_settings()
    try:
        await adapter.start(ready_within=10)
        assert adapter.client.is_ready()
    finally:
        await adapter.stop()


async def test_a_gateway_refusing_the_token_stops_the_platform(fake_discord, make_settings):
    from adapters.discord.runner import DiscordAdapter
    from bot.ports import PlatformFatal

    fake_discord.refuse_identify = 4004
    adapter = DiscordAdapter(make_settings(), RecordingCore())
    with pytest.raises(PlatformFatal, match="DISCORD_BOT_TOKEN"):
        await adapter.start(ready_within=5)
    assert adapter.client.is_closed()


async def test_command_options_carry_required_and_ranges(fake_discord, make_settings, start_adapter):
    await start_adapter(make_settings(), RecordingCore())
    [sync] = fake_discord.find("PUT", rf"/applications/{P.APP}/guilds/{P.GUILD}/commands$")
    [group] = sync.json
    subs = {o["name"]: {opt["name"]: opt for opt in o.get("options", [])}
            for o in group["options"]}
    assert {k: (v["required"], v["min_value"], v["max_value"])
            for k, v in {**subs["threshold"], **{"rounds": subs["max-rounds"]["n"]}}.items()
            } == {"n": (True, 1, 20), "rounds": (True, 1, 50)}
    roles = subs["roles"]
    assert [(name, o["type"], o["required"]) for name, o in roles.items()] == [
        ("owner", 6, True), ("reviewer", 6, True), ("reviewer2", 6, False),
        ("reviewer3", 6, False)]


async def test_roles_command_takes_several_reviewers(fake_discord, make_settings, start_adapter):
    core = RecordingCore()
    await start_adapter(make_settings(), core)
    payload = P.slash("roles", invoker=P.ADMIN, permissions=P.ADMIN_PERMS)
    second = "2004"
    payload["data"]["options"][0]["options"] = [
        {"name": "owner", "type": 6, "value": P.OWNER},
        {"name": "reviewer", "type": 6, "value": P.REVIEWER},
        {"name": "reviewer2", "type": 6, "value": second},
    ]
    payload["data"]["resolved"] = {"users": {
        u: P.user(u, bot=True) for u in (P.OWNER, P.REVIEWER, second)}}
    await fake_discord.dispatch("INTERACTION_CREATE", payload)
    await until(lambda: core.commands)
    assert core.commands[0].text == (
        f"roles owner:<@{P.OWNER}> reviewer:<@{P.REVIEWER}> reviewer:<@{second}>")


async def test_a_command_is_stored_before_the_interaction_is_answered(
    fake_discord, make_settings, start_adapter
):
    """Discord gets no answer, not even a deferral, until the core has stored
    the command (with its delivery id and the route its reply will take)."""
    import asyncio

    gate = asyncio.Event()

    class SlowStore(RecordingCore):
        async def receive_command(self, request, delivery_id, **kwargs):
            await gate.wait()
            return await super().receive_command(request, delivery_id, **kwargs)

    core = SlowStore()
    adapter = await start_adapter(make_settings(), core)
    adapter.client.ack_deadline = 0.01
    payload = P.slash("threshold", {"n": 4}, invoker=P.ADMIN, permissions=P.ADMIN_PERMS)
    await fake_discord.dispatch("INTERACTION_CREATE", payload)
    await asyncio.sleep(0.2)
    assert not fake_discord.find("POST", r"/callback$") and core.deliveries == []
    gate.set()
    await until(lambda: fake_discord.replies.get(payload["token"]))
    [(delivery, route)] = core.deliveries
    assert delivery == f"interaction:{payload['id']}"
    assert route == {"interaction": payload["id"], "application_id": P.APP,
                     "token": payload["token"], "kind": "command"}
    await until(lambda: fake_discord.replies[payload["token"]].shown == ["ok"])


async def test_a_stored_click_refusal_is_the_interactions_ephemeral_answer(
    fake_discord, make_settings, start_adapter
):
    core = RecordingCore()
    adapter = await start_adapter(make_settings(), core)
    stored = await _post_escalation(adapter, fake_discord)
    core.answer = AnswerResult(accepted=False, private_text="권한이 없습니다.")
    payload = P.button_click(stored, buttons.encode(42, 2), clicker=P.MALLORY)
    await fake_discord.dispatch("INTERACTION_CREATE", payload)
    reply = await until(lambda: fake_discord.replies.get(payload["token"]))
    assert core.deliveries == [(f"interaction:{payload['id']}", {
        "interaction": payload["id"], "application_id": P.APP, "token": payload["token"],
        "kind": "click"})]
    assert (reply.kind, reply.shown) == (4, ["권한이 없습니다."])


async def test_after_a_restart_a_command_reply_replaces_the_original_response_once(
    fake_discord, make_settings, start_adapter
):
    """The process that deferred the interaction is gone; the reply comes from
    the outbox of the next one, by the interaction's token. Sent twice (a crash
    before the outbox recorded it), it still shows once."""
    import asyncio

    class StoresOnly(RecordingCore):  # as with TRIBUNAL_FAULT=after_store: never applied
        async def receive_command(self, request, delivery_id, **kwargs):
            self.deliveries.append((delivery_id, kwargs.get("route")))
            return None

    core = StoresOnly()
    await start_adapter(make_settings(), core)
    payload = P.slash("status")
    await fake_discord.dispatch("INTERACTION_CREATE", payload)
    reply = await until(lambda: fake_discord.replies.get(payload["token"]))
    assert reply.kind == 5 and reply.shown == []  # stored, then deferred at once
    [(_, route)] = core.deliveries

    later = await start_adapter(make_settings(), RecordingCore())  # a new process
    room = RoomKey("discord", P.CHANNEL, P.THREAD)
    await later.transport.post_reply(room, P.ALICE, "상태: 정상", route)
    await later.transport.post_reply(room, P.ALICE, "상태: 정상", route)
    await asyncio.sleep(0.05)
    assert reply.shown == ["상태: 정상"] and reply.edits == 2
    assert not fake_discord.find("POST", r"^/users/@me/channels$")  # no DM


async def test_a_reply_whose_interaction_was_never_answered_goes_by_dm(
    fake_discord, make_settings, start_adapter
):
    adapter = await start_adapter(make_settings(), RecordingCore())
    route = {"interaction": "999", "application_id": P.APP, "token": "tok-never-answered",
             "kind": "command"}
    await adapter.transport.post_reply(RoomKey("discord", P.CHANNEL, P.THREAD), P.ALICE,
                                       "임계값: 3 → 5", route)
    [dm] = fake_discord.find("POST", r"^/users/@me/channels$")
    assert str(dm.json["recipient_id"]) == P.ALICE
    sent = fake_discord.find("POST", r"^/channels/\d+/messages$")
    # A DM is read away from the room: it names the thread first.
    assert sent[-1].json["content"].split("\n") == [
        f"🧵 <#{P.THREAD}> · <https://discord.com/channels/{P.GUILD}/{P.THREAD}>",
        "임계값: 3 → 5"]
