"""`tribunal run` as a real subprocess against the local fake Slack and Discord:
each platform on its own (one refused, the other serving), credentials refused
on both (non-zero exit naming both), and SIGTERM/SIGINT stopping it within
5 seconds in every mode, an arbitration in flight left for recovery."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sqlite3
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # so `tests.fakes` imports whatever the rootdir setup
    sys.path.insert(0, str(ROOT))

from tests.fakes.discord_api import FakeDiscord  # noqa: E402
from tests.fakes.slack_api import FakeSlackAPI  # noqa: E402
from tests.slack.conftest import (  # noqa: E402
    SIGNING_SECRET,
    encode_body,
    message_event,
    signed_headers,
    slash_command,
)

STOP_WITHIN = 5.0  # the promise: SIGTERM or SIGINT ends `tribunal run` within 5 s
THREAD = "1795946400.000100"
PROGRESS = "⚖️ 중재자가 검토 중입니다…"


def refused_port() -> int:
    """A port nothing listens on: connecting to it is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


free_port = refused_port  # bound and released: free for the bot to listen on


class Tribunal:
    """`python -m bot run` with a clean environment; its log read as it comes."""

    def __init__(self, tmp: Path, env: dict[str, str]) -> None:
        base = {k: v for k, v in os.environ.items()
                if not k.startswith(("TRIBUNAL_", "SLACK_", "DISCORD_", "OPENAI_", "ANTHROPIC_"))
                and "proxy" not in k.lower()}
        # The checkout under test, whatever the working directory.
        base["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), base.get("PYTHONPATH")]))
        base.update({"TRIBUNAL_DATABASE": str(tmp / "run.db"), "TRIBUNAL_HTTP_HOST": "127.0.0.1",
                     "TRIBUNAL_ARBITER_BACKEND": "none"})
        base.update(env)
        self.env, self.tmp = base, tmp
        self.proc: asyncio.subprocess.Process | None = None
        self.lines: list[str] = []
        self._changed = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> Tribunal:
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "run", cwd=self.tmp, env=self.env,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
        self._reader = asyncio.create_task(self._read())
        return self

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        async for line in self.proc.stderr:
            self.lines.append(line.decode(errors="replace"))
            self._changed.set()
        self._changed.set()

    @property
    def log(self) -> str:
        return "".join(self.lines)

    async def logged(self, *texts: str, within: float = 30.0) -> None:
        async def seen() -> None:
            while not all(t in self.log for t in texts):
                assert self.proc is not None
                if self.proc.returncode is not None and self._reader is not None \
                        and self._reader.done():
                    raise AssertionError(f"tribunal run exited:\n{self.log[-3000:]}")
                self._changed.clear()
                await self._changed.wait()

        try:
            await asyncio.wait_for(seen(), within)
        except TimeoutError:
            raise AssertionError(f"not logged: {texts}\n{self.log[-3000:]}") from None

    async def stop_with(self, sig: signal.Signals) -> int:
        assert self.proc is not None
        self.proc.send_signal(sig)
        try:
            await asyncio.wait_for(self.proc.wait(), STOP_WITHIN)
        except TimeoutError:
            raise AssertionError(f"still running {STOP_WITHIN} s after {sig.name}:\n"
                                 f"{self.log[-3000:]}") from None
        code = await self.exited()
        # Stopped by the graceful path, not by the deadline that forces an exit.
        assert "shutdown complete" in self.log and "exiting anyway" not in self.log, self.log
        return code

    async def exited(self, within: float = 60.0) -> int:
        assert self.proc is not None and self._reader is not None
        await asyncio.wait_for(self.proc.wait(), within)
        await self._reader
        return int(self.proc.returncode or 0)

    async def kill(self) -> None:
        if self.proc is not None and self.proc.returncode is None:
            self.proc.kill()
            await self.proc.wait()


@pytest.fixture
async def slack_api(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeSlackAPI]:
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(name, raising=False)
    async with FakeSlackAPI() as api:
        api.add_user("UADMIN", name="boss", admin=True)
        yield api


@pytest.fixture
async def fake_discord() -> AsyncIterator[FakeDiscord]:
    fake = await FakeDiscord().start()
    yield fake
    await fake.close()


@pytest.fixture
async def tribunals() -> AsyncIterator[list[Tribunal]]:
    started: list[Tribunal] = []
    yield started
    for t in started:
        await t.kill()


async def test_slack_serves_while_discord_is_refused_and_sigterm_leaves_the_arbitration(
    slack_api: FakeSlackAPI, tmp_path: Path, tribunals: list[Tribunal],
) -> None:
    port = free_port()
    hang = f'{sys.executable} -c "import time; time.sleep(600)"'  # a model that never answers
    bot = await Tribunal(tmp_path, {
        "SLACK_BOT_TOKEN": slack_api.bot_token, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "TRIBUNAL_SLACK_MODE": "http", "TRIBUNAL_SLACK_API_URL": slack_api.url,
        "TRIBUNAL_HTTP_PORT": str(port),
        "DISCORD_BOT_TOKEN": "discord-token",
        "TRIBUNAL_DISCORD_API_URL": f"http://127.0.0.1:{refused_port()}",
        "TRIBUNAL_ARBITER_BACKEND": "command", "TRIBUNAL_ARBITER_COMMAND": hang,
    }).start()
    tribunals.append(bot)
    await bot.logged("slack: serving /slack/events", "discord: not available", "retrying in")

    async with aiohttp.ClientSession() as http:

        async def send(body: dict[str, object]) -> int:
            raw, ctype = encode_body(body)
            async with http.post(f"http://127.0.0.1:{port}/slack/events", data=raw.encode(),
                                 headers=signed_headers(raw, ctype)) as response:
                return response.status

        assert await send(slash_command("roles owner:BOWNER reviewer:UREVIEWER", user="UADMIN",
                                        response_url=slack_api.response_url())) == 200
        await slack_api.until(lambda: slack_api.responses, within=20)
        assert await send(message_event("로그인 버그 고쳐줘", ts=THREAD)) == 200
        assert await send(message_event("BLOCKED: DB 접속 정보가 없습니다.", user=None,
                                        bot_id="BOWNER", subtype="bot_message",
                                        thread_ts=THREAD, ts="1795946401.000200")) == 200
        assert await send(message_event("목으로 테스트할 수 있습니다.", user="UREVIEWER",
                                        thread_ts=THREAD, ts="1795946402.000300")) == 200
        # Handled: the arbitration started and said so in the thread.
        await slack_api.until(lambda: any(m["text"] == PROGRESS
                                          for m in slack_api.messages.values()), within=20)

    assert "retrying in 2 s" in bot.log or "retrying in 1 s" in bot.log
    with sqlite3.connect(tmp_path / "run.db") as conn:
        running = conn.execute("SELECT pid, started_at <= last_seen FROM instances").fetchall()
    assert bot.proc is not None and running == [(bot.proc.pid, 1)]  # registered, beating
    assert await bot.stop_with(signal.SIGTERM) == 0, bot.log
    assert "Traceback" not in bot.log and slack_api.bot_token not in bot.log
    with sqlite3.connect(tmp_path / "run.db") as conn:
        statuses = [r[0] for r in conn.execute("SELECT status FROM arbitrations")]
    assert statuses == ["running"]  # stored, unfinished: the next start resumes it
    with sqlite3.connect(tmp_path / "run.db") as conn:
        assert conn.execute("SELECT COUNT(*) FROM instances").fetchone() == (0,)  # left cleanly


async def test_sigint_stops_run_while_socket_mode_cannot_connect(
    slack_api: FakeSlackAPI, tmp_path: Path, tribunals: list[Tribunal],
) -> None:
    dead_link = f"ws://127.0.0.1:{refused_port()}/link"
    for _ in range(20):
        slack_api.queue("apps.connections.open", body={"ok": True, "url": dead_link})
    bot = await Tribunal(tmp_path, {
        "SLACK_BOT_TOKEN": slack_api.bot_token, "SLACK_APP_TOKEN": slack_api.app_token,
        "TRIBUNAL_SLACK_API_URL": slack_api.url,
    }).start()
    tribunals.append(bot)
    await bot.logged("Failed to connect")  # slack_sdk is retrying the link
    assert await bot.stop_with(signal.SIGINT) == 0, bot.log
    assert "Traceback" not in bot.log


async def test_a_refused_app_token_stops_slack_only_and_sigterm_stops_the_rest(
    slack_api: FakeSlackAPI, tmp_path: Path, tribunals: list[Tribunal],
) -> None:
    bot = await Tribunal(tmp_path, {
        "SLACK_BOT_TOKEN": slack_api.bot_token, "SLACK_APP_TOKEN": "xapp-wrong",
        "TRIBUNAL_SLACK_API_URL": slack_api.url,
        "DISCORD_BOT_TOKEN": "discord-token",
        "TRIBUNAL_DISCORD_API_URL": f"http://127.0.0.1:{refused_port()}",
    }).start()
    tribunals.append(bot)
    await bot.logged("slack: stopped: Slack refused SLACK_APP_TOKEN (invalid_auth)",
                     "discord: not available")
    assert await bot.stop_with(signal.SIGTERM) == 0, bot.log
    assert "xapp-wrong" not in bot.log and "Traceback" not in bot.log


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_connected_socket_mode_and_discord_stop_on_a_signal(
    slack_api: FakeSlackAPI, fake_discord: FakeDiscord, tmp_path: Path,
    tribunals: list[Tribunal], sig: signal.Signals,
) -> None:
    bot = await Tribunal(tmp_path, {
        "SLACK_BOT_TOKEN": slack_api.bot_token, "SLACK_APP_TOKEN": slack_api.app_token,
        "TRIBUNAL_SLACK_API_URL": slack_api.url,
        "DISCORD_BOT_TOKEN": "discord-token", "TRIBUNAL_DISCORD_API_URL": fake_discord.url,
        "TRIBUNAL_DISCORD_GATEWAY_URL": fake_discord.ws_url,
    }).start()
    tribunals.append(bot)
    await bot.logged("slack: connected in Socket Mode", "discord connected as")
    assert await bot.stop_with(sig) == 0, bot.log
    assert "shutdown complete" in bot.log


async def test_refused_credentials_on_every_platform_exit_non_zero_naming_each(
    slack_api: FakeSlackAPI, fake_discord: FakeDiscord, tmp_path: Path,
    tribunals: list[Tribunal],
) -> None:
    fake_discord.fail_next("GET", r"^/users/@me$", 401, {"message": "401: Unauthorized",
                                                         "code": 0}, times=10)
    bot = await Tribunal(tmp_path, {
        "SLACK_BOT_TOKEN": "xoxb-revoked", "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "TRIBUNAL_SLACK_MODE": "http", "TRIBUNAL_SLACK_API_URL": slack_api.url,
        "TRIBUNAL_HTTP_PORT": str(free_port()),
        "DISCORD_BOT_TOKEN": "discord-revoked", "TRIBUNAL_DISCORD_API_URL": fake_discord.url,
        "TRIBUNAL_DISCORD_GATEWAY_URL": fake_discord.ws_url,
    }).start()
    tribunals.append(bot)
    assert await bot.exited() == 1, bot.log
    assert "no platform left running" in bot.log
    assert "SLACK_BOT_TOKEN (invalid_auth)" in bot.log and "DISCORD_BOT_TOKEN (401)" in bot.log
    assert "xoxb-revoked" not in bot.log and "discord-revoked" not in bot.log
    assert "Traceback" not in bot.log
