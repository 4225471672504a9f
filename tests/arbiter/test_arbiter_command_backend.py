"""The `command` backend with small scripts: stdin in, stdout out, timeout, workdir."""

from __future__ import annotations

import asyncio
import shlex
import sys
import time
from pathlib import Path

from bot.arbiter.service import Arbitrator
from bot.models import VerdictKind, VerdictSource
from tests.arbiter.arbiter_helpers import Sleeps, make_ctx, make_settings

GOOD = """
import os, sys
data = sys.stdin.read()
open("seen_prompt.txt", "w", encoding="utf-8").write(data)
print("REVISE 리뷰어가 맞습니다. `login.py` 42번째 줄을 고치세요. (cwd=" + os.getcwd() + ")")
"""

SLOW = """
import os, subprocess, sys, time
child = subprocess.Popen(["sleep", "60"])
open("pids.txt", "w").write(f"{os.getpid()} {child.pid}")
sys.stdout.flush()
time.sleep(60)
"""

FAILING = """
import sys
with open("runs.txt", "a") as fh:
    fh.write("x")
sys.stderr.write("boom with SECRET_TOKEN=abc\\n")
sys.exit(3)
"""


def command_for(tmp_path: Path, source: str) -> str:
    script = tmp_path / "judge.py"
    script.write_text(source, encoding="utf-8")
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(script))}"


def settings_for(tmp_path: Path, source: str, **kw: object) -> object:
    return make_settings(
        arbiter_backend="command",
        arbiter_command=command_for(tmp_path, source),
        arbiter_workdir=str(tmp_path),
        **kw,
    )


async def test_command_backend_verdict(tmp_path: Path) -> None:
    out = await Arbitrator(settings_for(tmp_path, GOOD), sleep=Sleeps()).arbitrate(make_ctx())  # type: ignore[arg-type]
    assert out.verdict.kind == VerdictKind.REVISE
    assert out.verdict.source == VerdictSource.LLM
    assert out.backend == "command"
    assert f"cwd={tmp_path}" in out.verdict.text  # ran in the working directory
    seen = (tmp_path / "seen_prompt.txt").read_text(encoding="utf-8")
    assert "# Role: arbiter" in seen and "<room_data" in seen  # system + prompt on stdin


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in state


async def test_command_timeout_kills_process_group(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, SLOW, arbiter_timeout=0.5, arbiter_retries=0)
    started = time.monotonic()
    out = await Arbitrator(settings, sleep=Sleeps()).arbitrate(make_ctx())  # type: ignore[arg-type]
    assert time.monotonic() - started < 10
    assert out.verdict.source == VerdictSource.FALLBACK
    assert out.verdict.kind == VerdictKind.ESCALATE
    assert any("timed out" in p for p in out.problems)
    pids = [int(p) for p in (tmp_path / "pids.txt").read_text().split()]
    for _ in range(50):  # the kernel may need a moment to reap
        if not any(_alive(pid) for pid in pids):
            break
        await asyncio.sleep(0.05)
    assert not any(_alive(pid) for pid in pids)


async def test_command_nonzero_exit_retried_then_fallback(tmp_path: Path) -> None:
    sleeps = Sleeps()
    settings = settings_for(tmp_path, FAILING, arbiter_retries=2)
    out = await Arbitrator(settings, sleep=sleeps).arbitrate(make_ctx())  # type: ignore[arg-type]
    assert out.verdict.source == VerdictSource.FALLBACK
    assert (tmp_path / "runs.txt").read_text() == "xxx"
    assert len(sleeps.calls) == 2
    assert "SECRET_TOKEN" not in out.model_dump_json()  # stderr is not recorded
    assert any("status 3" in p for p in out.problems)


async def test_missing_binary_falls_back_without_retries(tmp_path: Path) -> None:
    sleeps = Sleeps()
    settings = make_settings(arbiter_backend="command", arbiter_command="/nonexistent/judge --flag")
    out = await Arbitrator(settings, sleep=sleeps).arbitrate(make_ctx())
    assert out.verdict.source == VerdictSource.FALLBACK and sleeps.calls == []


async def test_unset_command_falls_back() -> None:
    out = await Arbitrator(make_settings(arbiter_backend="command")).arbitrate(make_ctx())
    assert out.verdict.source == VerdictSource.FALLBACK
    assert "사용할 수 없어" in out.verdict.text
