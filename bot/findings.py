"""Reading review text: clauses, what each one does, and what it is about.

Pure functions, no state; the words it reads with are in `bot.wording`.
`bot.ledger` (reviewer turns) and `bot.owner_turn` (owner turns) decide what
the clauses mean for the task's findings; this module only reads text:

- a turn's own words (no quotes, no closed fences: `bot.textscan`) are cut
  into clauses: a bullet or numbered point, else a sentence, and a sentence
  again at "but / 지만 / 고," so that "the first is fixed, but the second is
  still open" is two clauses;
- each reviewer clause is a *finding* (something is wrong, missing or must
  change), an *acknowledgement* (it is fixed), a *withdrawal* (the reviewer
  drops it), a *reference* (a repeat without content: "as I said last time",
  "지난번 지적이 아직 해결되지 않았습니다"), or a plain *fact* ("42 tests pass");
- each owner clause is a *fix report*, a *refusal* or a *promise* (a promise
  leaves the finding untouched);
- what a clause is about is its `Topic`: anchors (paths, `identifiers`,
  numbers, finding ids) and key terms (Korean particles and endings stripped,
  common words in either language mapped to one concept, so "캐시" and
  "cache" meet).

`score()` compares two topics in [0, 1]; the thresholds in `bot.finding`
(documented there) turn scores into "the same finding" or "a new one".
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache

from bot import wording as w
from bot.textscan import message_lines


class Act(StrEnum):
    FINDING = "finding"
    ACK = "ack"
    WITHDRAW = "withdraw"
    REFERENCE = "reference"
    FACT = "fact"
    FIX = "fix"
    DECLINE = "decline"
    PROMISE = "promise"


@dataclass(frozen=True, slots=True)
class Topic:
    """What a clause is about."""

    anchors: frozenset[str]  # path:, code:, num:, id:
    terms: frozenset[str]  # stems, Hangul bigrams and concepts
    # Every anchor but line numbers, and the kinds of those anchors but numbers
    # (path, code, id); computed once (scoring reads them a lot).
    strong: frozenset[str] = field(init=False, compare=False)
    kinds: frozenset[str] = field(init=False, compare=False)

    def __post_init__(self) -> None:
        strong = frozenset(a for a in self.anchors if not a.startswith("line:"))
        object.__setattr__(self, "strong", strong)
        object.__setattr__(self, "kinds", frozenset(
            a.split(":", 1)[0] for a in strong if not a.startswith("num:")
        ))


@dataclass(slots=True)
class Clause:
    text: str
    act: Act
    topic: Topic
    ordinals: tuple[int, ...] = ()
    remaining: bool = False  # "the other one", "나머지"
    everything: bool = False  # "both", "all", "두 가지"
    labels: tuple[str, ...] = field(default_factory=tuple)  # explicit F<n>
    # A finding only because a reviewer who is not approving states it, with no
    # request in it: in a point that repeats a finding it is the argument.
    asserted: bool = False


@lru_cache(maxsize=65536)  # words repeat across clauses, turns and rooms
def word_stem(word: str) -> str:
    if "\uac00" <= word[0] <= "\ud7a3":
        for suffix in w.KO_SUFFIXES:
            if len(word) > len(suffix) + 1 and word.endswith(suffix):
                return word[: -len(suffix)]
        return word
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


@lru_cache(maxsize=4096)
def topic(text: str) -> Topic:
    raw = w.ungrouped(unicodedata.normalize("NFKC", w.URL.sub(" ", text)))
    anchors: set[str] = set()
    for match in w.PATH.finditer(raw):
        path = match.group(1).lower()
        if re.fullmatch(r"\d+(\.\d+)+", path):
            continue  # a version number, not a path
        if "/" not in path and not w.is_file(path):
            # `record.args`, `limits.memory`: a name, as `x.y` in code is named.
            anchors.add("code:" + path.rsplit(".", 1)[-1])
            continue
        anchors.add("path:" + path.rsplit("/", 1)[-1])
        if match.group(2):
            anchors.add("line:" + match.group(2))
    for match in w.CODE.finditer(raw):
        code = match.group(1).strip().lower().rstrip("()").strip()
        if w.COMMIT.fullmatch(code):
            continue  # a commit names the owner's change, not what the finding is about
        if code and not w.PATH.fullmatch(code):
            header = w.HEADER_SPAN.match(code)
            if header:
                # `Idempotency-Key: invoice-{id}` names the header as
                # `Idempotency-Key` alone does.
                anchors.add("code:" + header.group(1))
            if re.fullmatch(r"[\w.:/{}-]+", code):  # (`home:feed:{user_id}`: one name)
                # A name. An expression (`(created_at, id) < (:ts, :id)`) is
                # named by its tokens only: written again another way, it is
                # the same point.
                anchors.add("code:" + code.rsplit(".", 1)[-1])
            # `(created_at, id)` names `created_at` and `id` too; the words of a
            # value (`"20/minute"`, `5/minute`) name nothing.
            for token in re.findall(r"[a-z_][a-z0-9_]+", w.CODE_VALUE.sub(" ", code)):
                if token not in w.STOP_EN:
                    anchors.add("code:" + token)
    for match in w.IDENT.finditer(raw):
        anchors.add("code:" + match.group(1).lower().rstrip("()"))
    for match in w.NUMBER.finditer(w.CODE.sub(" ", w.PATH.sub(" ", raw))):
        value, unit = match.group(1), (match.group(2) or "").lower()
        if len(value) >= 2 or unit:
            anchors.add("num:" + value + unit)
    for match in w.FINDING_ID.finditer(raw):
        anchors.add("id:" + match.group(1).lower())
    terms: set[str] = set()
    lowered = raw.lower()
    # The Korean concept words the text holds at all: each word is then looked
    # up among these few, not among all of them (the same answer, as a word's
    # substring is the text's).
    concepts_ko = [(key, concept) for key, concept in w.KO_CONCEPT if key in lowered]
    for word in w.WORD.findall(lowered):
        if word in w.STOP_EN or w.COMMIT.fullmatch(word):
            continue  # a commit hash names the change, not the point
        concept = w.EN_CONCEPT.get(word) or w.EN_CONCEPT.get(word_stem(word))
        if concept:
            terms.add("~" + concept)
        if "\uac00" <= word[0] <= "\ud7a3":
            for key, concept_ko in concepts_ko:
                if key in word and not any(x in word for x in w.KO_CONCEPT_EXCEPT.get(key, ())):
                    terms.add("~" + concept_ko)
            stem = word_stem(word)
            if stem in w.STOP_KO or len(stem) < 2:
                continue
            terms.update(
                g for g in (stem[i : i + 2] for i in range(len(stem) - 1)) if g not in w.KO_GRAMMAR
            )
        else:
            stem = word_stem(word)
            if len(stem) >= 3 and stem not in w.STOP_EN:
                terms.add(stem)
    # (A key of two words, "풀 크기", is in the text, not in one of its words.)
    terms.update("~" + concept for key, concept in concepts_ko if " " in key)
    return Topic(frozenset(anchors), frozenset(terms))


def concepts(t: Topic) -> frozenset[str]:
    """The concepts a topic says in words, and in the parts of the names it
    gives in code (`autoretry_for`, `max_retries`: ~retry). (Kept out of
    `topic`: more terms for every name would thin every score.)"""
    return frozenset(x for x in t.terms if x.startswith("~")) | frozenset(
        "~" + c for a in t.strong if a.startswith("code:") and "_" in a
        for c in _part_concepts(a[5:]))


@lru_cache(maxsize=4096)
def _part_concepts(name: str) -> tuple[str, ...]:
    found = (w.EN_CONCEPT.get(part) or w.EN_CONCEPT.get(word_stem(part))
             for part in name.split("_") if len(part) >= 3)
    return tuple(c for c in found if c)


def score(a: Topic, b: Topic) -> float:
    """How likely two clauses name the same finding, in [0, 1].

    A shared anchor (same file, function, number) is strong evidence but not
    proof: a new concern about the same file shares the path and little else.
    Without anchors on one side (a paraphrase, a summary) the terms decide.
    """
    terms = _overlap(a.terms, b.terms)
    sa, sb = a.strong, b.strong
    shared = sa & sb
    if shared:
        # Same file or function is not enough: a new concern there shares the
        # anchor and little else.
        anchor = len(shared) / min(len(sa), len(sb))
        return min(1.0, 0.12 + 0.15 * anchor + 0.8 * terms)
    kinds = a.kinds & b.kinds
    if "path" in kinds:
        # Another file: the same complaint about another place is another point.
        # Never a sure match; at most an uncertain one.
        return min(0.35, 0.7 * terms)
    if kinds:
        return 0.7 * terms  # another function: likely another point, terms decide
    return terms


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    # (The union's size by arithmetic: this runs millions of times a bench.)
    return 0.5 * inter / (len(a) + len(b) - inter) + 0.5 * inter / min(len(a), len(b))


def selectors(text: str) -> tuple[tuple[int, ...], bool, bool, tuple[str, ...]]:
    ordinals: tuple[int, ...] = ()
    if w.MAYBE_ORDINAL.search(text):
        ordinals = tuple(n for pattern, n in w.ORDINALS if pattern.search(text))
        listed = w.NUMBER_LIST.search(text)
        if listed:
            ordinals += tuple(int(d) for d in re.findall(r"[1-9]", listed.group(0)))
        ordinals += tuple(int(a or b) for a, b in w.ON_NUMBER.findall(text))
        ordinals = tuple(dict.fromkeys(ordinals))
        renumbered = w.WAS_NUMBER.search(text)
        if renumbered:
            ordinals = (int(renumbered.group(1)),)  # "1. (was #2)": the point raised second
        # "1번 외에 나머지 두 건": every point but that one.
        but = {int(a or b) for a, b in w.BUT_NUMBER.findall(text)}
        ordinals = tuple(n for n in ordinals if n not in but)
    labels = tuple(m.upper() for m in w.LABEL.findall(text))
    return ordinals, bool(w.REMAINING.search(text)), _all_points(text), labels


def _all_points(text: str) -> bool:
    for match in w.ALL.finditer(text):
        if not match.group(0).isascii():
            return True  # 모두, 둘 다, 두 가지
        rest = text[match.end():]
        if rest[:1] in ("-", "_"):
            continue  # "the all-day key": a word of its own, not "all of them"
        after = re.match(r"\s*([a-z]+)", rest.lower())
        if after is None or after.group(1) in w.ALL_OF:
            return True
    return False


def clauses(messages: list[str]) -> list[str]:
    """A turn's own words cut into clauses (points, sentences, halves of "but")."""
    return [text for _, text in items(messages)]


