"""How a quantity is written in words, for `bot.values`: counts ("세 번",
"three times", "두 개"), times of day ("04:00"), what a rate counts against
("per second"), and bounds ("600초 이하", "at most 600", "최소 3회까지", "1분
넘게 유지하면 안 됩니다"). Pure.
"""

from __future__ import annotations

import re

# "5000을 넘지 않게", "5000을 초과하지 않도록": at most that.
NOT_BEYOND = (r"(?:을|를)?\s*(?:넘지|넘기지|초과하지)\s*(?:않|말|마)"
               # "1분 넘게 유지하면 안 됩니다", "30초를 넘기면 안 됩니다": at most that.
               r"|(?:을|를)?\s*(?:넘게|넘겨서|넘기면|넘으면|넘어서는|넘어선|초과하면|초과해서)\s*(?:[가-힣]+\s*){0,2}?(?:면|서는)?\s*안\s*(?:됩|되|돼)")


# "세 번까지만", "적어도 여덟 번", "three times": a count in words, read as "3회"
# (not "한 번에", at a time; "한 번 더", once more; nor "2번", a point's number).
_NUMERAL = {"한": 1, "두": 2, "세": 3, "네": 4, "다섯": 5, "여섯": 6, "일곱": 7, "여덟": 8,
            "아홉": 9, "열": 10, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "fifteen": 15, "twenty": 20,
            "thirty": 30, "fifty": 50, "sixty": 60}
_COUNT = re.compile(r"(?<![가-힣\w])(한|두|세|네|다섯|여섯|일곱|여덟|아홉|열)\s*(?:번|회)(?![가-힣]*째)(?!\s*(?:에|더|쯤))"
                    r"|\b(one|two|three|four|five|six|seven|eight|nine|ten)\s+(?:times|retries|attempts|tries)\b"
                    r"|(?<![\w.])(\d+)\s*(?:times|retries|attempts|tries)\b", re.I)


# "두 번이면 충분합니다", "two retries are enough": at most that, as a request.
ENOUGH = r"(?:이)?면\s*충분|(?:is|are|should\s+be)\s+(?:more\s+than\s+)?enough\b"


# "at most ten database connections", "5 worker processes": things counted,
# in words or digits, with a word between the count and the things.
_THINGS_EN = re.compile(
    r"(?<!hundred\s)(?<!thousand\s)\b(one|two|three|four|five|six|seven|eight|nine|ten|twenty|fifty|\d+)\s+(?:[a-z]+\s+)?"
    r"(connections|workers|replicas|pods|threads|processes|requests|jobs|items|rows)\b", re.I)


def _things(m: re.Match[str]) -> str:
    word = m.group(1).lower()
    count = word if word.isdigit() else str(_NUMERAL[word])
    return f"{count} {m.group(2)}"


# "워커 프로세스는 두 개로", "열 대까지": things counted in words.
# ("여덟 갈래로 나눠": eight parts, counted as things.)
_COUNT_THINGS = re.compile(r"(?<![가-힣\w])(한|두|세|네|다섯|여섯|일곱|여덟|아홉|열)\s*(개|대|장|명|갈래)(?![가-힣]*째)")


# "2 hours", "30 minutes", "for an hour", "한 시간 이내": a duration in words,
# read with its unit ("2h", "30min", "1h", "1시간"). ("a minute" after a count
# is a rate, "60 requests a minute": only after a word that bounds or spans.)
# ("over the last 7 days": a window measured over, no value.)
_DURATION = re.compile(r"(?<!last\s)(?<!past\s)(?<!next\s)(?<!previous\s)"
                       r"(?<![\w.])(\d+(?:\.\d+)?)\s+(hours?|minutes?|mins|seconds?|secs|days?)\b"
                       r"|\b((?:for|within|under|than|most|least|to|over|below|above|after)\s+)"
                       r"(?:an?|one)\s+(hour|minute|second|day)\b"
                       # "expire after five minutes at most"
                       r"|\b(two|three|four|five|six|seven|eight|nine|ten|fifteen|twenty|thirty|sixty)"
                       r"\s+(hours|minutes|seconds|days)\b", re.I)
_DURATION_KO = re.compile(r"(?<![가-힣\w])(한|두|세|네|다섯|여섯|일곱|여덟|아홉|열)\s*시간")
_UNIT_OF = {"hour": "h", "minute": "min", "min": "min", "second": "s", "sec": "s", "day": "d"}
# "세션은 최소 하루는 유지돼야": days in words, as a length of time ("하루에 한
# 번", a rate, and "하루 종일" are none).
_DAYS_KO = re.compile(r"(?<![가-힣])(하루|이틀|사흘|나흘|일주일)(?=\s*(?:은|는|이상|이하|이내|까지|동안|로|으로|가|이)(?![가-힣]))")
_DAYS = {"하루": 1, "이틀": 2, "사흘": 3, "나흘": 4, "일주일": 7}


