"""What `tribunal demo` pays for at start: no vendor SDK it does not use."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = """
import contextlib, io, sys
from bot.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["demo"])
print(code, *sorted(m for m in ("anthropic", "openai", "slack_sdk", "slack_bolt", "discord")
                    if m in sys.modules))
"""


def _probe(**env: str) -> list[str]:
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("TRIBUNAL_", "SLACK_", "DISCORD_", "OPENAI_", "ANTHROPIC_"))}
    clean.update(env)
    result = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                            env=clean, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_demo_imports_no_vendor_sdk_and_no_platform_sdk() -> None:
    assert _probe() == ["0"]


def test_demo_with_the_command_backend_imports_no_vendor_sdk() -> None:
    assert _probe(TRIBUNAL_ARBITER_BACKEND="command", TRIBUNAL_ARBITER_COMMAND="false") == ["0"]