def items(messages: list[str]) -> list[tuple[int, str]]:
    """Clauses with the index of the point (bullet, or line of prose) they belong to."""
    return list(_items(tuple(messages)))


@lru_cache(maxsize=2048)  # one turn is read for its status, its findings, its fixes...
def _items(messages: tuple[str, ...]) -> tuple[tuple[int, str], ...]:
    return tuple((n, clause) for n, clause, _ in _quoted_items(messages))


def replies(messages: list[str]) -> dict[int, str]:
    """The quotation each point answers: an agent that quotes a point
    (`> 2. The 500 is …`) and writes below it answers that point, until the
    next quotation or the end of the message."""
    return {n: quote for n, _, quote in _quoted_items(tuple(messages)) if quote}


def point_numbers(messages: list[str]) -> dict[int, int]:
    """The number each numbered point carries in its list ("2. …" is 2)."""
    return dict(_point_numbers(tuple(messages)))


@lru_cache(maxsize=2048)
def _point_numbers(messages: tuple[str, ...]) -> tuple[tuple[int, int], ...]:
    out: list[tuple[int, int]] = []
    for n, item in enumerate(_points(messages)[0]):
        match = w.NUMBERED.match(item)
        if match:  # "2. …" or a table row "| 2 | …"
            out.append((n, int(match.group(1) or match.group(2))))
    return tuple(out)


