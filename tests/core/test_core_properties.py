"""Property tests (Hypothesis) for the core's pure parsers and the text repair.

Each property can fail: never raises on any input, round-trips, or agrees
with a second, plainer statement of the same rule.
"""

from __future__ import annotations

import json
import re
import string
import unicodedata

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bot import buttons
from bot.answers import parse_digit_answer
from bot.arbiter.verdict import parse_and_validate, parse_options, parse_verdict
from bot.chunking import split_text
from bot.commands import Command, CommandError, parse_command
from bot.models import IncomingMessage, Status, VerdictKind
from bot.repair import REPLACEMENT, repair_text
from bot.status import VISIBLE_LINE_LIMIT, parse_status, visible_lines
from bot.textscan import Line, message_lines, own_text, strip_internal, turn_lines
from bot.transcript import MessageLine, RoomLine, TranscriptError, parse_line

# No deadline: the machine running the suite is shared, and a slow example is
# not a wrong one.
PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Any code point, lone surrogates and NUL included: what JSON can smuggle in.
ANY_CHAR = st.characters(exclude_categories=())
ANY_TEXT = st.text(alphabet=ANY_CHAR, max_size=300)
# Text shaped like chat: lines, fences, quotes, internal notes, status words.
PIECES = st.sampled_from([
    "\n", "\n", " ", "```", "~~~", "```python", ">", "> ", ">>>", "<internal>", "</internal>",
    "STEP_DONE", "TASK_DONE", "BLOCKED", "LGTM", "DONE_WITH_CONCERNS", "**", "#", "   ",
    "PROCEED", "ESCALATE", "REVISE", "RESET", "1.", "2)", " — ", ": ", "번", "배포할까요?",
    "\ud800", "\udc00", "\ud83d\ude00", "\x00", "\t", "리뷰어님,", "@reviewer",
])
CHATTY = st.lists(st.one_of(PIECES, st.text(max_size=12)), max_size=40).map("".join)
TEXT = st.one_of(ANY_TEXT, CHATTY)
FENCE_LINE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def storable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text


# -- repair -----------------------------------------------------------------------


def plain_repair(text: str) -> str:
    """The repair rule, one code point at a time."""
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if "\ud800" <= c <= "\udbff" and i + 1 < len(text) and "\udc00" <= text[i + 1] <= "\udfff":
            out.append(chr(0x10000 + ((ord(c) - 0xD800) << 10) + ord(text[i + 1]) - 0xDC00))
            i += 2
            continue
        out.append(REPLACEMENT if c == "\x00" or "\ud800" <= c <= "\udfff" else c)
        i += 1
    return "".join(out)


@PROPERTY
@given(TEXT)
def test_repaired_text_is_storable_idempotent_and_the_plain_rule(text: str) -> None:
    repaired = repair_text(text)
    assert storable(repaired)
    assert repair_text(repaired) == repaired
    assert repaired == plain_repair(text)


@PROPERTY
@given(st.text(max_size=300))
def test_storable_text_is_left_alone(text: str) -> None:
    assume("\x00" not in text)
    assert repair_text(text) is text  # not even copied


@PROPERTY
@given(ANY_TEXT, ANY_TEXT, st.text(max_size=20))
def test_inbound_models_repair_every_string(text: str, author: str, tail: str) -> None:
    message = IncomingMessage(platform="slack", channel="C" + tail, message_id=author + "x",
                              author_id=author or "a", author_name=author,
                              author_alt_ids=[author], text=text)
    for value in (message.text, message.author_id, message.author_name, message.message_id,
                  message.channel, *message.author_alt_ids):
        assert value is not None and storable(value)
    assert message.text == repair_text(text)
    assert storable(message.model_dump_json())


# -- textscan and status lines --------------------------------------------------------


@PROPERTY
@given(TEXT)
def test_message_lines_are_visible_ordered_lines_of_the_message(text: str) -> None:
    lines = message_lines(text)
    raw = strip_internal(text).splitlines()
    position = 0
    for line in lines:
        assert line.text.strip()
        position = raw.index(line.text, position) + 1  # a subsequence, in order


