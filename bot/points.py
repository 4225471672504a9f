"""A turn cut into points and clauses: bullets, numbered points, table rows
and lines of prose (each with the quotation it answers, if any), then
sentences, then the halves of "but / 지만 / 고," so that "the first is fixed,
but the second is still open" is two clauses. Only the turn's own words are
read: quotes and closed fences are left out (`bot.textscan`). Pure; memoized
per turn, as one turn is read for its status, its findings and its fixes.
"""

from __future__ import annotations

import re
from functools import lru_cache

from bot import wording as w
from bot.textscan import message_lines


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
