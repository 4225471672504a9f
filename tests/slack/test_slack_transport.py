"""SlackTransport over real HTTP to the fake Web API: posting, editing,
ephemeral replies, 429 handling, pacing and error mapping."""

from __future__ import annotations

import asyncio
import logging
import types

import pytest

from adapters.slack.transport import (
    SLACK_LIMITS,
    TIER_HEADROOM,
    ChannelPacer,
    SlackPacer,
    SlackTransport,
    make_client,
)
from bot.models import MessageKind, Option, OutgoingMessage, RoomKey
from bot.ports import TransportError
from tests.fakes.slack_api import BOT_TOKEN, FakeSlackAPI
from tests.slack.conftest import virtual_pacer

ROOM = RoomKey("slack", "C0WATCH", "1732870800.000100")


def transport(api: FakeSlackAPI, token: str = BOT_TOKEN) -> SlackTransport:
    paced = SlackTransport(make_client(token, api.url), post_interval=0)
    paced.pacer = virtual_pacer(api)  # Slack's limits, on the fake's virtual clock
    return paced


def msg(text: str = "⚖️ 중재자가 검토 중입니다…", **kw) -> OutgoingMessage:
    return OutgoingMessage(kind=kw.pop("kind", MessageKind.PROGRESS), text=text, **kw)


@pytest.fixture
def instant_retry(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """slack_sdk's handlers sleep Retry-After + jitter (or a backoff); record, sleep 0."""
    from slack_sdk.http_retry import async_handler, builtin_async_handlers

    slept: list[float] = []
    real_sleep = asyncio.sleep

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)
        await real_sleep(0)

    for module in (async_handler, builtin_async_handlers):
        monkeypatch.setattr(module, "asyncio", types.SimpleNamespace(sleep=fake_sleep))
    return slept


async def test_post_is_a_thread_reply_and_edit_updates_in_place(slack_api: FakeSlackAPI) -> None:
    t = transport(slack_api)
    mid = await t.post(ROOM, msg())
    call = slack_api.calls_to("chat.postMessage")[0]
    assert call.args["channel"] == "C0WATCH" and call.args["thread_ts"] == ROOM.thread
    assert call.args["text"] and call.args["blocks"]
    assert call.headers["Authorization"] == f"Bearer {BOT_TOKEN}"
    channel, ts = mid.split(":")
    await t.edit(ROOM, mid, msg("REVISE fix it", kind=MessageKind.VERDICT))
    update = slack_api.calls_to("chat.update")[0].args
    assert (update["channel"], update["ts"]) == (channel, ts)
    assert slack_api.messages[(channel, ts)]["text"] == "REVISE fix it"


async def test_429_then_success_honours_retry_after(slack_api: FakeSlackAPI,
                                                    instant_retry: list[float]) -> None:
    slack_api.rate_limit("chat.postMessage", retry_after=7)
    mid = await transport(slack_api).post(ROOM, msg())
    assert mid.startswith("C0WATCH:")
    assert len(slack_api.calls_to("chat.postMessage")) == 2
    assert instant_retry and 7 <= instant_retry[0] < 8


async def test_rate_limit_that_persists_is_a_transient_error(slack_api: FakeSlackAPI,
                                                             instant_retry: list[float]) -> None:
    slack_api.rate_limit("chat.postMessage", times=10)
    with pytest.raises(TransportError) as err:
        await transport(slack_api).post(ROOM, msg())
    assert not err.value.permanent


