"""Values an owner's fix sets in code, read against the points that asked
them in words: a fix that sets the very value a point asked answers it
(`fixed_by_value`), and teaches it the setting's name (`names_set`), so that
another reviewer asking that setting otherwise reverses it. Pure;
`bot.detection` applies both when an owner turn closes.
"""

from __future__ import annotations

import re

from bot import wording as w
from bot.finding import TOUCH, Finding, OwnerAction
from bot.findings import Act, owner_clause
from bot.points import items
from bot.quantity_words import numerals
from bot.topics import score, topic

# "`CHECKOUT_V2_DEFAULT = False`", "`timeout: 30`": a name set to a value in code.
_SET_IN_CODE = re.compile(r"`([A-Za-z_][\w.-]*)\s*(?:=|:)\s*[\"']?([^`\"'\n=]{1,40}?)[\"']?\s*`")
# A value a finding asks for without naming its setting ("기본값을 `False`로
# 고정", "한 페이지에 20개 이하로"): `=false@`, `30s@`, `<=20개@`; not a
# removal, a presence or a stance.
_UNNAMED_VALUE = re.compile(r"(?:=|<=|>=)?([^@!+\-^~<>=][^@]*)@$")
# A count said with its counter word ("20개"): `PAGE_SIZE = 20` sets it.
_COUNT = re.compile(r"(\d+(?:\.\d+)?)(?:개|건|명|회)?")


def _core(value: str) -> str:
    count = _COUNT.fullmatch(value)
    return count.group(1) if count else value


def _assigned(messages: list[str], finding: Finding,
              others: list[Finding]) -> dict[str, set[str]]:
    """The values the turn sets names to in code, each with the names, where
    the clause may be about `finding`: not an aside ("참고로 로그가 많아
    `VERBOSE_SQL = False`로 바꿨습니다"), not a name another finding holds, and
    sharing something with the finding, unless it is the turn's one fix
    ("`PAGE_SIZE = 20` 으로 바꿨습니다" for "한 페이지에 20개 이하로") or the
    value says enough by itself (a size, "`10 * 1024 * 1024`" for "10MB";
    not `False` or `1`)."""
    held = {a for f in others if f is not finding for a in f.anchors}
    said = items(messages)
    one_fix = sum(owner_clause(text).act is Act.FIX for _, text in said) == 1
    set_to: dict[str, set[str]] = {}
    for _, text in said:
        if w.UNRELATED.match(text) or w.LEAD_IN.match(text):
            continue
        linked = one_fix or score(topic(text), finding.topic()) >= TOUCH
        for match in _SET_IN_CODE.finditer(text):
            name = match.group(1).lower().rsplit(".", 1)[-1]
            value = _core(numerals(match.group(2).strip()).lower())
            if "code:" + name not in held and (linked or _SPECIFIC.fullmatch(value)):
                set_to.setdefault(value, set()).add(name)
    return set_to


# A value that names what it is by itself: a number with its unit, or of two digits or more.
_SPECIFIC = re.compile(r"\d+(?:\.\d+)?(?:[a-z%]+|[가-힣]+)|\d{2,}(?:\.\d+)?")


def _unnamed(findings: list[Finding], wanted: OwnerAction,
             actions: dict[str, OwnerAction]) -> dict[str, list[tuple[Finding, str]]]:
    """The unnamed values the findings the turn did `wanted` to asked, by value."""
    asked: dict[str, list[tuple[Finding, str]]] = {}
    for finding in findings:
        if actions.get(finding.label) is not wanted:
            continue
        for value in finding.values:
            unnamed = _UNNAMED_VALUE.match(value)
            if unnamed:
                asked.setdefault(_core(unnamed.group(1)), []).append((finding, value))
    return asked


def fixed_by_value(findings: list[Finding], actions: dict[str, OwnerAction],
                   messages: list[str]) -> set[str]:
    """Findings the turn's words left untouched though a fix it reports sets the
    very value they asked: "한 페이지에 20개 이하로 보여야 합니다" answered with
    "`PAGE_SIZE = 20` 으로 바꿨습니다". Only where no other finding asked that
    value and the turn sets one name to it."""
    if not any(owner_clause(text).act is Act.FIX for _, text in items(messages)):
        return set()
    open_ = [f for f in findings if f.is_open]
    return {askers[0][0].label
            for value, askers in _unnamed(open_, OwnerAction.UNTOUCHED, actions).items()
            if len({f.label for f, _ in askers}) == 1
            and len(_assigned(messages, askers[0][0], findings).get(value, ())) == 1}


def names_set(findings: list[Finding], actions: dict[str, OwnerAction],
              messages: list[str]) -> dict[str, tuple[str, str]]:
    """The settings an owner's fix names for findings that asked a value without
    naming what takes it: label -> (the value keyed by that setting, its anchor).

    "기본값을 상수로 빼서 `False`로 고정해 주세요", answered with
    "`CHECKOUT_V2_DEFAULT = False` 상수로 분리했습니다": that finding asked
    `CHECKOUT_V2_DEFAULT` to be false, and another reviewer asking it `True`
    reverses it. Only where it cannot be another's: the fix sets one name to
    that value, and one fixed finding asked it.
    """
    out: dict[str, tuple[str, str]] = {}
    for value, askers in _unnamed(findings, OwnerAction.FIX, actions).items():
        if len({f.label for f, _ in askers}) != 1:
            continue
        names = _assigned(messages, askers[0][0], findings).get(value, set())
        if len(names) == 1:
            (name,) = names
            finding, unnamed_value = askers[0]
            out[finding.label] = (f"{unnamed_value}{name}", "code:" + name)
    return out
