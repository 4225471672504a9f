"""The layering rules of the source tree, read from the code's imports.

The core (`bot/`), storage and the prompts never import an adapter: adapters
turn platform events into core calls, never the other way round. The one
exception is the composition root, `bot/app.py`, which builds the adapters
from the settings. Imports inside functions count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
COMPOSITION_ROOT = ROOT / "bot" / "app.py"
PLATFORM_SDKS = ("slack_sdk", "slack_bolt", "discord")


def imported(path: Path) -> list[tuple[int, str]]:
    """(line, module) for every import statement in the file."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def sources(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py"))


def _is(module: str, top: str) -> bool:
    return module == top or module.startswith(top + ".")


@pytest.mark.parametrize("folder", ["bot", "storage", "prompts"])
def test_the_core_imports_no_adapter(folder: str) -> None:
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sources(folder) if path != COMPOSITION_ROOT
        for line, module in imported(path) if _is(module, "adapters")
    ]
    assert wrong == []


@pytest.mark.parametrize("folder", ["bot", "storage", "prompts"])
def test_the_core_imports_no_platform_sdk(folder: str) -> None:
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in sources(folder)
        for line, module in imported(path) if any(_is(module, sdk) for sdk in PLATFORM_SDKS)
    ]
    assert wrong == []


def test_the_composition_root_is_where_adapters_are_built() -> None:
    # The rule above has one exception; it must still be the place that uses it.
    assert any(_is(module, "adapters") for _, module in imported(COMPOSITION_ROOT))


def test_an_adapter_imports_no_other_platform() -> None:
    folders = {"slack": ("adapters.discord", "discord"),
               "discord": ("adapters.slack", "slack_sdk", "slack_bolt"),
               "console": ("adapters.slack", "adapters.discord", "slack_sdk", "slack_bolt",
                           "discord")}
    wrong = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for name, banned in folders.items()
        for path in sources(f"adapters/{name}")
        for line, module in imported(path) if any(_is(module, b) for b in banned)
    ]
    assert wrong == []
