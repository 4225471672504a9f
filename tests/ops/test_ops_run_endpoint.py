"""`tribunal run` as a real subprocess, watched the way an operator watches it:
/metrics and /healthz scraped over HTTP on TRIBUNAL_METRICS_PORT, the log read
as JSON lines, against the local fake Slack and Discord."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # so `tests.*` imports whatever the rootdir setup
    sys.path.insert(0, str(ROOT))

from tests.cli.test_cli_run_lifecycle import Tribunal, free_port, refused_port  # noqa: E402
from tests.fakes.slack_api import FakeSlackAPI  # noqa: E402
from tests.slack.conftest import (  # noqa: E402
    CHANNEL,
    SIGNING_SECRET,
    encode_body,
    message_event,
    signed_headers,
    slash_command,
)

THREAD = "1795946400.000100"
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture
async def slack_api(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeSlackAPI]:
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    async with FakeSlackAPI() as api:
        api.add_user("UADMIN", name="boss", admin=True)
        yield api


@pytest.fixture
async def tribunals() -> AsyncIterator[list[Tribunal]]:
    started: list[Tribunal] = []
    yield started
    for t in started:
        await t.kill()


async def scrape(http: aiohttp.ClientSession, port: int) -> Samples:
    async with http.get(f"http://127.0.0.1:{port}/metrics") as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        text = await response.text()
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


async def health(http: aiohttp.ClientSession, port: int) -> tuple[int, dict[str, Any]]:
    async with http.get(f"http://127.0.0.1:{port}/healthz") as response:
        return response.status, await response.json()


async def until(check: Callable[[], Any], bot: Tribunal, within: float = 30.0) -> Any:
    """Poll an async check until it returns something truthy (a wait, not a timing claim)."""
    async def poll() -> Any:
        while True:  # polling an HTTP endpoint of another process: no event to wait on
            if result := await check():
                return result
            await asyncio.sleep(0.05)

    try:
        return await asyncio.wait_for(poll(), within)
    except TimeoutError:
        raise AssertionError(f"never happened; the log:\n{bot.log[-4000:]}") from None


def json_lines(log: str) -> list[dict[str, Any]]:
    # Every line is one JSON object: json.loads fails the test on any other line.
    return [json.loads(line) for line in log.splitlines() if line.strip()]


async def test_metrics_health_and_json_logs_of_a_deadlock_while_discord_is_down(
    slack_api: FakeSlackAPI, tmp_path: Path, tribunals: list[Tribunal],
) -> None:
    port, metrics_port = free_port(), free_port()
    bot = await Tribunal(tmp_path, {
        "SLACK_BOT_TOKEN": slack_api.bot_token, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "TRIBUNAL_SLACK_MODE": "http", "TRIBUNAL_SLACK_API_URL": slack_api.url,
        "TRIBUNAL_HTTP_PORT": str(port),
        "DISCORD_BOT_TOKEN": "discord-token-never-logged",
        "TRIBUNAL_DISCORD_API_URL": f"http://127.0.0.1:{refused_port()}",
        "TRIBUNAL_METRICS_PORT": str(metrics_port), "TRIBUNAL_LOG_FORMAT": "json",
    }).start()
    tribunals.append(bot)
    await bot.logged("slack: serving /slack/events", "discord: not available")

    async with aiohttp.ClientSession() as http:
        async def send(body: dict[str, object]) -> None:
            raw, ctype = encode_body(body)
            async with http.post(f"http://127.0.0.1:{port}/slack/events", data=raw.encode(),
                                 headers=signed_headers(raw, ctype)) as response:
                assert response.status == 200

        await send(slash_command("roles owner:BOWNER reviewer:UREVIEWER", user="UADMIN",
                                 response_url=slack_api.response_url()))
        await slack_api.until(lambda: slack_api.responses, within=20)  # roles bound
        await send(message_event("로그인 버그 고쳐줘", ts=THREAD))
        await send(message_event("BLOCKED: DB 접속 정보가 없습니다.", user=None, bot_id="BOWNER",
                                 subtype="bot_message", thread_ts=THREAD, ts="1795946401.000200"))
        await send(message_event("목으로 테스트할 수 있습니다.", user="UREVIEWER",
                                 thread_ts=THREAD, ts="1795946402.000300"))

        verdicts = ("tribunal_verdicts_total", (("kind", "ESCALATE"), ("source", "none")))

        async def judged() -> Samples | None:
            samples = await scrape(http, metrics_port)
            return samples if samples.get(verdicts) == 1 else None

        samples = await until(judged, bot)
        assert all(name.startswith("tribunal_") for name, _ in samples)
        assert samples[("tribunal_deadlocks_total", (("trigger", "blocked"),))] == 1
        assert samples[("tribunal_deadlocks_total", (("trigger", "no_progress"),))] == 0
        assert samples[("tribunal_arbiter_latency_seconds_count", (("backend", "none"),))] == 1
        assert samples[("tribunal_escalations_pending", ())] == 1
        assert samples[("tribunal_settings_changes_total", (("action", "roles"),))] == 1
        assert ("tribunal_outbox_depth", ()) in samples
        assert samples[("tribunal_rate_limited_total", (("service", "slack"),))] == 0
        assert samples[("tribunal_platform_up", (("platform", "slack"),))] == 1
        assert samples[("tribunal_platform_up", (("platform", "discord"),))] == 0
        assert samples[("tribunal_database_up", ())] == 1

        status, report = await health(http, metrics_port)
        assert status == 503, report  # Discord is not connected
        assert report["database"] == {"ok": True}
        assert report["platforms"]["slack"] == {"connected": True}
        assert report["platforms"]["discord"]["connected"] is False

    assert await bot.stop_with(signal.SIGTERM) == 0, bot.log
    lines = json_lines(bot.log)
    assert {"ts", "level", "logger", "message"} <= set(lines[0])
    start = next(e for e in lines if e["message"].startswith("tribunal running"))
    assert start["level"] == "INFO"
    assert "slack (HTTP mode" in start["message"] and "discord (gateway" in start["message"]
    assert "arbiter: none" in start["message"]
    room = f"slack:{CHANNEL}:{THREAD}"
    by_event = {e["event"]: e for e in lines if "event" in e}
    assert by_event["deadlock"]["room"] == room and by_event["deadlock"]["trigger"] == "blocked"
    verdict = by_event["verdict"]
    assert verdict["room"] == room and verdict["level"] == "INFO"
    assert (verdict["verdict"], verdict["source"], verdict["backend"]) == ("ESCALATE", "none",
                                                                          "none")
    assert isinstance(verdict["latency_ms"], int)
    assert by_event["settings_changed"]["action"] == "roles"
    assert by_event["settings_changed"]["by"] == "UADMIN"
    assert "discord-token-never-logged" not in bot.log and slack_api.bot_token not in bot.log
    assert SIGNING_SECRET not in bot.log


async def test_health_is_ok_when_every_platform_is_connected(
    slack_api: FakeSlackAPI, tmp_path: Path, tribunals: list[Tribunal],
) -> None:
    metrics_port = free_port()
    bot = await Tribunal(tmp_path, {
        "SLACK_BOT_TOKEN": slack_api.bot_token, "SLACK_APP_TOKEN": slack_api.app_token,
        "TRIBUNAL_SLACK_API_URL": slack_api.url, "TRIBUNAL_METRICS_PORT": str(metrics_port),
    }).start()
    tribunals.append(bot)
    await bot.logged("slack: connected in Socket Mode",
                     f"metrics on http://127.0.0.1:{metrics_port}/metrics")
    assert "slack (Socket Mode)" in bot.log

    async with aiohttp.ClientSession() as http:
        async def healthy() -> dict[str, Any] | None:
            status, report = await health(http, metrics_port)
            return report if status == 200 else None

        report = await until(healthy, bot)
    [instance] = report.pop("instances")  # this process, alive on its database
    assert bot.proc is not None and instance["pid"] == bot.proc.pid
    assert report == {"status": "ok", "database": {"ok": True},
                      "platforms": {"slack": {"connected": True}}}
    assert await bot.stop_with(signal.SIGINT) == 0, bot.log
