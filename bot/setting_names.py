"""How two findings name one setting, for `bot.contradictions`: in code
(`pool_size`), by a name's words said in prose ("idle timeout" for
`session_idle_timeout`), or by what its words mean ("풀 크기" for `pool_size`,
"캐시 유지 시간" for `CACHE_TTL`); and what keeps two names apart (a connect
timeout and a read timeout, a word of a longer name). Pure.
"""

from __future__ import annotations

import re
from functools import lru_cache

from bot.demands import BACK
from bot.finding import Finding
from bot.quantities import kind
from bot.topics import word_stem
from bot.value_forms import FILE_FORMATS
from bot.wording import EN_CONCEPT, is_file

# The kinds of timeout a client keeps apart: "lower the connect timeout to 3 s"
# and "raise the read timeout to 30 s" are two settings of one `timeout=`.
_TIMEOUT_KINDS = {"connect": "connect", "연결": "connect", "read": "read", "읽기": "read",
                  "write": "write", "쓰기": "write", "idle": "idle", "유휴": "idle",
                  "pool": "pool", "handshake": "handshake", "keepalive": "keepalive",
                  "statement": "statement", "lock": "lock", "request": "request", "요청": "request",
                  "session": "session", "세션": "session"}


def two_timeouts(a: Finding, b: Finding) -> bool:
    """Both speak of a timeout, each of a kind the other never names."""
    # (Asked of every pair of findings: the cheap test first.)
    if not (_of_timeout(a) and _of_timeout(b)):
        return False
    # (`statement_timeout` is a statement's timeout: a name's words count.)
    kinds_a, kinds_b = _timeout_kinds(a), _timeout_kinds(b)
    return bool(kinds_a and kinds_b and kinds_a.isdisjoint(kinds_b))


def _timeout_kinds(finding: Finding) -> set[str]:
    return {_TIMEOUT_KINDS[k] for term in finding.terms for t in term.split("_")
            for k in _kind_words(t)}


def _kind_words(word: str) -> tuple[str, ...]:
    """The kind a word of a name says: `idle`, and in a name run together
    (`idleTimeoutMs`, read as `idletimeoutms`) the word before `timeout`."""
    if word in _TIMEOUT_KINDS:
        return (word,)
    at = word.find("timeout")
    return (word[:at],) if at > 0 and word[:at] in _TIMEOUT_KINDS else ()


def _of_timeout(finding: Finding) -> bool:
    return "~timeout" in finding.terms or any("timeout" in t for t in finding.terms)


def named_in_words(a: Finding, b: Finding) -> set[str]:
    """`a`'s one-word names in code (`schedule`, `timeout`) that `b`, asking a
    value for a setting it names in no code span (or asking it back), says as
    words."""
    valued = any((v.endswith("@") and v[:1] not in "+-!") or v.endswith("@~switch")
                 for v in b.values)
    if not valued and BACK not in b.asks:
        return set()
    words = _words(b)
    if not valued:
        # Asked back as it was, with no value: "세션 쿠키의 사이트 간 전송 제한을
        # 이전 수준으로 다시 풀어주세요" names `SESSION_COOKIE_SAMESITE` by
        # what each of its words means.
        # (A name of three words or more: "세션 만료 안내 문구를 이전처럼" says
        # the words of `SESSION_TTL` about something else.)
        return {x for x in a.anchors if x.startswith("code:") and x.count("_") >= 2
                and _parts_meant(x[5:], words)}
    # (A word of five letters or more: `ttl`, `key` said in words name too much.)
    # (Not a word of a longer name: `checkout` of `checkout-success-rate`.)
    named = {x for x in a.anchors if x.startswith("code:") and x[5:].isalpha()
             and len(x[5:]) >= 5 and x[5:] in words and not part_only(x, a.anchors)}
    # `session_idle_timeout` said as "idle timeout": its last two words, each
    # of three letters or more.
    # (A name of one word, `workers`, only for a point that names nothing in
    # code: "the refresh token" beside `/token/refresh` is no setting `token`.)
    in_words_only = not any(x.startswith("code:") for x in b.anchors)
    named |= {x for x in a.anchors if x.startswith("code:") and (
        _tail_said(x[5:], words) or _compound_said(x[5:], words)
        or (_parts_meant(x[5:], words) and (in_words_only or re.search(r"\w[_.-]\w", x[5:]))))}
    return named