@PROPERTY
@given(TEXT)
def test_after_a_block_quote_everything_is_quoted(text: str) -> None:
    assert all(line.quoted for line in message_lines(">>>" + text))


@PROPERTY
@given(TEXT)
def test_a_closed_fence_hides_its_lines_and_an_unclosed_one_hides_nothing(text: str) -> None:
    body = "\n".join(line for line in text.splitlines() if not FENCE_LINE.match(line))
    assume("<internal>" not in body.lower())
    assert message_lines(f"```\n{body}\n```") == []
    assert message_lines(f"```\n{body}") == [Line("```", False), *message_lines(body)]


@PROPERTY
@given(st.lists(TEXT, max_size=5))
def test_a_turn_is_its_messages_and_own_text_has_no_quotes(messages: list[str]) -> None:
    assert turn_lines(messages) == [line for m in messages for line in message_lines(m)]
    for line in own_text(messages).split("\n"):
        assert not re.match(r"^\s{0,3}>", line)  # a quote is never the turn's own words


@PROPERTY
@given(TEXT)
def test_parse_status_never_raises_and_quoting_a_message_silences_it(text: str) -> None:
    assert isinstance(parse_status(text), Status)
    assert len(visible_lines(text)) <= VISIBLE_LINE_LIMIT
    quoted = "\n".join("> " + line for line in text.splitlines())
    assert parse_status(quoted) is Status.CONTINUE


STATUS_WORDS = {
    "BLOCKED": Status.BLOCKED, "NEEDS_CONTEXT": Status.NEEDS_CONTEXT,
    "ESCALATE": Status.ESCALATE, "STEP_DONE": Status.STEP_DONE, "TASK_DONE": Status.TASK_DONE,
    "DONE_WITH_CONCERNS": Status.DONE_WITH_CONCERNS, "APPROVED": Status.APPROVED,
    "LGTM": Status.APPROVED, "DONE": Status.TASK_DONE,
}


@PROPERTY
@given(st.sampled_from(sorted(STATUS_WORDS)), st.sampled_from(["", "**", "## ", "_"]),
       st.sampled_from(["", ":", " ", " - "]), TEXT)
def test_a_status_word_on_the_first_line_is_the_status(word: str, lead: str, sep: str,
                                                        rest: str) -> None:
    text = f"{lead}{word.lower() if lead == '_' else word}{sep}\n{rest}"
    assert parse_status(text) is STATUS_WORDS[word]
    assert parse_status([text, rest]) is STATUS_WORDS[word]


# -- digit answers --------------------------------------------------------------------


@PROPERTY
@given(st.integers(0, 999),
       st.sampled_from(["{n}", "{n}번", "{n}.", "#{n}", "option {n}", "옵션 {n}", "선택 {n}",
                        " {n} ", "{n}번이요", "No. {n}", "{n})"]),
       st.booleans())
def test_a_digit_answer_round_trips(n: int, form: str, full_width: bool) -> None:
    digits = str(n)
    if full_width:
        digits = digits.translate(str.maketrans("0123456789", "０１２３４５６７８９"))
    assert parse_digit_answer(form.format(n=digits)) == n


@PROPERTY
@given(TEXT)
def test_parse_digit_answer_is_none_or_a_number_in_the_text(text: str) -> None:
    n = parse_digit_answer(text)
    if n is not None:
        # The reply holds exactly one number, and it is n.
        assert [int(d) for d in re.findall(r"\d+", unicodedata.normalize("NFKC", text))] == [n]


# -- /arbiter commands ----------------------------------------------------------------

USER_ID = st.text(alphabet=string.ascii_letters + string.digits + "_.-", min_size=1, max_size=20)


@PROPERTY
@given(TEXT)
def test_parse_command_never_raises(text: str) -> None:
    result = parse_command(text)
    assert isinstance(result, Command | CommandError)
    if isinstance(result, Command):
        assert result.name in {"status", "summon", "pause", "resume", "history", "threshold",
                               "max-rounds", "roles"}