def _duration(m: re.Match[str]) -> str:
    if m.group(1):
        return m.group(1) + _UNIT_OF[m.group(2).lower().rstrip("s") or "s"]
    if m.group(5):
        word = m.group(5).lower()
        return f"{_NUMERAL[word]}{_UNIT_OF[m.group(6).lower().rstrip('s')]}"
    return m.group(3) + "1" + _UNIT_OF[m.group(4).lower()]


# "`20 * 1024 * 1024`": a size in bytes, as code writes megabytes ("20mb").
_BYTES = re.compile(r"(?<![\w.*])(\d+)\s*\*\s*1024(?:\s*\*\s*1024(?:\s*\*\s*1024)?)?(?![\w.*])")
_BYTE_UNITS = {1: "kb", 2: "mb", 3: "gb"}


# "a hundred ids", "two thousand rows": round numbers in words, read as digits
# (the count of things they give is then read as any number is).
# (Not part of a longer number: "two hundred fifty", "a hundred thousand".)
_ROUND = re.compile(
    r"\b(an?|one|two|three|four|five|ten)\s+(hundred|thousand)\b"
    r"(?!\s+(?:and|hundred|thousand|million|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
    r"|one|two|three|four|five|six|seven|eight|nine|ten)\b|\s*-)", re.I)
_ROUND_OF = {"hundred": 100, "thousand": 1000}


def _round(m: re.Match[str]) -> str:
    word = m.group(1).lower()
    return str((1 if word in ("a", "an") else _NUMERAL[word]) * _ROUND_OF[m.group(2).lower()])


def numerals(text: str) -> str:
    """Counts written in words or with "times" as "<n>회"; things counted in
    words as "<n>개" (대, 장, 명); round numbers in words ("a hundred") as
    digits; durations in words with their unit; sizes written as products of
    1024 in megabytes (or kilo-, gigabytes)."""
    lowered = text.lower()
    if "hundred" in lowered or "thousand" in lowered:
        text = _ROUND.sub(_round, text)
    if _THINGS_EN.search(text):
        text = _THINGS_EN.sub(_things, text)
    if "1024" in text:
        text = _BYTES.sub(lambda m: m.group(1) + _BYTE_UNITS[m.group(0).count("1024")], text)
    if _DURATION.search(text):
        text = _DURATION.sub(_duration, text)
    if _DAYS_KO.search(text):
        text = _DAYS_KO.sub(lambda m: f"{_DAYS[m.group(1)]}일", text)
    if _DURATION_KO.search(text):
        text = _DURATION_KO.sub(lambda m: f"{_NUMERAL[m.group(1)]}시간", text)
    if _COUNT_THINGS.search(text):
        text = _COUNT_THINGS.sub(
            lambda m: f"{_NUMERAL[m.group(1)]}{m.group(2).replace('갈래', '개')}", text)
    if not _COUNT.search(text):
        return text
    return _COUNT.sub(lambda m: f"{m.group(3) or _NUMERAL[(m.group(1) or m.group(2)).lower()]}회", text)


# "04:00", "03:30": a time of day, read as "0400시각" (a unit of its own: no
# duration is compared with it; "1:10", a ratio, is none).
_CLOCK = re.compile(r"(?<![\d:.+])(?<!\d\d:\d\d:\d\d-)([01]\d|2[0-3]):([0-5]\d)(?![\d:])")
# "per second", "a request": what a rate is counted against.
PER = re.compile(r"\s*+(?:(?:[a-z]+\s+|[a-z]+(?=/))?(?:(?:per|a|an|each|/)\s*(second|sec|minute|min|hour|hr|h"
                  r"|day|request|batch|page|call|message|user)s?|/\s*(s))(?![a-z])"
                  # ("100 rps", "5 rpm": a rate in one word. "50 rps로": a particle may follow.)
                  r"|(rps|qps|rpm|rph)(?![a-z]))", re.I)
# "분당 5회", "초당 최대 100건": the rate said before its count ("5분당 1회": one
# per five minutes).
PER_BEFORE = re.compile(r"(?<![\d.])(?:(\d+)\s*)?(초|분|시간|일|하루)\s*당\s*(?:최대|최소|최대한|평균)?\s*$")


