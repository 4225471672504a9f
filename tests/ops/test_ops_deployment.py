"""The deployment files, checked offline (no Docker engine is needed): hadolint
lints the Dockerfile, check-jsonschema validates compose.yaml against the
compose specification's schema it bundles, and .env.example lists every setting
with its default."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from bot.config import Settings, env_name

ROOT = Path(__file__).resolve().parents[2]


def tool(name: str) -> str:
    """The tool installed with the test extra, next to this interpreter or on PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    assert found, f"{name} is missing: pip install -e '.[test]'"
    return found


def run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, cwd=cwd, timeout=120,
                          check=False)


def test_dockerfile_passes_hadolint() -> None:
    result = run(tool("hadolint"), "--no-color", "Dockerfile")
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_does_fail_a_bad_dockerfile(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("FROM python\nRUN cd /app && pip install x\n")
    assert run(tool("hadolint"), "--no-color", "Dockerfile", cwd=tmp_path).returncode != 0


def test_dockerfile_runs_as_non_root_with_the_database_on_a_volume() -> None:
    text = (ROOT / "Dockerfile").read_text()
    users = re.findall(r"^USER\s+(\S+)", text, re.M)
    assert users and users[-1].split(":")[0] not in ("root", "0")
    assert re.search(r'^VOLUME \["/data"\]', text, re.M)
    assert "TRIBUNAL_DATABASE=/data/tribunal.db" in text
    assert re.search(r'^CMD \["run"\]', text, re.M) and 'ENTRYPOINT ["tribunal"]' in text


def test_compose_file_is_valid_for_the_compose_schema() -> None:
    result = run(tool("check-jsonschema"), "--builtin-schema", "vendor.compose-spec",
                 "compose.yaml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_schema_check_does_catch_a_mistake(tmp_path: Path) -> None:
    (tmp_path / "compose.yaml").write_text("services:\n  tribunal:\n    imag: tribunal\n")
    result = run(tool("check-jsonschema"), "--builtin-schema", "vendor.compose-spec",
                 "compose.yaml", cwd=tmp_path)
    assert result.returncode != 0 and "imag" in result.stdout


def test_compose_runs_tribunal_with_postgresql_and_keeps_metrics_local() -> None:
    compose = YAML(typ="safe").load((ROOT / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"tribunal", "postgres"}
    tribunal = services["tribunal"]
    assert tribunal["environment"]["TRIBUNAL_DATABASE"].startswith("postgresql://tribunal:")
    assert tribunal["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert "127.0.0.1:9100:9100" in tribunal["ports"]
    assert "healthcheck" in services["postgres"]


def _example() -> dict[str, str]:
    found = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        match = re.match(r"^#?\s*([A-Z][A-Z0-9_]*)=(\S*)", line)
        if match:
            found[match[1]] = match[2]
    return found


def test_env_example_lists_every_setting_with_its_default() -> None:
    example = _example()
    names = {env_name(field) for field in Settings.model_fields}
    assert names - set(example) == set(), "missing from .env.example"
    assert set(example) - names - {"POSTGRES_PASSWORD"} == set(), "not a setting"
    for field, info in Settings.model_fields.items():
        default = info.get_default(call_default_factory=True)
        shown = example[env_name(field)]
        if default is None or default == []:
            assert shown == "", (field, shown)
        elif isinstance(default, bool):
            assert shown == str(default).lower(), field
        elif isinstance(default, float):
            assert float(shown) == default, field
        else:
            assert shown == str(default), field


def test_env_example_sets_nothing() -> None:
    """Copied to .env as it is, it changes no default (an empty token is not "unset")."""
    lines = (ROOT / ".env.example").read_text().splitlines()
    assert all(not line.strip() or line.startswith("#") for line in lines)


@pytest.mark.parametrize("key", ["ExecStart=", "User=", "KillSignal=SIGTERM", "TimeoutStopSec=",
                                 "EnvironmentFile=", "RestartPreventExitStatus=2"])
def test_systemd_unit_example(key: str) -> None:
    unit = (ROOT / "docs" / "tribunal.service").read_text()
    assert re.search(rf"^{re.escape(key)}", unit, re.M)
    assert re.search(r"^ExecStart=\S+/tribunal run$", unit, re.M)
