"""The values a request gives to settings, for contradictions between
reviewers: "set `TTL` to 30" is `30@ttl`, "600초 이하" is `<=600초@…`, "add
`--frozen-lockfile`" is `+@--frozen-lockfile`. Pure functions of text;
`bot.contradictions` compares findings with them.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from decimal import Decimal
from functools import lru_cache

from bot import wording as w
from bot.demands import asked
from bot.points import plain
from bot.quantities import VERSION
from bot.quantity_words import (
    ENOUGH,
    NOT_BEYOND,
    PER,
    bound_of,
    clock,
    numerals,
    per_before,
    per_of,
    per_unit,
)
from bot.stances import (
    LITERAL_WORDS,
    NUMBER_VALUE,
    locale_stance,
    log_file_stance,
    null_stance,
    presence,
    retry_stance,
    switch_stance,
    sync_stance,
)
from bot.value_forms import (
    FLAG,
    assignments,
    cache_words,
    destinations,
    file_formats,
    flags,
    formats,
    is_version,
    languages,
    listen_addresses,
    regions,
    renames,
    versions,
    wildcards,
    zones,
)

_VALUE = re.compile(
    r"(?:\b(?:to|=|at\s+least|at\s+most|under|below|above|of)\s*`?|`?)"
    # (Possessive `\s*+`, and a space before a word seen by lookbehind: nested
    # `\s*` runs made a long run of spaces after a number cost its cube.)
    # (Never part of a version: "2.5.0" is not 2.5.)
    # ("card `4000 0027 6000 3184`": the last group of a number, no value.)
    r"(?<![\w.-])(?<!\d\s)(\d+(?:\.\d+)?)(?!\.\w)\s*+(" + w.VALUE_UNITS + r")?`?"
    # ("100회 정도로", "30초쯤으로": about that, as asked; "최소 24시간은
    # 유지돼야": the least it must last.)
    r"(?=\s*+(?:(?:은|는)\s*(?:유지|보장|살아\s*있|남아\s*있)|로|으로|(?:정도|쯤|가량)(?:으로|로)|이상|이하|이후|이전|까지|이내|에\s|" + ENOUGH + "|" + NOT_BEYOND + r"|[,.;)(]|$|(?<=\s)(?:instead|minimum|maximum|max|min|or\s+more|or\s+less|days|hours|minutes|seconds"
    # ("an hour at most")
    r"|at\s+most|at\s+least|tops"
    # "no more than 50 messages per second": what the number counts.
    r"|(?:messages?|requests?|emails?|jobs?|events?|connections?|retries|attempts?|times|tries|rows|items|workers|replicas|pods)\b)"
    # ("5 per minute", "20/minute": a rate.)
    r"|(?:per\s+|/\s*)(?:second|sec|minute|min|hour|hr|h|day|s)s?(?![a-z])"
    # ("50 rps로 낮춰": a rate in one word; "200 rps 기준" is a load, `_LOAD`.)
    r"|(?:rps|qps|rpm|rph)(?![a-z])))",
    re.I,
)


# A rate in code, `"5/minute"`, `100/s`: as "5 per minute" in words.
_RATE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:/|\s+per\s+)\s*(second|sec|minute|min|hour|hr|h|day|s)s?")
def _rate_before(clause: str, at: int, number: str, unit: str) -> tuple[str, str]:
    """A count said after the Korean time it counts per ("분당 5회" is 5/minute),
    else as it was. "5분당 1회" (one per five minutes) is counted per the next
    longer time, 12/hour, so that one rate reads one way."""
    ahead = per_before(clause[max(0, at - 14):at])
    if ahead is None:
        return number, unit
    per, many = ahead
    if many > 1 and per in _LONGER:
        longer, times = _LONGER[per]
        number = _plain(Decimal(number) * times / many)
        per = longer
    elif many > 1:
        number = _plain(Decimal(number) / many)
    return number, "/" + per


# Each time, the next longer one and how many of it it holds.
_LONGER = {"second": ("minute", 60), "minute": ("hour", 60), "hour": ("day", 24)}


def _plain(value: Decimal) -> str:
    """A number as values write it: "12", "0.5" (never "12.000" or "1E+1")."""
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


_LOAD = re.compile(r"\s*(?:기준|에서|부하|정도의\s*부하|(?:of\s+)?load\b|under\s+load)")
_TIME_RATES = frozenset({"second", "minute", "hour", "day"})


# A value given to a setting, whatever follows: "to 86400 and …", "= 0",
# "`PG_MAX_RETRIES`를 0으로". One digit counts here, not in bare prose.
_SET_VALUE = re.compile(
    # ("`HTTP_MAX_RETRIES` has to stay 0", "keep `RETRIES` at 0": the value it keeps.)
    r"(?:\b(?:to|back\s+to|be|(?:stay|stays|remain|remains)(?:\s+at)?)\s+"
    r"|\b(?:keep|leave)\s+`[^`\n]{1,60}`\s+at\s+|(?<![=!<>])=(?!=)\s*)`?(?<![\d.])(\d+(?:\.\d+)?)\s*(" + w.VALUE_UNITS + r")?`?(?!\w|\.\w)"
    # (From a number's first digit only: a long run of digits is read once.)
    # ("512x512로 리사이즈": a size of two sides, not the value 512.)
    r"|`?(?<![\d.])(?<!\dx)(?<!\d×)(\d++(?:\.\d+)?)\s*(" + w.VALUE_UNITS + r")?`?\s*(?:으로|로)(?![가-힣])"
    # "`PG_MAX_RETRIES` 는 0 이어야 하고": the value it has to be (a number
    # standing alone: not the end of `2024-05-01T09:00:00`).
    r"|(?:(?<=\s)|(?<=\s`))(\d++(?:\.\d+)?)\s*(" + w.VALUE_UNITS + r")?`?\s*"
    r"(?:이어야|여야|이여야|(?:이|가|는|은)\s*(?:되어야|돼야))",
    re.I,
)


# A literal given to a setting: `= "None"`, "has to stay `*`", "keep `"Lax"`",
# "to the explicit list `[…]`".
_LITERAL = re.compile(
    # (An assignment's "=", not a comparison's "==", "!=", "<=".)
    r"(?:(?<![=!<>])=(?!=)|\b(?:be|stay|stays|keep|remain|to))\s*`?\s*([\"'])([^\"'`\n]{1,40})\1"
    # ("stay on `/v1/orders`": where, not what.)
    r"|(?:(?<![=!<>])=(?!=)\s*|\b(?:be|stay|stays|keep|remain|to)\s+(?:(?!(?:on|in|for|from|with|under|into|via|by|what)\s)[a-z]+\s+){0,3}"
    # "Make it `ON DELETE CASCADE`", "Declare the FK … as `ON DELETE RESTRICT`":
    r"|\bmake\s+(?:it|this|that|them)\s+|\b(?:declare|define|mark|set)\b[^.;\n`]{0,60}(?:`[^`\n]+`[^.;\n`]{0,30})?\bas\s+)`([^`\n]{1,80})`"
    # A header or key with its value: `Cache-Control: no-store` (not a cache or
    # route key, `home:feed:{user_id}`, whose colons have no space after them).
    # (`strategy.fail-fast: true`: a dotted key too.)
    r"|`[A-Za-z][\w.-]*\s*:\s+([^`\n]{1,60})`"
    # "`'Strict'`로 바꿔야", "`'Lax'`로 유지", "`None; Secure`로 설정해":
    # ("`"2024-06-01"`(v2)로 고정": a short aside may stand between.)
    # ("`https://app.example.com` 하나로만 제한": the only value allowed.)
    # ("`python -c` 로 바꾸거나 curl 을 설치해": one way of two, no value.)
    r"|`([^`\n]{1,40})`\)?(?:\s*\([^)\n]{1,30}\))?\s*(?:하나\s*)?(?:으로|로)(?:만)?\s*(?:설정|바꿔|바꾸|변경|유지|두|둬|맞춰|지정|고정|올려|낮춰|내려|높여|늘려|줄여|되돌|켜|꺼|끄|열어|제한|한정|옮겨|옮기|해\s*주|해야)(?!\S*거나)"
    # "Set `X` to false", "set `X` back to true" (not "require X to be true"):
    r"|\b(?:set\s+`[^`\n]+`\s+(?:back\s+)?to|back\s+to)\s+(true|false|on|off)\b"
    # "기본값은 `false` 여야 합니다", "`NORMAL`이어야":
    # ("최소 `100/minute`은 되어야": the same.)
    r"|`([^`\n]{1,40})`(?:\s*\([^)\n]{1,30}\))?\s*(?:이어야|여야|이여야|(?:은|는|이|가)?\s*(?:되어야|돼야))"
    # "please set `CORS_ALLOW_CREDENTIALS = True`", "Pin `X = False` explicitly":
    # a name given its value in one span.
    r"|\b(?:set|pin|keep|force)\s+`([A-Za-z_][\w.]*\s*=\s*[^`=\n]{1,40})`",
    re.I,
)
# A switch's value however written: "set it to `on`" asks what "= true" does.
_BOOLEAN = {"on": "true", "yes": "true", "enabled": "true", "off": "false", "no": "false",
            "disabled": "false"}
# A switch's state asked in words: "must be off by default", "has to be
# disabled", "기본값은 꺼져 있어야", "활성화되어 있어야".
_SWITCH_STATE = re.compile(
    r"\b(?:must|should|has\s+to|have\s+to|needs?\s+to|ought\s+to)\s+(?:be|stay|remain)\s+(?:switched\s+|turned\s+)?"
    # (Not for a part: "has to stay disabled for virtual-account payments".)
    # (The state ends the phrase: not "stay on `/v1/orders`", nor "stay
    # disabled for virtual-account payments", a part.)
    r"(?:(off|disabled|false)|(on|enabled|true))\b"
    r"(?=\s*(?:[.,;:)!]|$)|\s+(?:by\s+default|for\s+(?:everyone|everybody|all|every)\b|again\b|too\b))"
    r"|(꺼져|꺼\s*두|비활성화(?:되어|돼|\s*상태))\s*(?:있어야|야|여야|이어야)"
    r"|((?<!비)(?:켜져|켜\s*두|활성화(?:되어|돼|\s*상태)))\s*(?:있어야|야|여야|이어야)",
    re.I,
)
# "Do not set X to …": what follows is the value not wanted.
_NOT_THIS = re.compile(
    r"\b(?:do\s+not|don't|never|must\s+not|mustn't|should\s+not|shouldn't)\s+(?:\w+\s+)?"
    r"(?:set|use|change|make|put|go|switch|raise|lower|increase|decrease|allow)\b|하지\s*마",
    re.I,
)
# "`1s` 말고 `30s`로", "`allkeys-lru`로 바꾸시면 안 되고 `volatile-lru`로": in
# Korean what is not wanted comes first, and what is asked after.
_NOT_THIS_KO = re.compile(
    r"(?:`[^`\n]+`|(?<![\w.])\d[\w.]*+)\s*(?:으로|로)?\s*(?:(?!넘|초과)[가-힣]{1,6}\s*)?(?:말고|(?:으)?면\s*안\s*(?:되고|됩니다|돼요))")
# ("첨부 크기를 10MB로 막으면 안 됩니다": 10MB is what is refused; "30초를
# 넘기면 안 됩니다" is a bound, not a refusal.)


@lru_cache(maxsize=8192)  # a clause is probed for a reversal against several findings
def setting_values(text: str) -> frozenset[str]:
    """The values a request asks for, each as `value@setting`: "set `TTL` to
    30" is `30@ttl`, "`Cache-Control: no-store`" is `=no-store@cache-control`,
    "600초 이하" is `<=600초@…` (a bound). The setting is read as
    `_Settings.before` says (empty when none is named). A value the clause asks
    *not* to set is none; one it asks to remove is `!value@setting`. Names asked
    to be there or gone ("add `--frozen-lockfile`", "remove `X`") are `+@name`
    and `-@name`; one asked to stay as it is or to change, `^@name` and `~@name`."""
    out: set[str] = set()
    # ("**60**으로 낮춰": emphasis marks are no part of the value.)
    text = clock(numerals(w.ungrouped(plain(text))))
    if "(" in text:
        text = _DESCRIBED.sub(r"\1", text)
    stances: set[int] = set()
    timing: set[int] = set()
    logfiles: set[int] = set()
    nulls: set[int] = set()
    locales: set[int] = set()
    switches: set[int] = set()
    for clause in asked(text):
        # "New: `SESSION_COOKIE_SAMESITE` is `"Lax"`. Set it to `"Strict"`": the
        # setting may be named in the point before the clause that asks.
        before = text[:max(text.find(clause), 0)]
        clause = _without_lines(clause)
        refused = _NOT_THIS.search(clause)
        if refused and refused.group(0).startswith("하지"):
            # In Korean the refusal follows what it refuses ("`X` 호출은
            # 제거하지 마세요"): the names are read with it.
            out.update(presence(clause))
            refused = None
        elif refused:
            # What is asked for comes before "do not set …" ("use `pnpm` and do
            # not switch to `yarn`": `yarn` is not asked to be there).
            out.update(v for v in presence(clause[refused.start():]) if v.startswith("-@"))
            clause = clause[: refused.start()]
            out.update(presence(clause))
        else:
            out.update(presence(clause))
        stances.add(retry_stance(clause))
        timing.add(sync_stance(clause))
        logfiles.add(log_file_stance(clause))
        way = switch_stance(clause)
        switches.add(way)
        if way and _DEBUG_LOGGING.search(clause):
            # "운영에서 디버그 로깅은 켜지 마십시오": the log level, said in words
            # (by this clause's own switch, read once).
            out.add(("=debug" if way > 0 else "!=debug") + "@log_level")
        nulls.add(null_stance(clause))
        locales.add(locale_stance(clause))
        test = _TEST_ASKED.search(clause)
        if test:
            # "add a test that `first: 101` is rejected": a test's inputs, not
            # values asked (what comes before it may still ask one).
            clause = clause[:test.start()] if test.group(0)[:1] != "테" else clause[:0]
        refused_ko = _NOT_THIS_KO.search(clause)
        skip = refused_ko.end() if refused_ko else 0  # values before it are not asked
        setting = _Settings(before, clause)
        removed = [(m.end(), _REMOVE_END.search(clause, m.end())) for m in _REMOVE.finditer(clause)]
        spans = [(start, end.start() if end else len(clause)) for start, end in removed]

        def add(value: str, at: int, key: str | None = None,
                spans: list[tuple[int, int]] = spans, setting: _Settings = setting,
                skip: int = skip) -> None:
            if at < skip:
                return
            if key is None:
                key = setting.before(at)
            gone = "!" if any(start <= at < end for start, end in spans) else ""
            key = key.rsplit(".", 1)[-1]  # named as the anchors name it
            out.add(f"{gone}{_in_units_of(value, key)}@{key.lower()}")

        for match in _VALUE.finditer(clause):
            if _NOT_VALUE.search(clause, max(0, match.start(1) - 20), match.start(1)) or (
                    _UNDONE.match(clause, match.end())):
                continue  # "to 60 minutes, not 15": 15 is what is not asked
            number, unit = match.group(1), (match.group(2) or "").lower()
            per = PER.match(clause, match.end())  # "50 messages per second": a rate
            if per and _LOAD.match(clause, per.end()):
                continue  # "200 rps 기준", "100/s에서": the load tested under, no value
            unit += "/" + per_of(per) if per else ""
            if not per and unit in ("", "회", "건", "번"):
                # ("분당 5회": the rate 5 per minute, said the Korean way.)
                number, unit = _rate_before(clause, match.start(1), number, unit)
            bound = bound_of(clause, match.start(1), match.end())
            # (One digit in prose is a value only as a bound: "최소 3 이상".)
            if len(number) >= 2 or unit or bound:
                add(bound + number + unit, match.start(1))
        for match in _SET_VALUE.finditer(clause):
            number = match.group(1) or match.group(3) or match.group(5)
            unit = match.group(2) or match.group(4) or match.group(6) or ""
            end = match.end() + (clause[match.end():match.end() + 1] == "`")
            if match.group(1) and _CHANGED_FROM.match(clause, end):
                continue  # "`workers = 2`를 `workers = 8`로": what it is now
            # ("업로드 한도는 최소 200MB는 되어야": a bound, said before it.)
            at_least = bound_of(clause, match.start(5), match.end(5)) if match.group(5) else ""
            # ("keep `RETRIES` at 0": the name is inside the match, before the value.)
            at = match.start(1) if match.group(0)[:1] in "kKlL" else match.start()
            per = None if unit else PER.match(clause, match.end())
            if per and per_of(per) in _TIME_RATES:
                unit = "/" + per_of(per)  # "to 5 a minute": a rate
            elif not per and unit in ("", "회", "건", "번"):
                first = next(match.start(g) for g in (1, 3, 5) if match.group(g))
                number, unit = _rate_before(clause, first, number, unit)  # ("분당 5회로")
            if not _UNDONE.match(clause, match.end()):
                add(at_least + number + unit.lower(), at)
        for match in _LITERAL.finditer(clause):
            if _REFUSED_LITERAL.search(clause, max(0, match.start() - 40), match.start()):
                continue  # "must not default to `*`": the value refused (`wildcards`)
            quoted, spanned, keyed = match.group(2), match.group(3), match.group(4)
            spanned = spanned or match.group(8)  # (`X = value` after "set": as after "to")
            literal = (quoted or spanned or keyed or match.group(5) or match.group(6)
                       or match.group(7) or "")
            written = literal.strip().strip("\"'")  # (a name's case: `idleTimeoutMs`)
            literal = written.lower()
            key = None
            assigned = bool(spanned or match.group(5)) and "=" in literal
            if assigned:  # `PRAGMA synchronous=FULL`: the value of `synchronous`
                name, literal = (part.strip() for part in literal.rsplit("=", 1))
                literal = literal.strip("\"'")  # (`X = "5/minute"`: the value in quotes)
                name = written.rsplit("=", 1)[0].strip()
                name = name.split()[-1] if name.split() else name
                key = name if _CODE_NAME.fullmatch(name.lower()) else None
                if _CHANGED_FROM.match(clause, match.end()):
                    continue  # "`workers = 2`를 `workers = 8`로": what it is now
            if FLAG.fullmatch(literal):
                continue  # `--splits 2`: a flag's value (`flags` below)
            if keyed:
                key = match.group(0).strip("`").split(":", 1)[0].strip()
                if _CHANGED_FROM.match(clause, match.end()):
                    continue  # "`retention_period: 720h`를 `8760h`로": what it is now
            named = (spanned or match.group(5) or match.group(7) or "").strip()
            # `NORMAL`, `STRICT`, `Strict`, `Lax`: a value (`orjson`, `SESSION_TTL`: names).
            constant = (named.isupper() and "_" not in named) or (
                named.istitle() and named.isalpha()) or literal in _LOG_LEVELS
            fixed = bool(match.group(5)) and _FIX_TO.search(match.group(0))
            if named and not (assigned or constant or fixed or named.startswith(("'", '"'))) and (
                _CODE_NAME.fullmatch(literal)
                and literal not in ("none", "true", "false", *_BOOLEAN)
            ):
                continue  # "switch to `orjson`", "`orjson`으로 바꿔": a name, not a value
            if spanned and spanned.startswith("/") and not assigned:
                continue  # "serve it under `/ko`": a route, not a value
            if w.PATH.fullmatch(literal) and w.is_file(literal):
                continue  # "`utils/dates.py`로 옮겨": where it goes, not a value
            at = match.start(6) if match.group(6) else match.start()  # after "set `X`"
            if literal.strip("[]\"' ") == "*":
                literal = "*"  # `["*"]`, `"*"`: the wildcard
            if is_version(literal):
                add(literal.lstrip("v") + VERSION, at, key)  # "should be `20.11.1`"
            elif rate := _RATE.fullmatch(literal):  # `"5/minute"`: the rate "5 per minute" is
                # ("최소 `100/minute`은": at least that rate.)
                add(bound_of(clause, match.start(), match.end()) + rate.group(1) + "/"
                    + per_unit(rate.group(2)), at, key)
            elif NUMBER_VALUE.fullmatch(literal):
                add(literal.replace(" ", ""), at, key)  # the same value as "to 0"
            elif literal:
                literal = _BOOLEAN.get(literal, literal)  # `on` and `true`: one value
                add("=" + " ".join(literal.split()), at, key)
        for match in _SWITCH_STATE.finditer(clause):
            add("=false" if match.group(1) or match.group(3) else "=true", match.start())
        for at, name, literal in assignments(clause):
            if NUMBER_VALUE.fullmatch(literal):
                add(literal.replace(" ", ""), at, name)
            elif literal:
                add("=" + _BOOLEAN.get(literal, literal), at, name)
        for at, value, package in versions(clause):
            add(value, at, package)
        for at, value in (zones(clause) + destinations(clause) + languages(clause) + formats(clause)
                          + regions(clause)):
            add(value, at)
        for at, value in wildcards(clause):
            add(value, at)
        for at, value, name in flags(clause):
            add(value, at, name)  # `--splits 2`: the flag's value, as `splits = 2`
        for at, value in file_formats(clause):
            add(value, at, "")  # (of the file the words name, not of a name before it)
        for at, value in listen_addresses(clause):
            # (Of the listener the point names in words, not of the name in
            # code before it: "`ingest_errors_total` … listen on loopback only".)
            add(value, at, "")
        for at, value in cache_words(clause):
            add(value, at, "cache-control")
        for at, value, old_name in renames(clause):
            add(value, at, old_name)
    if any(v.startswith(("+@", "-@")) or (v.startswith(("=true@", "=false@")) and not v.endswith("@"))
           for v in out):
        switches.clear()  # the switch is named: "turn `X` back on", "`X=true`로 … 켜"
    for stance, name in ((stances, "~retry"), (timing, "~sync"), (logfiles, "~logfile"),
                         (nulls, "~required"),
                         (locales, "~localized"), (switches, "~switch")):
        stance.discard(0)
        if len(stance) == 1:  # (for it and against it, in two places: neither)
            out.add(("+" if stance.pop() > 0 else "-") + "@" + name)
    return frozenset(out)


_DEBUG_LOGGING = re.compile(r"(?:디버그|\bdebug)\s*(?:수준|레벨|level\s+)?\s*(?:로그|로깅|logging\b|logs?\b)",
                            re.I)


# "1시간으로 늘린 것은 되돌려": the value a change set, asked undone (not asked).
# ("15분으로 줄인 변경은 다시 3600으로 돌려": the value it goes back to may
# come between.)
_UNDONE = re.compile(
    r"`?\s*(?:으로|로)?\s*(?:늘린|올린|줄인|낮춘|바꾼|변경한|설정한|정한|잡은)\s*"
    r"(?:것|부분|건|값|변경)(?:은|을|도|는)?\s*(?:다시\s*)?(?:\S{1,12}?(?:으로|로)\s*)?"
    r"(?:되돌|돌려|돌리|원복|롤백|취소|원래대로)"
    # "`max_retries`를 3으로 줄이면 계약 위반이고": what would follow if set so
    # (not "3으로 줄이면 됩니다": that asks it).
    r"|`?\s*(?:으로|로)?\s*(?:줄이|낮추|올리|늘리|바꾸|설정하|정하|잡으)면(?!\s*(?:좋|됩|되|충분|해결|깔끔))")
# "15분으로 줄인 변경(`ACCESS_TOKEN_TTL = 900`)은": the parenthesis says what
# the change set, which is no value asked.
_DESCRIBED = re.compile(r"((?:늘린|올린|줄인|낮춘|바꾼|변경한|설정한)\s*(?:것|부분|건|값|변경))\s*\([^)\n]{0,80}\)")
# A setting whose name ends in a unit counts in it: `CACHE_TTL_SECONDS` 3600
# is 3600 s, which "1분 이하" (at most a minute) is not.
NAME_UNITS = {"seconds": "s", "secs": "s", "sec": "s", "ms": "ms", "millis": "ms",
               "minutes": "min", "mins": "min", "hours": "h", "days": "d"}
_BARE_NUMBER = re.compile(r"(?:[<>]=)?\d+(?:\.\d+)?")


def _in_units_of(value: str, key: str) -> str:
    """`value` with the unit `key`'s name ends in, when it is a bare number
    (`CACHE_TTL_SECONDS`, and in camelCase `idleTimeoutMs`: the name as
    written, before it is lowercased)."""
    return value + unit if (unit := name_unit(key)) and _BARE_NUMBER.fullmatch(value) else value


def name_unit(name: str) -> str | None:
    """The unit a setting's name ends in: `ttl_seconds` counts in s,
    `idleTimeoutMs` in ms (`Items`, `alarms`: no unit but a word's end)."""
    if "_" in name:
        return NAME_UNITS.get(name.rsplit("_", 1)[-1].lower())
    camel = _CAMEL_TAIL.search(name)
    return NAME_UNITS.get(camel.group(0).lower()) if camel else None


_CAMEL_TAIL = re.compile(r"(?<=[a-z0-9])[A-Z][a-z]*$")


# Log levels in code are values, not names: "must stay at `warn`".
_LOG_LEVELS = frozenset({"trace", "debug", "info", "warn", "warning", "error", "critical", "fatal"})


def _without_lines(clause: str) -> str:
    """The clause with the line numbers of its paths blanked: in
    "`logging.yaml:12`" 12 is where, not a value."""
    for m in w.PATH.finditer(clause):
        if m.group(2) and w.is_file(m.group(1)):
            clause = clause[:m.start(2) - 1] + " " * (m.end(2) - m.start(2) + 1) + clause[m.end(2):]
    return clause


# "…, not 15", "instead of 10", "rather than 5": the value after it is refused.
# ("to 60 minutes, not 15", "from 10/s to 50/s": 15 and 10 are not asked.)
_NOT_VALUE = re.compile(r"\b(?:not|instead\s+of|rather\s+than|from)\s+`?$", re.I)

# "`ko` 로 고정", "`strict`로 설정": set to a value (a name is switched to: "`orjson`으로 바꿔").
_FIX_TO = re.compile(r"(?:설정|고정|지정|맞춰|유지|두|둬)$")


# A request for a test: the values in it are the test's inputs.
_TEST_ASKED = re.compile(
    r"\b(?:add|write|need|needs|missing)\s+(?:a\s+|an\s+|one\s+more\s+)?(?:unit\s+|regression\s+)?tests?\s+(?:that|for|where|with|case)\b"
    r"|테스트(?:를|도|가)?\s*(?:하나\s*)?(?:추가|작성|넣어)", re.I)
_REFUSED_LITERAL = re.compile(r"\b(?:must|should)\s*(?:not|n't)\s+(?:default\s+)?$", re.I)


class _Settings:
    """The settings a clause names, read once, for each value in it."""

    def __init__(self, before: str, clause: str) -> None:
        self.clause = clause
        # Each name in backticks (not one given as a value: "`allkeys-lru`로"),
        # where it ends, and the last setting-looking name up to it.
        self.ends: list[int] = []
        self.names: list[str] = []
        self.last_setting: list[str | None] = []
        for m in _SETTING.finditer(clause):
            name = m.group(1)
            if ((w.PATH.fullmatch(name) and w.is_file(name)) or name.lower() in LITERAL_WORDS
                    or _GIVEN.match(clause, m.end())):
                continue
            setting = name if _SETTING_NAME.fullmatch(name) else (
                self.last_setting[-1] if self.last_setting else None)
            self.ends.append(m.end())
            self.names.append(name)
            self.last_setting.append(setting)
        self.earlier = [n for n in _SETTING.findall(before) if _SETTING_NAME.fullmatch(n)]

    def before(self, at: int) -> str:
        """The setting a value at `at` is given to: inside its code span
        (`max_delay=300`); else the clause's last name in backticks before it,
        a setting's name (`SESSION_COOKIE_SAMESITE`, `max_age`, `Cache-Control`)
        before any other (`prod`, a profile); else, when the clause refers back
        ("Set it to …", "기본값은 …"), a setting named earlier in the point; ""
        when none is named ("48KB → 83KB로 늘어나니" gives no setting a value).
        As written: the unit at the end of `idleTimeoutMs` is read before the
        name is lowercased."""
        inside = _OPEN_ASSIGNMENT.search(self.clause, max(0, at - 90), at)
        if inside:
            return str(inside.group(1))
        last = bisect_right(self.ends, at) - 1
        if last >= 0 and _RIGHT_BEFORE.fullmatch(self.clause, self.ends[last], at):
            return self.names[last]  # "`WORKERS` must be 4", "`X` = 4"
        if last >= 0:
            return self.last_setting[last] or self.names[last]
        if self.earlier and _REFERS.search(self.clause, 0, at):
            return str(self.earlier[-1])
        return ""


# A `key: value` span followed by the object particle, then "…로 설정/바꿔":
# the setting as it stands, being changed to another value.
_CHANGED_FROM = re.compile(r"\s*(?:을|를|은|는)\s.*?`[^`\n]+`\s*(?:으로|로)\s*\S", re.S)
_GIVEN = re.compile(r"\s*(?:으로|로)(?![가-힣])")
_REFERS = re.compile(r"\b(?:it|its)\b|기본값|값(?:은|을|이|도)\s|이\s*값|그\s*값|해당", re.I)
_RIGHT_BEFORE = re.compile(r"\s*(?:(?:must|should|has\s+to|needs\s+to)(?:\s+be)?|=)\s*`?")
_OPEN_ASSIGNMENT = re.compile(r"`([A-Za-z_][\w.-]*)\s*=?\s*$")
# What a setting's name looks like: SESSION_TTL, max_age, Cache-Control.
_SETTING_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+"
                           r"|[A-Z][a-z]+(?:-[A-Z][a-z]+)+")