def cited(a: Finding, b: Finding) -> set[str]:
    """`a`'s settings whose number `b` cites beside a value of the same kind it
    asks in words: "30 s already drops chunks; please give it at least a
    minute" is about `upstream.timeout: 30s`."""
    asked = {kind(v[:-1]) for v in b.values
             if v.endswith("@") and v[:1] not in "+-!=^~" and kind(v[:-1]) != "number"}
    if not asked or any(x.startswith("code:") and not x.startswith("code:/")
                        and not part_only(x, b.anchors) for x in b.anchors):
        # (A point that names a setting of its own cites its number:
        # "`user:{id}:permissions` TTL 3600초는 깁니다".)
        return set()
    out = set()
    for v in a.values:
        value, _, key = v.rpartition("@")
        if key and value[:1] not in "+-!=^~<>" and f"num:{value}" in b.anchors and (
                kind(value) in asked and f"code:{key}" in a.anchors):
            out.add(f"code:{key}")
    return out


# Words of a name that say how it is kept, not what: a unit, a switch's verb.
# (`RATE_LIMIT_PER_MIN` is a rate's limit: "per min" says in what.)
_UNIT_WORDS = frozenset({"seconds", "secs", "sec", "ms", "millis", "minutes", "mins",
                         "hours", "days", "bytes", "kb", "mb", "per", "enable", "enabled",
                         "disable", "disabled", "use", "flag"})
# ("allowed origins" says the whole of `cors_allowed_origins`, but what
# `allow_origins` means is its origins.)
_HOW_WORDS = _UNIT_WORDS | {"allow", "allowed"}


def _parts_meant(name: str, words: set[str]) -> bool:
    """A name whose words are each a concept the other side's words hold:
    `pool_size` in "풀 크기를 10으로", `cache_ttl` in "캐시 만료 시간", `workers`
    in "워커 프로세스는 두 개로" (one word of five letters or more)."""
    concepts = _name_concepts(name)
    return bool(concepts) and all(c in words for c in concepts)


@lru_cache(maxsize=4096)  # every pair of findings asks it of each name in code
def _name_concepts(name: str) -> tuple[str, ...]:
    """The concepts a name's words are (`~size` and …), or none when one is not."""
    # (A unit that ends the name says how, not what: `session_ttl_seconds`.)
    # (`RATE_LIMIT_PER_MIN`: "per min" says in what; `min_workers` is a minimum.)
    name = re.sub(r"[_.-]per[_.-](?:min|sec|hour)\b", "", name)
    parts = [p for p in re.split(r"[_.-]", name) if p not in _HOW_WORDS]
    # (One short word names too much, `ttl`, `key`; unless it is a kind of
    # what it means, `gzip` of compression.)
    if not parts or not all(p.isalpha() for p in parts) or (
            len(parts) < 2 and len(parts[0]) < 5
            and EN_CONCEPT.get(parts[0], parts[0]) == parts[0]):
        return ()
    concepts = [EN_CONCEPT.get(p) or EN_CONCEPT.get(word_stem(p)) for p in parts]
    return tuple("~" + c for c in concepts if c) if all(concepts) else ()


def _compound_said(name: str, words: set[str]) -> bool:
    """A name of two words run together said as its words: `crashreports`
    (`crashReports`) in "crash reporting", `idletimeout` in "idle timeout",
    and `idletimeoutms` there too."""
    if not name.isalpha():
        return False
    # (`idleTimeoutMs` ends in its unit, which is not said: "the idle timeout".)
    unitless = _unitless(name)
    return any(len(n) >= 8 and any(
        n[:i] in words and (n[i:] in words or word_stem(n[i:]) in words)
        for i in range(3, len(n) - 2)) for n in (name, unitless))