@PROPERTY
@given(st.sampled_from(["threshold", "max-rounds", "max_rounds", "THRESHOLD"]),
       st.integers(0, 999), st.sampled_from(["", "/arbiter ", "arbiter "]))
def test_numbers_round_trip_within_their_range(name: str, n: int, prefix: str) -> None:
    result = parse_command(f"{prefix}{name} {n}")
    canonical = name.lower().replace("_", "-")
    high = 20 if canonical == "threshold" else 50
    if 1 <= n <= high:
        assert result == Command(canonical, number=n)
    else:
        assert isinstance(result, CommandError)


@PROPERTY
@given(st.lists(USER_ID, min_size=1, max_size=3, unique=True),
       st.lists(USER_ID, min_size=1, max_size=3, unique=True),
       st.sampled_from(["{}", "<@{}>", "<@{}|name>", "@{}", "<@!{}>"]))
def test_roles_round_trip(owner: list[str], reviewer: list[str], form: str) -> None:
    assume(not set(owner) & set(reviewer))
    text = ("roles owner:" + ",".join(form.format(u) for u in owner)
            + " reviewer:" + ",".join(form.format(u) for u in reviewer))
    assert parse_command(text) == Command("roles", owner=owner, reviewer=reviewer)


# -- verdicts ----------------------------------------------------------------------

KEYWORDS = {"PROCEED": VerdictKind.PROCEED, "CONTINUE": VerdictKind.PROCEED,
            "REVISE": VerdictKind.REVISE, "RESET": VerdictKind.RESET,
            "ESCALATE": VerdictKind.ESCALATE}


@PROPERTY
@given(TEXT, st.sampled_from(["ko", "en"]))
def test_parse_verdict_never_raises(text: str, language: str) -> None:
    parsed = parse_and_validate(text, language)
    if parsed.kind is not None:
        assert parsed.text.startswith(parsed.kind.value)
    else:
        assert parsed.problems and not parsed.valid


@PROPERTY
@given(st.sampled_from(sorted(KEYWORDS)),
       st.sampled_from(["{k} ", "**{k}** ", "VERDICT: {k} ", "## {k}: ", "`{k}` — ", "{k}\n"]),
       TEXT)
def test_the_keyword_leading_the_answer_is_the_verdict(keyword: str, form: str,
                                                       body: str) -> None:
    parsed = parse_verdict(form.format(k=keyword) + body)
    assert parsed.kind is KEYWORDS[keyword]


WORDS = st.text(alphabet=string.ascii_letters + string.digits + "가나다라마바사아자차카타파하",
                min_size=1, max_size=8)
PHRASE = st.lists(WORDS, min_size=1, max_size=4).map(" ".join)


@PROPERTY
@given(st.lists(st.tuples(PHRASE, PHRASE), min_size=1, max_size=9),
       st.sampled_from([" — ", " - ", ": ", " -> "]), st.sampled_from(["{n}. ", "{n}) ", "{n}번 "]))
def test_options_round_trip(options: list[tuple[str, str]], sep: str, number: str) -> None:
    text = "\n".join(number.format(n=i) + f"{label}{sep}{consequence}"
                     for i, (label, consequence) in enumerate(options, start=1))
    parsed = parse_options("먼저 설명합니다.\n" + text)
    assert [(o.n, o.label, o.consequence) for o in parsed] == [
        (i, label, consequence) for i, (label, consequence) in enumerate(options, start=1)]


# -- transcript lines ----------------------------------------------------------------


@PROPERTY
@given(TEXT)
def test_parse_line_accepts_or_names_the_line(raw: str) -> None:
    try:
        parse_line(raw, 7)
    except TranscriptError as exc:
        assert exc.line == 7 and str(exc).startswith("line 7: ")


@PROPERTY
@given(st.text(alphabet=ANY_CHAR, min_size=1, max_size=50), ANY_TEXT,
       st.one_of(st.none(), st.text(alphabet=ANY_CHAR, min_size=1, max_size=30)))
