"""Compile every `prompts/locale/*/LC_MESSAGES/*.po` into the `.mo` beside it.

Run after editing a catalog: `python -m prompts.build` (needs Babel, a test
dependency). The `.mo` files are committed, so installing Tribunal needs
nothing but Python; a test checks that each one matches its `.po`.
"""

from __future__ import annotations

from pathlib import Path

LOCALE = Path(__file__).resolve().parent / "locale"


def read_po(path: Path) -> dict[str, str]:
    """Key -> text of a `.po` file (fuzzy and empty entries left out, like msgfmt)."""
    from babel.messages.pofile import read_po as babel_read_po

    with path.open("rb") as handle:
        po = babel_read_po(handle)
    return {
        str(m.id): str(m.string)
        for m in po
        if m.id and m.string and not m.fuzzy
    }


def compile_all() -> list[Path]:
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po as babel_read_po

    written = []
    for po_path in sorted(LOCALE.glob("*/LC_MESSAGES/*.po")):
        with po_path.open("rb") as handle:
            catalog = babel_read_po(handle)
        mo_path = po_path.with_suffix(".mo")
        with mo_path.open("wb") as handle:
            write_mo(handle, catalog)
        written.append(mo_path)
    return written


if __name__ == "__main__":
    for path in compile_all():
        print(path.relative_to(LOCALE.parent.parent))