def point_items(text: str) -> list[tuple[int, str]]:
    """`items([text])` for one point's text, read past the turns' memo: a
    point's readers keep memos of their own, and thousands of points passing
    through the turns' memo would push the turns out of it."""
    return [(n, clause) for n, clause, _ in _read_items(*_read_points((text,)))]


@lru_cache(maxsize=2048)
def _points(messages: tuple[str, ...]) -> tuple[list[str], list[str]]:
    return _read_points(messages)


def _read_points(messages: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """A turn's points (bullets, numbered points, lines of prose) and the
    quotation above each ("" for none)."""
    points: list[str] = []
    quote_of: list[str] = []
    for message in messages:
        quote, quoting = "", False
        answered = False  # a line under the quotation answered it already
        lines = message_lines(message)
        header: list[str] | None = None  # the header of the table being read
        praise = False  # under a heading such as "Looks fine:"
        for i, line in enumerate(lines):
            if w.TABLE_RULE.match(line.text):
                continue  # "|---|---|"
            if line.text.lstrip().startswith("|") and not line.quoted:
                if i + 1 < len(lines) and w.TABLE_RULE.match(lines[i + 1].text):
                    header = _cells(line.text)  # a header names columns; it is no point
                    continue
                if header is not None:
                    points.append(_table_row(line.text, header))
                    quote_of.append(quote)
                    quoting = False
                    continue
            else:
                header = None
            if line.quoted:
                text = line.text.lstrip().lstrip(">").strip()
                quote = (quote + " " + text).strip() if quoting else text
                quoting, answered = True, False
                continue
            if line.after_blank and answered:
                # The paragraph under the quotation answered it; what comes
                # after a blank line ("- 대신 `pool_timeout`을 …") is not the
                # answer to it.
                quote = ""
            answered = answered or bool(quote)
            quoting = False
            text = plain(w.STATUS_PREFIX.sub("", line.text).strip())
            if not text or (w.HEADING.match(text) and len(text) < 60 and not _says_again(text)):
                # ("CI still fails, same output:" above a log says it again.)
                # "Things I verified and am happy with:": its bullets are praise.
                # (Its last sentence: "Looks good. Two issues:" lists issues.)
                last = _split(w.SENTENCE, text)[-1] if text else ""
                praise = bool(w.GOOD_HEADING.search(last)) and not w.ISSUES_HEADING.search(last)
                continue
            if line.text.startswith((" ", "\t")) and points and not w.BULLET.match(line.text):
                points[-1] += " " + text  # a wrapped bullet
                continue
            if praise and not w.BULLET.match(line.text):
                praise = False  # the list under the heading has ended
            # "(It passes locally only without the fixture; …)", "참고로 재현
            # 방법은 처음과 같습니다: …": an aside, the whole line.
            aside = ((text.startswith("(") and text.rstrip(".").endswith(")"))
                     or bool(w.LEAD_IN.match(text))) and not w.ASKS.search(text)
            points.append(w.CHECKED_MARK + text if praise or aside else text)
            quote_of.append(quote)
    return points, quote_of


# Markdown emphasis: "Please do **not** redirect" says "do not redirect".
# (A Korean particle may follow the closing marks: "**60**으로".)
_EMPHASIS = re.compile(r"(?<![\w*])(\*\*?)(?=\w)([^*\n]{1,80}?)(?<=[\w.!?:)])\1(?![A-Za-z0-9_*])")


def plain(text: str) -> str:
    """The line without emphasis markers (outside code spans)."""
    if "*" not in text:
        return text
    if "`" not in text:
        return _EMPHASIS.sub(r"\2", text)
    spans = [m.span() for m in w.CODE.finditer(text)]
    return _EMPHASIS.sub(lambda m: m.group(0) if any(a < m.start() < b for a, b in spans)
                         else m.group(2), text)


def _cells(row: str) -> list[str]:
    """A table row's cells (a "|" inside a code span, `a|b`, is no border)."""
    return [cell.strip() for cell in _split(_CELL_BORDER, row.strip().strip("|"))]


_CELL_BORDER = re.compile(r"\|")


def _table_row(row: str, header: list[str]) -> str:
    """A table row as a point: the row, and what its "requested" / "must be"
    column asks for in words the reader knows ("| `client_max_body_size` |
    `100m` | `2g` |" under "now | requested" asks `2g`)."""
    cells = _cells(row)
    asked = [cell for name, cell in zip(header, cells, strict=False)
             if cell and w.WANTED_COLUMN.search(name)]
    # ("| `DB_POOL_SIZE` | 8 | … `default_pool_size` 200 |": the value is the
    # row's setting's, however the last column reads.)
    named = bool(cells) and cells[0].startswith("`") and cells[0].endswith("`")
    lead = f" — {cells[0]} must be" if named else " — must be"
    return row.strip() + "".join(f"{lead} {cell}." for cell in asked)


@lru_cache(maxsize=2048)
def _quoted_items(messages: tuple[str, ...]) -> tuple[tuple[int, str, str], ...]:
    return _read_items(*_points(messages))


def _read_items(points: list[str], quote_of: list[str]) -> tuple[tuple[int, str, str], ...]:
    out: list[tuple[int, str, str]] = []
    for n, item in enumerate(points):
        praise = item.startswith(w.CHECKED_MARK)  # each of its clauses is read as praise
        item = item.removeprefix(w.CHECKED_MARK)
        # "1. Line 41: …" is one point, not a sentence "1." and another.
        item = w.BULLET.sub("", item, count=1) if w.BULLET.match(item) else item
        for sentence in _split(w.SENTENCE, item):
            for clause in _split(w.CLAUSE, sentence):
                clause = clause.strip(" ,;")
                if len(clause) >= 2:
                    out.append((n, w.CHECKED_MARK + clause if praise else clause, quote_of[n]))
    return tuple(out)


def _split(pattern: re.Pattern[str], text: str) -> list[str]:
    """`pattern.split`, but never inside a code span: "`None; Secure`" is one value."""
    spans = [m.span() for m in w.CODE.finditer(text)] if "`" in text else []
    if not any(pattern.search(text, a, b) for a, b in spans):
        return pattern.split(text)  # (most text: no separator inside a span)
    out, start = [], 0
    for match in pattern.finditer(text):
        if any(a < match.start() < b for a, b in spans):
            continue
        out.append(text[start:match.start()])
        start = match.end()
    out.append(text[start:])
    return out


def _says_again(text: str) -> bool:
    """A line that repeats or rejects, or names a commit ("Both done in
    `0a9e7d4`:" reports the fix the list below details): never a mere heading."""
    return bool(w.REFERENCE.search(text) or w.NEG_ACK.search(text) or w.FIX_REJECTED.search(text)
                or w.COMMIT.search(text))


def _content(text: str) -> Topic:
    """The clause's topic without the words that only say "again" or "fixed"."""
    stripped = w.REFERENCE.sub(" ", w.NEG_ACK.sub(" ", text))
    return topic(stripped)


def restates(text: str) -> bool:
    """The clause says it is saying something again ("still", "여전히", "거듭")."""
    return bool(w.REFERENCE.search(text))


def starts_new_point(text: str) -> bool:
    """"Also, …" / "또한 …": the clause opens a point of its own. (Not "또한
    … 문제도 그대로입니다", "Also, X is still …": an "also" that only joins
    it to the point before, about what is still there.)"""
    also = w.ALSO.search(text)
    if also is None:
        return False
    return not (_JOINS.match(also.group(0)) and w.STILL_AT.search(text, also.end()))


# The "also" that only joins two sentences (not "another", "new:", "하나 더").
_JOINS = re.compile(r"\s*(?:also|additionally|plus|또한)\b", re.I)


def _named(t: Topic) -> bool:
    """The clause names something besides a run or ticket number ("CI #4820
    결과입니다" names nothing a point could be about; "풀 크기는 20으로" does)."""
    return any(not a.startswith("id:") and "id:#" + a[4:] not in t.strong for a in t.strong)


@lru_cache(maxsize=8192)  # a turn's clauses are read once per round, and again for contradictions
def reviewer_clause(text: str) -> Clause:
    ordinals, remaining, everything, labels = selectors(text)
    t = topic(text)
    says_nothing = (w.ANNOUNCE.match(text.strip()) or w.HEDGE.search(text)
                    or w.NO_CONCERN.search(text) or w.NO_CONFLICT.search(text)
                    or w.NO_FINDINGS.search(text))
    if ((says_nothing and not _named(t)) or text.startswith(w.CHECKED_MARK)
            or (w.LEAD_IN.match(text) and not w.ASKS.search(text))):
        return Clause(text, Act.FACT, t, ordinals, remaining, everything, labels)
    content = _content(text)
    thin = not content.strong and len(content.terms) <= 6
    if w.WITHDRAW.search(text) and not w.NEG_ACK.search(text):
        act = Act.WITHDRAW
    elif w.REBUTTAL.search(text) and not content.kinds:
        act = Act.REFERENCE  # (it may cite a figure: "over-charged by about 7%")
    elif w.SAME_FAILURE.search(text) and all(a.startswith("num:") for a in content.strong):
        act = Act.REFERENCE  # ("3회 중 2회": how often, not what)
    elif (w.NEG_ACK.search(text) or w.FIX_REJECTED.search(text)
          or (w.REFERENCE.search(text) and thin)):
        act = Act.REFERENCE if thin or ordinals or remaining or everything else Act.FINDING
    elif (w.ACK.search(text) or w.NOW_WORKS.search(text)) and (not w.REQUEST.search(
        # (A name in code is no request: "`NOT NULL` 제약 확인했습니다".)
        w.WEAK.sub(" ", w.NOW_WORKS.sub(" ", w.ACK.sub(" ", w.CODE.sub(" ", text))))
    ) or _verified(text)) and not w.READ_REPLY.search(text) and not _IF_PASSES.search(text):
        act = Act.ACK
    elif w.REQUEST.search(w.NO_PROBLEM.sub(" ", text)) or w.IMPERATIVE.match(text):
        # "두 가지 모두 고쳐져야 합니다", "the rest must be fixed": asks again
        # for what is open, naming nothing new.
        act = Act.REFERENCE if (everything or remaining) and thin else Act.FINDING
    elif (w.REFERENCE.search(text) and (ordinals or remaining or everything or labels)) or (
        remaining and thin
    ):
        act = Act.REFERENCE
    elif not w.POSITIVE.search(text) and (
        t.strong or (len(t.terms) >= 4 and len(text.split()) >= 3)
    ):
        # A reviewer who is not approving mostly states what is wrong, often
        # without "must" or "해야": "DEBUG level hardcoded in `setup.py`". (One
        # or two words are not a statement, however many bigrams they make.)
        return Clause(text, Act.FINDING, t, ordinals, remaining, everything, labels, asserted=True)
    else:
        act = Act.FACT
    return Clause(text, act, t, ordinals, remaining, everything, labels)


# "두 요청이 동시에 들어오면 … 둘 다 통과합니다": what would get through, if.
_IF_PASSES = re.compile(r"[가-힣]면\s[^.;\n]{0,40}?통과(?:합|하)")


def _verified(text: str) -> bool:
    """"Verified `9c3e77a`: no email in the payload": what follows the colon
    is what was checked, unless it asks or fails ("Verified locally: `x`
    fails on 3.12, please pin it")."""
    lead = w.VERIFIED_LEAD.match(text)
    rest = text[lead.end():] if lead else ""
    return bool(lead) and not (w.ASKS.search(rest) or w.FAILING.search(rest)
                               or w.IMPERATIVE.match(rest.strip()))


@lru_cache(maxsize=8192)
def owner_clause(text: str) -> Clause:
    ordinals, remaining, everything, labels = selectors(text)
    if w.DECLINE.search(text):
        act = Act.DECLINE
    elif w.TODO.search(text) or (
        w.PROMISE.search(text) and not w.COMMIT.search(text) and not w.FIX_PAST.search(text)
    ):
        act = Act.PROMISE  # "3번은 다음 커밋에 넣겠습니다": not done yet
    elif w.FIX.search(text) or w.FIX_NOUN.search(text) or (
        w.COMMIT.search(text) and not w.STILL_AT.search(text)
    ):
        act = Act.FIX
    else:
        act = Act.FACT
    return Clause(text, act, topic(text), ordinals, remaining, everything or bool(
        w.GENERAL.search(text)), labels)


def summary(text: str, limit: int = 120) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"