def test_a_message_line_round_trips_repaired(author: str, text: str, mid: str | None) -> None:
    assume(author.strip())
    entry: dict[str, object] = {"type": "message", "author": author, "text": text}
    if mid is not None:
        entry["id"] = mid
    parsed = parse_line(json.dumps(entry), 1)
    assert isinstance(parsed, MessageLine)
    assert (parsed.author, parsed.text) == (repair_text(author), repair_text(text))
    assert parsed.id == (repair_text(mid) if mid is not None else None)


@PROPERTY
@given(st.text(alphabet=ANY_CHAR, min_size=1, max_size=50), ANY_TEXT, ANY_TEXT)
def test_a_room_line_round_trips_repaired(room: str, language: str, value: str) -> None:
    # Room names and roles are free text (repaired); language and settings are
    # validated (a bad one is a TranscriptError naming the line, nothing else).
    assume(repair_text(room).strip())
    entry = {"type": "room", "room": room, "roles": {"owner": room}}
    parsed = parse_line(json.dumps(entry), 1)
    assert isinstance(parsed, RoomLine)
    assert parsed.room == repair_text(room)
    assert parsed.roles == {"owner": [repair_text(room)]}
    for bad in ({**entry, "language": language}, {**entry, "settings": {value: value}}):
        try:
            checked = parse_line(json.dumps(bad), 1)
        except TranscriptError as exc:
            assert exc.line == 1
        else:
            assert isinstance(checked, RoomLine)


# -- chunking ------------------------------------------------------------------------


@PROPERTY
@given(TEXT, st.integers(20, 400))
def test_chunks_fit_the_limit(text: str, limit: int) -> None:
    chunks = split_text(text, limit)
    assert chunks and all(len(chunk) <= limit for chunk in chunks)


@PROPERTY
@given(st.text(alphabet=st.characters(exclude_characters="`~"), max_size=2000),
       st.integers(20, 300))
def test_chunks_of_fence_free_text_keep_every_character(text: str, limit: int) -> None:
    chunks = split_text(text, limit)
    squeeze = re.compile(r"\s+")
    assert squeeze.sub("", "".join(chunks)) == squeeze.sub("", text)


@PROPERTY
@given(st.lists(st.one_of(st.text(alphabet=string.ascii_letters + " ", max_size=60),
                          st.sampled_from(["```", "```python", "~~~"])), max_size=60),
       st.integers(40, 200))
def test_every_chunk_closes_the_fences_it_opens(lines: list[str], limit: int) -> None:
    text = "\n".join(lines)
    chunks = split_text(text, limit)
    if len(chunks) == 1:
        return
    for chunk in chunks:
        open_marker = None
        for line in chunk.split("\n"):
            match = re.match(r"^\s*(```|~~~)(.*)$", line)
            if match is None:
                continue
            if open_marker is None:
                open_marker = match.group(1)
            elif match.group(1) == open_marker and not match.group(2).strip():
                open_marker = None
        if chunk is not chunks[-1]:
            assert open_marker is None, chunk


# -- button ids ----------------------------------------------------------------------


@PROPERTY
@given(st.integers(0, 10**12 - 1), st.integers(0, 999))
def test_button_ids_round_trip_and_fit_discord(escalation: int, option: int) -> None:
    value = buttons.encode(escalation, option)
    assert buttons.decode(value) == (escalation, option)
    assert buttons.decode(f"  {value}\n") == (escalation, option)
    assert len(value) <= 100 and re.fullmatch(buttons.DYNAMIC_TEMPLATE, value)


@PROPERTY
@given(TEXT)
def test_decode_is_none_or_canonical(value: str) -> None:
    decoded = buttons.decode(value)
    if decoded is not None:
        assert buttons.decode(buttons.encode(*decoded)) == decoded
        assert value.strip().startswith(buttons.PREFIX)


@pytest.mark.parametrize("value", [None, 5, b"tribunal:esc:1:1", ["x"]])
def test_decode_of_a_non_string_is_none(value: object) -> None:
    assert buttons.decode(value) is None  # type: ignore[arg-type]
