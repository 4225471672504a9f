"""`tribunal run` in HTTP mode as a real subprocess against the fake Web API:
signed events in, a verdict with buttons out, a click answered, a forged
request refused, a clean shutdown on SIGTERM; once on the default SQLite file
and once on a PostgreSQL database."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import time
from pathlib import Path

import aiohttp
import pytest

from tests.fakes.slack_api import FakeSlackAPI
from tests.slack.conftest import (
    SIGNING_SECRET,
    block_action,
    encode_body,
    message_event,
    signed_headers,
    slash_command,
)

THREAD = "1795946400.000100"
ROOT = str(Path(__file__).resolve().parents[2])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def wait_until(check, what: str, within: float = 20.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + within
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """TRIBUNAL_DATABASE for the run: the default SQLite file, then a PostgreSQL URL."""
    if request.param == "sqlite":
        return str(tmp_path / "run.db")
    return str(request.getfixturevalue("postgres_database"))


async def test_tribunal_run_http_mode_end_to_end(
    slack_api: FakeSlackAPI, tmp_path: Path, database: str
) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TRIBUNAL_", "SLACK_", "DISCORD_")) and "proxy" not in k.lower()}
    # This checkout first: the working directory below is not the project's.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [ROOT, env.get("PYTHONPATH")]))
    env.update({
        "SLACK_BOT_TOKEN": slack_api.bot_token,
        "SLACK_SIGNING_SECRET": SIGNING_SECRET,
        "TRIBUNAL_SLACK_MODE": "http",
        "TRIBUNAL_SLACK_API_URL": slack_api.url,
        "TRIBUNAL_HTTP_PORT": str(port),
        "TRIBUNAL_HTTP_HOST": "127.0.0.1",
        "TRIBUNAL_DATABASE": database,
        "TRIBUNAL_ARBITER_BACKEND": "none",
    })
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "run", cwd=tmp_path, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as http:

            async def healthy() -> bool:
                if proc.returncode is not None:
                    raise AssertionError(f"tribunal run exited: {await proc.stderr.read()!r}")
                try:
                    async with http.get(f"{base}/healthz") as r:
                        return r.status == 200
                except aiohttp.ClientError:
                    return False

            async def send(body: dict, secret: str = SIGNING_SECRET) -> int:
                raw, ctype = encode_body(body)
                async with http.post(f"{base}/slack/events", data=raw.encode(),
                                     headers=signed_headers(raw, ctype, secret=secret)) as r:
                    return r.status

            await wait_until(healthy, "the HTTP endpoint")
            assert await send(message_event("forged", ts=THREAD), secret="nope") == 401

            assert await send(slash_command("roles owner:BOWNER reviewer:<@UREVIEWER|rev>",
                                            user="UADMIN",
                                            response_url=slack_api.response_url())) == 200

            async def bound() -> bool:
                return bool(slack_api.responses)

            await wait_until(bound, "the /arbiter reply")
            assert "✅" in slack_api.responses[0]["text"]

            assert await send(message_event("로그인 버그 고쳐줘", ts=THREAD)) == 200
            owner = message_event("BLOCKED: DB 접속 정보가 없어 진행할 수 없습니다.", user=None,
                                  bot_id="BOWNER", subtype="bot_message", thread_ts=THREAD,
                                  ts="1795946401.000200")
            assert await send(owner) == 200
            assert await send(message_event("접속 정보 없이도 목(mock)으로 테스트할 수 있습니다.",
                                            user="UREVIEWER", bot_id="BREVIEW",
                                            thread_ts=THREAD, ts="1795946402.000300")) == 200

            def verdict() -> dict | None:
                for (_, ts), m in slack_api.messages.items():
                    if m.get("thread_ts") == THREAD and any(
                            b["type"] == "actions" for b in m.get("blocks", [])):
                        return dict(m, ts=ts)
                return None

            async def escalated() -> bool:
                return verdict() is not None

            await wait_until(escalated, "the ESCALATE verdict with buttons")
            message = verdict()
            assert message is not None
            value = next(b for b in message["blocks"] if b["type"] == "actions")[
                "elements"][0]["value"]
            assert await send(block_action(value, user="UALICE", thread_ts=THREAD,
                                           message_ts=message["ts"],
                                           response_url=slack_api.response_url())) == 200

            async def confirmed() -> bool:
                return any(c.args.get("text", "").startswith("✅ 사용자 결정: 1.")
                           for c in slack_api.calls_to("chat.postMessage"))

            await wait_until(confirmed, "the confirmation in the thread")
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
        try:
            _, stderr = await asyncio.wait_for(proc.communicate(), 20)
        except TimeoutError:
            proc.kill()
            _, stderr = await proc.communicate()
            raise AssertionError("no clean exit on SIGTERM:\n" + stderr.decode()[-3000:]) from None
    log = stderr.decode(errors="replace")
    assert proc.returncode == 0, log
    assert slack_api.bot_token not in log and SIGNING_SECRET not in log
