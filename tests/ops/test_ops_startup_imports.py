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


RUN_PROBE = """
import sys
import adapters.slack.runner, bot.app, bot.cli, bot.engine, storage.sqlite
from bot.cli import _parser
from bot.config import load_settings
_parser().parse_args(["run"])
load_settings(None)
print(*sorted(m for m in ("prometheus_client",) if m in sys.modules))
from bot import metrics
metrics.DEADLOCKS.labels("manual").inc()
print(metrics.REGISTRY.get_sample_value("tribunal_deadlocks_total", {"trigger": "manual"}),
      "prometheus_client" in sys.modules)
"""


def test_the_run_start_path_imports_no_metrics_library_until_a_metric_is_used() -> None:
    """What `tribunal run` imports before it is ready leaves out prometheus-client
    (made at the first metric used)."""
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("TRIBUNAL_", "SLACK_", "DISCORD_", "OPENAI_", "ANTHROPIC_"))}
    result = subprocess.run([sys.executable, "-c", RUN_PROBE], capture_output=True, text=True,
                            env=clean, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["", "1.0 True"]