def _unitless(name: str) -> str:
    """A name run together without the unit word it ends in (`idletimeoutms`:
    `idletimeout`), "" when it ends in none. (The longest such word, so the
    answer does not hang on a set's order.)"""
    unit = max((u for u in _UNIT_WORDS if name.endswith(u) and len(u) < len(name)),
               key=len, default="")
    return name[:-len(unit)] if unit else ""


def name_words(name: str) -> list[str]:
    """A name's words: `cache_ttl` is `cache` and `ttl`; a camelCase name,
    lowercased as anchors keep it (`idletimeoutms`), is split where two words
    the vocabulary knows meet, its unit dropped (`idle`, `timeout`)."""
    if "_" in name or not name.isalpha() or len(name) < 8:
        return name.split("_")
    unitless = _unitless(name) or name
    for i in range(3, len(unitless) - 2):
        if unitless[:i] in EN_CONCEPT and unitless[i:] in EN_CONCEPT:
            return [unitless[:i], unitless[i:]]
    return [name]


def _tail_said(name: str, words: set[str]) -> bool:
    parts = name.split("_")
    if len(parts) < 3 or not all(p.isalpha() for p in parts):
        return False
    # (A unit that ends the name is not said: `replay_tolerance_seconds` is
    # "the replay tolerance".)
    said = [p for p in parts if p not in _UNIT_WORDS]
    return len(said) >= 2 and all(len(p) >= 3 and word_stem(p) in words for p in said[-2:])


def names_setting(anchor: str) -> bool:
    """A name in code, or a dotted one that is no file (`limits.memory`); not
    a number in code (`0154`, a migration's: two requests about it may be
    about two tables it touches)."""
    kind, _, name = anchor.partition(":")
    return (kind == "code" and not name.isdigit()) or (kind == "path" and not is_file(name))


def names_of(finding: Finding, setting: str) -> bool:
    """The finding names the setting: as one name, or word by word
    (`maxmemory-policy noeviction` names `maxmemory-policy`)."""
    if f"code:{setting}" in finding.anchors:
        return True
    words = re.findall(r"[a-z_][a-z0-9_]+", setting)
    if words and all(f"code:{word}" in finding.anchors for word in words):
        return True
    # ("idle timeout" in prose names `session_idle_timeout`, as `named_in_words` reads it.)
    # ("기본 로케일은 한국어로" names `default_locale` by its parts' meaning,
    # whatever else it names in code.)
    return _parts_meant(setting, _words(finding)) or (
        not any(x.startswith("code:") for x in finding.anchors)
        and _tail_said(setting, set(finding.terms)))


def _words(finding: Finding) -> set[str]:
    """The words and concepts a finding says, and `~limit` when it asks a bound
    in words: "재시도는 두 번이면 충분합니다" (at most two) says the limit
    `RETRY_LIMIT` is, as "재시도 한도" would."""
    words = set(finding.terms)
    if any(v[:2] in ("<=", ">=") and v.endswith("@") for v in finding.values):
        words.add("~limit")
    # ("엑셀(xlsx)로 바꿔야" says what `EXPORT_FORMAT` holds, as "형식" would.)
    if any(v[:-1] in FILE_FORMATS for v in finding.values if v.endswith("@")):
        words.add("~format")
    return words


def part_only(anchor: str, anchors: list[str]) -> bool:
    """`code:plans` beside `code:/pricing/plans`: a word of a longer name, not a
    name of its own. Two findings that share only such words (`/pricing/plans`
    and `pricing-plans`) name two things."""
    word = anchor.split(":", 1)[1]
    return any(word != other.split(":", 1)[1] and word in other.split(":", 1)[1]
               for other in anchors if other.startswith("code:"))