@pytest.mark.parametrize("code", ["not_in_channel", "channel_not_found", "is_archived"])
async def test_permanent_errors_are_logged_clearly(slack_api: FakeSlackAPI, code: str,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    slack_api.fail("chat.postMessage", code)
    with caplog.at_level(logging.WARNING, "tribunal.slack"), pytest.raises(TransportError) as err:
        await transport(slack_api).post(ROOM, msg())
    assert err.value.permanent
    assert code in caplog.text and "C0WATCH" in caplog.text
    assert BOT_TOKEN not in caplog.text


async def test_bad_token_is_loud_but_kept_for_retry(slack_api: FakeSlackAPI,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    # An operator fixes a revoked token; until then the outbox keeps the post.
    with caplog.at_level(logging.ERROR, "tribunal.slack"), pytest.raises(TransportError) as err:
        await transport(slack_api, token="xoxb-wrong").post(ROOM, msg())
    assert not err.value.permanent and "invalid_auth" in str(err.value)
    assert "invalid_auth" in caplog.text and "xoxb-wrong" not in caplog.text


async def test_rejected_blocks_fall_back_to_plain_text(slack_api: FakeSlackAPI) -> None:
    slack_api.fail("chat.postMessage", "msg_too_long")
    options = [Option(n=1, label="yes"), Option(n=2, label="no")]
    await transport(slack_api).post(ROOM, msg("ESCALATE pick", kind=MessageKind.VERDICT,
                                              escalation_id=1, options=options))
    first, second = slack_api.calls_to("chat.postMessage")
    assert "blocks" in first.args and "blocks" not in second.args
    assert "1. yes" in second.args["text"]


async def test_server_error_then_success(slack_api: FakeSlackAPI,
                                         instant_retry: list[float]) -> None:
    slack_api.queue("chat.postMessage", status=503, body={"ok": False, "error": "fatal_error"})
    assert (await transport(slack_api).post(ROOM, msg())).startswith("C0WATCH:")


async def test_private_reply_is_ephemeral_and_neutralised(slack_api: FakeSlackAPI) -> None:
    await transport(slack_api).post_private(ROOM, "UALICE", "no <!channel> for you")
    args = slack_api.calls_to("chat.postEphemeral")[0].args
    assert args["user"] == "UALICE" and args["thread_ts"] == ROOM.thread
    assert "<!channel>" not in args["text"]


async def test_pacer_spaces_posts_per_channel_without_real_sleep() -> None:
    now = [100.0]
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        now[0] += seconds

    pacer = ChannelPacer(1.0, clock=lambda: now[0], sleep=sleep)

    async def call() -> str:
        return "ok"

    for _ in range(3):
        await pacer.run("C1", call)
    await pacer.run("C2", call)  # another channel is not held back
    assert waits == [1.0, 1.0]


async def test_pacer_tells_how_long_a_call_started_now_would_wait() -> None:
    """The spacing left after the last call, and one interval per call queued
    before it: what the outbox weighs before an edit (bot/outbox.py)."""
    now = [100.0]
    release = asyncio.Event()

    async def sleep(seconds: float) -> None:
        now[0] += seconds

    pacer = ChannelPacer(2.0, clock=lambda: now[0], sleep=sleep)
    assert pacer.expected_wait("") == 0.0

    async def call() -> str:
        return "ok"

    await pacer.run("", call)
    assert pacer.expected_wait("") == 2.0  # the spacing after that call
    now[0] += 0.5
    assert pacer.expected_wait("") == 1.5

    async def held() -> str:
        await release.wait()
        return "ok"

    calls = [asyncio.create_task(pacer.run("", held)) for _ in range(3)]
    await asyncio.sleep(0)
    # three calls ahead (one under way, two waiting): each takes its interval
    assert pacer.expected_wait("") == 3 * 2.0
    assert pacer.expected_wait("other") == 0.0  # another key waits for nothing
    release.set()
    await asyncio.gather(*calls)
    assert pacer.expected_wait("") == 2.0


async def test_transport_weighs_an_edit_against_a_post(slack_api: FakeSlackAPI) -> None:
    """Edits share the workspace's chat.update bucket; posts wait per channel."""
    now = [100.0]

    async def sleep(seconds: float) -> None:
        now[0] += seconds

    paced = SlackTransport(make_client(BOT_TOKEN, slack_api.url))
    paced.pacer = SlackPacer(clock=lambda: now[0], sleep=sleep)
    other = RoomKey("slack", "C0OTHER", "1732870800.000200")
    ids = await asyncio.gather(*(paced.post(r, msg()) for r in (ROOM, other)))
    assert paced.expected_wait("post", ROOM) == 1.0  # the channel's one post a second
    assert paced.expected_wait("edit", ROOM) == 0.0  # no edit made yet
    await paced.edit(other, ids[1], msg("REVISE", kind=MessageKind.VERDICT))
    # the edit in another channel spaced this room's next edit (Tier 3 at 90 %)
    edit_spacing = SLACK_LIMITS["chat.update"].interval / TIER_HEADROOM
    assert paced.expected_wait("edit", ROOM) == pytest.approx(edit_spacing)
    assert paced.expected_wait("post", ROOM) == 1.0


async def test_pacing_avoids_a_429_storm(slack_api: FakeSlackAPI,
                                         instant_retry: list[float]) -> None:
    """A burst into one channel: paced, Slack never says 429; unpaced, it does."""
    slack_api.post_rate = 0.05
    paced = SlackTransport(make_client(BOT_TOKEN, slack_api.url), post_interval=0.06)
    await asyncio.gather(*(paced.post(ROOM, msg(f"verdict {i}")) for i in range(4)))
    assert slack_api.rate_limited == 0 and len(slack_api.calls_to("chat.postMessage")) == 4

    slack_api._last_post.clear()
    unpaced = SlackTransport(make_client(BOT_TOKEN, slack_api.url), post_interval=0)
    await asyncio.gather(*(unpaced.post(ROOM, msg(f"again {i}")) for i in range(4)),
                         return_exceptions=True)
    assert slack_api.rate_limited > 0