def values(text: str) -> frozenset[str]:
    """The values a request asks for: "set it to 30", "365일 이상", "`1s`로",
    "= `"None"`", "stay `*`" (`setting_values` without the settings and
    without what it asks to remove)."""
    return frozenset(v.rsplit("@", 1)[0] for v in setting_values(text)
                     if not v.startswith(("!", "+", "-", "^", "~")))


# "Remove `Cache-Control: no-store` …": what follows, up to the next "and" or
# comma, is taken away, not asked for.
_REMOVE = re.compile(r"\b(?:remove|drop|delete|get\s+rid\s+of|strip)\b", re.I)
_REMOVE_END = re.compile(r"\s+and\s+|,\s|;|\.\s")


# A setting's name in backticks: `SESSION_TTL`, `max_age`, `Cache-Control`
# (not a path, a route or an expression).
# (`home:feed:{user_id}`, a cache or route key, is one name: its colons have
# no space after them, unlike `Cache-Control: no-store`.)
_SETTING = re.compile(r"`(?:PRAGMA\s+)?([A-Za-z_][\w.-]*(?::[\w.{}-]*[A-Za-z_{][\w.{}-]*)*)"
                      r"(?:\s*[=:][^`]*)?`", re.I)


# A bare name in backticks after "to" ("switch to `orjson`") is a name, not a value.
_CODE_NAME = re.compile(r"[a-z_][a-z0-9_.]*(?:\(\))?")