def per_unit(word: str) -> str:
    """What a rate counts per, one way: "5/min" and "5 per minute" are one
    rate (`minute`), as "50/sec", "50/s", "50 rps" and "50 per second" are."""
    word = word.lower()
    return _PER_WORDS.get(word, word)


def per_of(per: re.Match[str]) -> str:
    """`per_unit` of a `PER` match (its word, or its one-word rate)."""
    return per_unit(per.group(1) or per.group(2) or per.group(3))


_PER_WORDS = {"sec": "second", "s": "second", "min": "minute", "hr": "hour", "h": "hour",
              "rps": "second", "qps": "second", "rpm": "minute", "rph": "hour",
              "초": "second", "분": "minute", "시간": "hour", "일": "day", "하루": "day"}


def per_before(text: str) -> tuple[str, int] | None:
    """The time a Korean rate counts per, said before the count, and how many
    of it: ("minute", 1) for "분당 5회", ("minute", 5) for "5분당 1회"; or None."""
    match = PER_BEFORE.search(text)
    if match is None:
        return None
    return _PER_WORDS[match.group(2)], int(match.group(1) or 1)


def clock(text: str) -> str:
    if ":" not in text:
        return text
    return _CLOCK.sub(lambda m: f"{m.group(1)}{m.group(2)}시각", text)


# "600초 이하", "at most 600", "at least 365": a bound, which a value inside it meets.
_UPPER_AFTER = re.compile(r"`?(?:\s*\([^)\n]{1,20}\)|\))?\s*(?:이하|이내|까지|이전|or\s+(?:less|fewer)|or\s+earlier|max(?:imum)?\b"
                          # "an hour at most", "두 번이면 충분합니다", "two retries are enough"
                          r"|at\s+most\b|tops\b|" + ENOUGH +
                          # "5000을 넘지 않게", "5000을 초과하지 않도록"
                          r"|" + NOT_BEYOND + ")", re.I)
_LOWER_AFTER = re.compile(r"`?(?:\s*\([^)\n]{1,20}\)|\))?\s*(?:이상|이후|or\s+more|or\s+later|min(?:imum)?\b"
                          r"|at\s+least\b)", re.I)
_UPPER_BEFORE = re.compile(
    # ("Cap `limit` at 100": the setting may stand between.)
    # ("needs to go up to 90", "raise it up to 90": a raise to a value, not a cap.)
    r"(?:at\s+most|under|below|(?<!\bgo\s)(?<!\bgoes\s)(?<!\bit\s)(?<!\bbump\s)(?<!\braise\s)up\s+to|no\s+more\s+than|(?:cap(?:ped)?|limit(?:ed)?)\s+(?:it\s+|`[^`\n]{1,40}`\s+)?(?:at|to)"
    r"|(?:not|never|n't)\s+(?:to\s+)?(?:exceed|go\s+(?:above|over|past))"
    r"|maximum\s+(?:of|to)|최대(?:값|치)?(?:을|를|은|는|이|가)?|상한(?:값|선)?(?:을|를|은|는|이|가)?)\s*`?$", re.I)
_REFUSED_BEYOND = re.compile(
    r"\b(?:reject|refuse|deny|block|disallow|forbid)\w*\s+(?:anything|any\s+value|values?|requests?|calls?)?"
    r"\s*(above|over|more|greater|below|under|less)(?:\s+than)?\s*`?$", re.I)
_LOWER_BEFORE = re.compile(
    r"(?:at\s+least|above|no\s+less\s+than|minimum\s+(?:of|to)"
    r"|최소(?:값|치|한)?(?:을|를|은|는|이|가)?|적어도|하한(?:값|선)?(?:을|를|은|는|이|가)?)\s*`?$", re.I)


def bound_of(clause: str, start: int, end: int) -> str:
    """"<=" for an upper bound, ">=" for a lower one, "" for a value. (The word
    after the number decides first: "최소한 600초 이하로" is at most 600.)"""
    upper = _UPPER_AFTER.match(clause, end)
    if upper and upper.group(0).strip().startswith("까지") and _LOWER_BEFORE.search(
            clause[max(0, start - 60):start]):
        return ">="  # "최소 3회까지 재시도": at least three times ("까지" says little)
    if upper:
        return "<="
    if _LOWER_AFTER.match(clause, end):
        return ">="
    before = clause[max(0, start - 60):start]
    refused = _REFUSED_BEYOND.search(before)
    if refused:
        # "reject anything above 100": at most 100 is what is asked.
        return ">=" if refused.group(1).lower() in ("below", "under", "less") else "<="
    return "<=" if _UPPER_BEFORE.search(before) else ">=" if _LOWER_BEFORE.search(before) else ""
