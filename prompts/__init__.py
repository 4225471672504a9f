"""The arbiter's system prompt, every user-facing string, and the languages shipped."""

from importlib import resources


def arbiter_system_prompt() -> str:
    return resources.files(__package__).joinpath("arbiter.md").read_text(encoding="utf-8")


def languages() -> tuple[str, ...]:
    """The languages every user-facing string is translated into; the first is the default.

    The catalogs shipped in `prompts/locale` are the one place that decides: a
    language counts only when its catalog has every key, so settings can never
    name a half translation.
    """
    from prompts.strings import catalog, keys, shipped

    wanted = keys()
    return tuple(lang for lang in shipped() if wanted <= catalog(lang).keys())
