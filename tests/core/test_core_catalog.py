"""The string catalogs: complete in every shipped language, compiled `.mo`
files that match their `.po`, and every key the code asks for present."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from prompts import languages
from prompts.build import LOCALE, read_po
from prompts.strings import DEFAULT_LANGUAGE, catalog, keys, t

ROOT = Path(__file__).resolve().parents[2]
_KEY_CALL = re.compile(r"""\bt\(\s*["']([a-z0-9_]+)["']""")


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_the_shipped_languages_are_read_from_the_catalogs() -> None:
    shipped = sorted(p.parent.parent.name for p in LOCALE.glob("*/LC_MESSAGES/tribunal.po"))
    assert sorted(languages()) == shipped == ["en", "ko"]
    assert languages()[0] == DEFAULT_LANGUAGE


@pytest.mark.parametrize("lang", ["ko", "en"])
def test_each_mo_matches_its_po(lang: str) -> None:
    po = read_po(LOCALE / lang / "LC_MESSAGES" / "tribunal.po")
    assert catalog(lang) == po, "run `python -m prompts.build` after editing a .po"


def test_every_key_in_every_language_with_the_same_fields() -> None:
    for lang in languages():
        entries = catalog(lang)
        assert set(entries) == keys(), lang
        for key in sorted(keys()):
            # Walk every key: each is filled with its own fields in each language.
            fields = _fields(catalog(DEFAULT_LANGUAGE)[key])
            assert _fields(entries[key]) == fields, (lang, key)
            text = t(key, lang, **{name: f"<{name}>" for name in fields})
            assert text.strip(), (lang, key)
            if lang == "en":
                assert not re.search("[가-힣]", text), key
            if lang == "ko":
                assert "을(를)" not in text and "«" not in text, key


def test_every_key_the_code_uses_is_in_the_catalog() -> None:
    used: set[str] = set()
    for folder in ("bot", "adapters", "prompts"):
        for path in (ROOT / folder).rglob("*.py"):
            used |= set(_KEY_CALL.findall(path.read_text(encoding="utf-8")))
    assert used, "the scan found no t() call"
    assert used - keys() == set()


def test_a_language_no_catalog_ships_falls_back_to_the_default() -> None:
    assert t("progress", "ja") == t("progress", DEFAULT_LANGUAGE)
    assert t("progress", "en-US") == t("progress", "en")
