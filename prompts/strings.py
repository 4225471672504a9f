"""Every string the bot writes, read from the gettext catalogs in `prompts/locale`.

Each language is one catalog, `locale/<lang>/LC_MESSAGES/tribunal.po`, compiled
to the `.mo` beside it (`python -m prompts.build`); a new language is a new
catalog, not code. A msgid is a key (`progress`, `confirmation`, ...) rather
than English text, so that every language, English included, is a translation
and a missing one shows as a missing key, not as silently English text.

`t(key, lang, **fields)` looks the key up in `lang`'s catalog and fills the
fields with `str.format`. A language that is not shipped gets the default
(`DEFAULT_LANGUAGE`), the product's own.
"""

from __future__ import annotations

import gettext
from functools import cache
from importlib import resources
from typing import Any

from bot.markup import Marked, strip

DOMAIN = "tribunal"
DEFAULT_LANGUAGE = "ko"


def _locale_dir() -> Any:
    return resources.files(__package__).joinpath("locale")


@cache
def catalog(lang: str) -> dict[str, str]:
    """Key -> text of one shipped language (empty when there is no such catalog)."""
    mo = _locale_dir().joinpath(lang, "LC_MESSAGES", f"{DOMAIN}.mo")
    if not mo.is_file():
        return {}
    with mo.open("rb") as handle:
        translations = gettext.GNUTranslations(handle)
    # The header entry (msgid "") is metadata, not a string of the bot.
    return {
        str(key): str(text)
        for key, text in translations._catalog.items()  # type: ignore[attr-defined]
        if key
    }


@cache
def shipped() -> tuple[str, ...]:
    """Every language with a compiled catalog, the default first."""
    names = sorted(
        entry.name
        for entry in _locale_dir().iterdir()
        if entry.joinpath("LC_MESSAGES", f"{DOMAIN}.mo").is_file()
    )
    return tuple(sorted(names, key=lambda name: name != DEFAULT_LANGUAGE))


def keys() -> frozenset[str]:
    """Every key the bot uses: the default catalog's."""
    return frozenset(catalog(DEFAULT_LANGUAGE))


def supported(lang: str | None) -> str | None:
    """`lang` (or its base: `en-US` -> `en`) when a complete catalog ships it."""
    if not lang:
        return None
    from prompts import languages

    base = lang.replace("_", "-").split("-")[0].lower()
    return base if base in languages() else None


def t(key: str, lang: str = DEFAULT_LANGUAGE, /, **fields: Any) -> str:
    template = catalog(supported(lang) or DEFAULT_LANGUAGE).get(key)
    if template is None:
        template = catalog(DEFAULT_LANGUAGE)[key]  # KeyError: a key no catalog has
    # Only text the core marked on purpose may carry mention/time markers;
    # a field quoting a room or a model never does (see bot.markup).
    safe = {
        name: value if isinstance(value, Marked) or not isinstance(value, str) else strip(value)
        for name, value in fields.items()
    }
    return template.format(**safe)
