"""Every 429 Slack answers is counted in `tribunal_rate_limited_total{service="slack"}`."""

from __future__ import annotations

from adapters.slack.transport import make_client
from bot import metrics
from tests.fakes.slack_api import FakeSlackAPI


def slack_429s() -> float:
    return metrics.REGISTRY.get_sample_value(
        "tribunal_rate_limited_total", {"service": "slack"}) or 0.0


async def test_each_429_is_counted_and_the_call_still_succeeds() -> None:
    async with FakeSlackAPI() as api:
        api.rate_limit("chat.postMessage", retry_after=0, times=2)
        client = make_client(api.bot_token, api.url)
        before = slack_429s()
        response = await client.chat_postMessage(channel="C1", text="hi")
        assert response["ok"]
        assert len(api.calls_to("chat.postMessage")) == 3
        assert slack_429s() - before == 2
