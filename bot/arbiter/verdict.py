"""Parsing and validating the model's answer. Pure functions.

The parser is strict on purpose: a verdict moves two agents, so anything that
is not unmistakably one keyword on the first visible line is not a verdict.
Problems are collected as readable sentences, because they are quoted back to
the model in the single repair request.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.arbiter.language import is_in_language, language_name
from bot.models import Option, Ruling, VerdictKind
from bot.status import visible_lines
from bot.textscan import strip_internal

_KEYWORDS = {
    "PROCEED": VerdictKind.PROCEED,
    "CONTINUE": VerdictKind.PROCEED,  # legacy alias
    "REVISE": VerdictKind.REVISE,
    "RESET": VerdictKind.RESET,
    "ESCALATE": VerdictKind.ESCALATE,
}
_LEAD = re.compile(r"^[\s>#*_~`\-]*")
_PREFIX = re.compile(r"^(?:final\s+)?verdict\s*[:：\-–—]\s*", re.IGNORECASE)
_KEYWORD = re.compile(
    r"^(?P<kw>PROCEED|CONTINUE|REVISE|RESET|ESCALATE)(?![A-Za-z0-9]|_+[A-Za-z0-9])", re.IGNORECASE
)
_SECOND_KEYWORD = re.compile(
    r"^[\s*_`]*(?:/|\||,|or\b|또는|혹은)?\s*(PROCEED|REVISE|RESET|ESCALATE)(?![A-Za-z0-9_])",
    re.IGNORECASE,
)
_TRAILING_MARKUP = re.compile(r"^[\s*_`~]*[:：.\-–—]?[\s*_`~]*")
_OPTION = re.compile(
    r"^\s{0,6}(?:[-*]\s+)?(?:\*\*|__)?\s*(?P<n>[0-9０-９]{1,2})\s*(?:[.)]|번\.?)(?:\*\*|__)?\s+(?P<rest>\S.*)$"
)
_SPLIT = re.compile(r"\s+(?:—|–|-{1,2}|→|->|=>)\s+|\s*[:：]\s+")
_EMPHASIS = re.compile(r"\*\*|\*|`")
_SUB_CONSEQUENCE = re.compile(r"^\s+(?:[-*→]|->)\s*(?P<c>\S.*)$")

_RULING = re.compile(
    r"^[\s>*_`#-]*(?P<word>UPHELD|RETIRED)[*_`]*\s*[:：][*_`]*\s*[*_`]*(?P<label>F\d{1,3})\b[*_`]*\s*$",
    re.IGNORECASE,
)
_RULING_WORD = re.compile(r"^[\s>*_`#-]*(?:UPHELD|RETIRED)\b", re.IGNORECASE)
_WHOLE_FENCE = re.compile(r"^(```|~~~)[\w-]*\n(?P<inner>.*)\n\1\s*$", re.DOTALL)

MIN_OPTIONS = 2
MAX_TEXT_CHARS = 8_000
MAX_OPTIONS = 9


@dataclass
class ParsedVerdict:
    """What the model said, normalised; `problems` empty means valid."""

    kind: VerdictKind | None
    keyword: str | None
    text: str
    body: str
    options: list[Option] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    soft_problems: list[str] = field(default_factory=list)
    ruling: Ruling | None = None

    @property
    def valid(self) -> bool:
        return self.kind is not None and not self.problems and not self.soft_problems


def _clean_head(line: str) -> str:
    """Strip markdown decoration and a `VERDICT:` prefix in front of the keyword."""
    head = _LEAD.sub("", line)
    stripped = _PREFIX.sub("", head)
    if stripped != head:
        head = _LEAD.sub("", stripped)
    return head


def _strip_emphasis(text: str) -> str:
    return _EMPHASIS.sub("", text).strip()


def parse_options(text: str) -> list[Option]:
    """Numbered options `1. label — consequence`, the first run counting from 1."""
    lines = visible_lines(text, limit=10_000)
    options: list[Option] = []
    for i, line in enumerate(lines):
        match = _OPTION.match(line)
        if not match:
            continue
        n = int(match.group("n").translate(str.maketrans("０１２３４５６７８９", "0123456789")))
        if n != len(options) + 1:
            if options:
                break  # a second, unrelated numbered list
            continue
        rest = match.group("rest").strip()
        parts = _SPLIT.split(rest, maxsplit=1)
        label = _strip_emphasis(parts[0]).rstrip(" :：-–—")
        consequence = _strip_emphasis(parts[1]) if len(parts) > 1 else ""
        if not consequence and i + 1 < len(lines):
            sub = _SUB_CONSEQUENCE.match(lines[i + 1])
            if sub:
                consequence = _strip_emphasis(sub.group("c"))
        options.append(Option(n=n, label=label, consequence=consequence))
        if len(options) >= MAX_OPTIONS:
            break
    return options


def parse_verdict(raw: str) -> ParsedVerdict:
    """Find the verdict keyword; never raises, whatever the model returned."""
    raw = raw or ""
    cleaned = strip_internal(raw).strip()
    wrapped = _WHOLE_FENCE.match(cleaned)
    if wrapped:  # the whole answer inside one code fence: read what is inside
        cleaned = wrapped.group("inner").strip()
    lines = visible_lines(cleaned, limit=1)
    if not lines:
        return ParsedVerdict(None, None, cleaned, "", problems=["The answer is empty."])
    first = lines[0]
    head = _clean_head(first)
    match = _KEYWORD.match(head)
    if not match:
        shown = first.strip()[:80]
        return ParsedVerdict(
            None,
            None,
            cleaned,
            cleaned,
            problems=[
                f"The first line does not start with a verdict keyword (it reads: {shown!r}); "
                "it must start with exactly one of PROCEED, REVISE, RESET, ESCALATE."
            ],
        )
    keyword = match.group("kw").upper()
    kind = _KEYWORDS[keyword]
    rest = _TRAILING_MARKUP.sub("", head[match.end() :], count=1).strip()
    problems: list[str] = []
    if _SECOND_KEYWORD.match(head[match.end() :]):
        problems.append("The first line names more than one verdict keyword; choose exactly one.")
    # Rebuild the text with a clean first line: keyword, then the rest.
    _, _, after = cleaned.partition(first)
    first_line = f"{kind.value} {rest}".rstrip()
    text = (first_line + after).strip()
    body = (rest + after).strip()
    return ParsedVerdict(kind, keyword, text, body, problems=problems)


def parse_ruling(body: str) -> tuple[Ruling | None, list[str], str]:
    """`UPHELD: F<n>` and `RETIRED: F<n>` lines: the ruling, problems, and the body without them.

    None of them is no ruling (allowed); anything but exactly one of each is a
    malformed answer.
    """
    upheld: list[str] = []
    retired: list[str] = []
    kept: list[str] = []
    odd: list[str] = []
    for line in body.splitlines():
        match = _RULING.match(line)
        if match:
            (upheld if match.group("word").upper() == "UPHELD" else retired).append(
                match.group("label").upper()
            )
        elif _RULING_WORD.match(line):
            odd.append(line.strip()[:80])
        else:
            kept.append(line)
    rest = "\n".join(kept).strip()
    if not upheld and not retired and not odd:
        return None, [], body
    problems: list[str] = []
    if odd:
        problems.append(
            "A ruling line must read exactly `UPHELD: F<n>` or `RETIRED: F<n>` (found: "
            + "; ".join(repr(o) for o in odd) + ")."
        )
    if len(upheld) != 1 or len(retired) != 1:
        problems.append(
            "A ruling is exactly one `UPHELD: F<n>` line and one `RETIRED: F<n>` line "
            f"(found {len(upheld)} UPHELD and {len(retired)} RETIRED)."
        )
    if problems:
        return None, problems, rest
    return Ruling(upheld=upheld[0], retired=retired[0]), [], rest


def check_ruling(ruling: Ruling, rulable: frozenset[str]) -> list[str]:
    """Both labels exist, differ, and are open or contested findings."""
    problems: list[str] = []
    if ruling.upheld == ruling.retired:
        problems.append(f"UPHELD and RETIRED name the same finding ({ruling.upheld}).")
    unknown = [x for x in (ruling.upheld, ruling.retired) if x not in rulable]
    if unknown:
        allowed = ", ".join(sorted(rulable, key=lambda x: int(x[1:]))) or "none"
        problems.append(
            "The ruling names " + ", ".join(unknown) + ", which is not an open or contested "
            f"finding; you may rule on: {allowed}."
        )
    return problems


def validate(
    parsed: ParsedVerdict, language: str, rulable: frozenset[str] = frozenset()
) -> ParsedVerdict:
    """Fill `problems` (must be repaired) and `soft_problems` (repair once, then accept).

    `rulable`: the labels of the findings the arbiter may rule on (open or
    contested); a ruling on anything else is a malformed answer.
    """
    if parsed.kind is None:
        return parsed
    ruling, ruling_problems, body = parse_ruling(parsed.body)
    if ruling is not None or ruling_problems:
        parsed.problems.extend(ruling_problems)
        if ruling is not None:
            bad = check_ruling(ruling, rulable)
            parsed.problems.extend(bad)
            parsed.ruling = None if bad else ruling
        # The raw lines are for the bot; people read a sentence instead (the flow adds it).
        parsed.body = body
        head, _, _ = parsed.text.partition("\n")
        _, _, text_body = parsed.text.partition("\n")
        parsed.text = (head + "\n" + parse_ruling(text_body)[2]).strip()
    prose = parsed.body
    if not prose.strip():
        parsed.problems.append(
            "There is no explanation after the keyword: give the decision, the evidence "
            "and the required action."
        )
    elif not is_in_language(prose, language):
        parsed.problems.append(
            f"The text is not written in {language_name(language)}: write everything except "
            f"the leading keyword, code and file paths in {language_name(language)}."
        )
    if len(parsed.text) > MAX_TEXT_CHARS:
        parsed.soft_problems.append(
            f"The answer is {len(parsed.text)} characters long; be concise "
            f"(decision, evidence, required action; under {MAX_TEXT_CHARS} characters)."
        )
    if parsed.kind == VerdictKind.ESCALATE:
        parsed.options = parse_options(parsed.body)
        if len(parsed.options) < MIN_OPTIONS:
            parsed.problems.append(
                "An ESCALATE must list at least two numbered options, one per line, as "
                "`1. label — consequence`, `2. label — consequence`, so the user can answer "
                f"with a digit (found {len(parsed.options)})."
            )
        else:
            missing = [str(o.n) for o in parsed.options if not o.consequence]
            if missing:
                parsed.soft_problems.append(
                    "Options " + ", ".join(missing) + " have no one-line consequence "
                    "(`N. label — what happens if chosen`)."
                )
    return parsed


def parse_and_validate(
    raw: str, language: str, rulable: frozenset[str] = frozenset()
) -> ParsedVerdict:
    return validate(parse_verdict(raw), language, rulable)
