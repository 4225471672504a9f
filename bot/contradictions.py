"""Contradictions between reviewers: a new finding that reverses another
author's (the same anchor, the opposite request or another value). Pure. (An
owner turn saying two findings cannot both be met is read in
`bot.owner_turn.declared_conflict`.)
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import TypedDict

from bot.demands import (
    BACK,
    accepted,
    asked_verbs,
    direction,
    opposed,
    prohibited,
    unopposed,
)
from bot.finding import (
    REVERSIBLE,
    Finding,
    FindingStatus,
    RoundOutcome,
    agreed,
    is_made,
)
from bot.places import request_places, same_place
from bot.quantities import SCALE, compatible, in_unit_of, kind
from bot.reversals_in_words import in_words, may_clash, quantity_in_words
from bot.setting_names import (
    cited,
    named_in_words,
    names_of,
    names_setting,
    part_only,
    two_timeouts,
)
from bot.stances import LITERAL_WORDS
from bot.topics import Topic
from bot.values import NAME_UNITS, setting_values
from bot.wording import LIBRARY_KINDS


def reversals(findings: list[Finding], out: RoundOutcome, round_no: int,
              reported: frozenset[str] = frozenset()) -> None:
    """A new finding that reverses another: the same anchor, the opposite request
    or another value. Another author's open or fixed finding makes a
    contradiction (a fixed one becomes contested); the author's own is withdrawn."""
    new = {label for label in out.raised}
    for finding in [f for f in findings if f.label in new]:
        for other in findings:
            if other.label == finding.label or other.status not in REVERSIBLE:
                continue
            if other.label in new and int(other.label[1:]) > int(finding.label[1:]):
                continue  # each pair of this turn's findings once
            # (The author's own pairs are sorted out before `reverses`, the
            # costly part: most of a long turn's pairs are the author's own.)
            if other.author == finding.author and finding.direction * other.direction != -1:
                # Its own finding with another value or wording: a second
                # request beside the first (the ledger already made it a point
                # of its own), not a reversal.
                continue
            if other.author == finding.author and out.events.get(other.label, "").startswith(
                "repeated"
            ):
                continue  # it said the earlier point again in this turn: no reversal of it
            if not reverses(finding, other, reported):
                continue
            if other.author == finding.author:
                # The opposite of its own request ("raise" after "lower"):
                # the author reversed itself, so the earlier point is withdrawn.
                other.status, other.stall = FindingStatus.WITHDRAWN, 0
                other.history.append(
                    f"R{round_no}: withdrawn (reversed by its author in {finding.label})"
                )
                out.withdrawn.append(other.label)
                continue
            if other.status is FindingStatus.FIXED:
                other.status = FindingStatus.CONTESTED
                other.history.append(f"R{round_no}: contested by {finding.label}")
            out.contradictions.append((other.label, finding.label))

class Demands(TypedDict):
    """What a point asks for, as a finding keeps it (see `Finding`)."""

    direction: int
    values: list[str]
    prohibits: list[str]
    asks: list[str]
    places: list[str]
    opposes: list[str]
    agrees: list[str]


def demands_of(text: str, others: set[str]) -> Demands:
    """What the point `text` asks for; `others` are the other reviewers it may
    say it is against or not in conflict with. (Fresh lists each time: a
    finding keeps and may change them.)"""
    way, values, prohibits, asks, places, opposes, agrees = _demands(text, frozenset(others))
    return Demands(direction=way, values=list(values), prohibits=list(prohibits),
                   asks=list(asks), places=list(places), opposes=list(opposes),
                   agrees=list(agrees))


@lru_cache(maxsize=4096)  # a point is read as a finding and as a probe of the ledger
def _demands(text: str, others: frozenset[str]) -> tuple[
        int, tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...],
        tuple[str, ...], tuple[str, ...]]:
    return (direction(text), tuple(sorted(setting_values(text))),
            tuple(sorted(prohibited(text))), tuple(sorted(asked_verbs(text))),
            tuple(sorted(request_places(text))),
            tuple(sorted(opposed(text, set(others)))),
            tuple(sorted(unopposed(text, set(others)) | accepted(text))))


def probe(t: Topic, text: str, author: str, others: set[str]) -> Finding:
    """A clause dressed as a finding, to compare with the ledger's."""
    return Finding(label="F0", author=author, summary="", anchors=sorted(t.anchors),
                   terms=sorted(t.terms), **demands_of(text, others))

def reverses(a: Finding, b: Finding, reported: frozenset[str] = frozenset()) -> bool:
    """Does `a` reverse `b`? `reported`: findings the owner's turn before
    reported a fix for (the change is made, whoever has confirmed it)."""
    # (A unit, `ms` of `session.timeout.ms` and of `max.poll.interval.ms`, is
    # the last word of two names, not one setting, unless both give it a value:
    # `retention.ms` 86400000 and 604800000.)
    keys = _value_keys(a) & _value_keys(b)
    shared = {x for x in set(a.anchors) & set(b.anchors) if x.startswith(("code:", "path:"))
              if (not (part_only(x, a.anchors) and part_only(x, b.anchors)) or x[5:] in keys)
              and (x[5:] not in SCALE or x[5:] in keys)}
    # "pin `faiss-cpu==1.8.0`" and "pin faiss-cpu to version 1.7.4": both give
    # a value to one named thing, however each wrote its name.
    # (A compound name only: `days` of `Expiration.Days` is a word many settings end with.)
    gone = _gone_keys(a) & _value_keys(b) | _gone_keys(b) & _value_keys(a)
    shared |= {"code:" + k for k in keys | gone if re.search(r"\w[-_]\w", k) and k not in SCALE}
    # "The schedule has to go back to …" names the other's `schedule` in words.
    said = named_in_words(a, b) | named_in_words(b, a)
    named_by_words = bool(said)  # one names the other's setting in words
    shared |= said
    # ("30 s already drops chunks; give it at least a minute" beside
    # `upstream.timeout: 30s`: the number names the setting.)
    by_number = cited(a, b) | cited(b, a)
    shared |= by_number | _one_name_two_units(a, b)
    if not shared and _destinations(a) and _destinations(b):
        # "S3 (`s3://acme-reports/monthly/`)에 올리고" against "`/mnt/secure-reports`
        # 에만 저장하도록": two places asked for what both name (`reports` of
        # `/app/reports` and of `/mnt/secure-reports`), a word of each name.
        shared = {x for x in set(a.anchors) & set(b.anchors) if x.startswith("code:")}
    shared |= _removed(a, b) | _removed(b, a)
    if two_timeouts(a, b):
        return False
    if not shared:
        # "`json.dumps` 대신 `orjson.dumps`를 쓰고" against "json 모듈을 계속
        # 사용해 주세요": one name asked in and out, however each names the
        # code around it (unless each asks it of another place).
        # (A way of working, `+@~sync`, needs a shared anchor: two steps of one
        # flow may each be asked done its own way.)
        return in_words(a, b, reported) or (_named_both_ways(a, b) and may_clash(a, b))
    if not any(names_setting(x) for x in shared) and any(
            x.startswith("code:") for x in a.anchors) and any(
            x.startswith("code:") for x in b.anchors):
        return False  # one file, two settings or functions: two anchors, not one
    if agreed(a, b):
        return False  # it said they do not conflict
    if b.author in a.opposes or a.author in b.opposes:
        return True
    if any(x in b.anchors for x in a.opposes) or any(x in a.anchors for x in b.opposes):
        return True  # "I disagree with keying on `user_id`": what the other asks of it
    if a.places and b.places and not same_place(a.places, b.places) and not (
            _destinations(a) and _destinations(b)) and not _route_in_file(a, b):
        # `CELERY_CONCURRENCY` in `staging.env` and in `prod.env`, `gzip` for
        # `/static/` and for `/api/`: one name, two places, both can be met.
        # (Not two places asked as where the thing goes: those are its values.)
        return False
    if a.direction * b.direction == -1:
        return True
    # (Named in code by one side only: `location` in both is a place, not the switch.)
    said = {x for x in said if (x in a.anchors) != (x in b.anchors)}
    if said and {_switch_way(a, said), _switch_way(b, said)} == {1, -1}:
        # "prepared statement 캐시는 꺼서는 안 됩니다" against "`prepared
        # statement` 캐시를 꺼야", "switch response caching off" against "Turn
        # on `ENABLE_RESPONSE_CACHE`": one switch, named in code by one and in
        # words by the other, asked on and off. (Two switches named in code in
        # one place are no such pair: `autoindex` off, `gzip on;`.)
        return True
    for one, other in ((a, b), (b, a)):
        # "Please revert that part", "원복해 주십시오": undoing the change another
        # reviewer's fixed finding asked for, on its anchor; "방금 추가한 인덱스는
        #빼 주십시오": removing a name it asked for.
        if is_made(other, reported) and (_REVERT.intersection(one.asks) or (
                other.direction != -1 and _removed(one, other))):
            return True
    for one, other in ((a, b), (b, a)):
        # "미리 만들지 말고" against a request that holds "만들어 두어야".
        if any(v in other.asks and v not in other.prohibits for v in one.prohibits):
            return True
        # "Please don't remove or disable it" against "`actions/cache` has to
        # come out": the very name one asks to keep, the other asks gone.
        if _REMOVAL.intersection(one.prohibits) and _removed(other, one):
            return True
    # Another value for the same setting: "30s" against "1s", "365" against "30".
    if any(names_setting(x) for x in shared) and _other_value(a, b):
        return True
    # ("Cache entries should live for an hour at most" against `cache.ttl:
    # 86400`: the words name `cache`, and the values are read as in words.)
    return (named_by_words or bool(by_number)) and quantity_in_words(
        a, b, linked=True, cited=bool(by_number))

_REMOVAL = frozenset({"remove", "drop", "delete", "disable",
                      "제거", "삭제", "빼", "없애", "비활성화"})
# (Not "roll out"; "I have to object to the new cache": against a change made.)
_REVERT = frozenset({"revert", "undo", "rollback", "object", "되돌", "원복", "롤백", BACK})


def _route_in_file(a: Finding, b: Finding) -> bool:
    """One asks it of a route (`/auth/login`), the other in a file that holds
    the route's settings (`config/ratelimit.yaml`), having named that route:
    one place."""
    for one, other in ((a, b), (b, a)):
        routes = {x for x in other.places if x.startswith("code:/")}
        if routes and all(p.startswith("path:") for p in one.places) and routes <= set(one.anchors):
            return True
    return False


def _destinations(finding: Finding) -> bool:
    """It asks a place for something to move to (`=at:…`)."""
    return any(v.startswith("=at:") for v in finding.values)


def _value_keys(finding: Finding) -> set[str]:
    """The settings it gives a value to ("`Profile.name`을 `displayName`으로"
    gives `name` one, "`retention.ms` to 86400000" `ms`): a name it asks a
    value for is a name of its own, even inside a longer one (`displayname`)."""
    return {v.rsplit("@", 1)[1] for v in finding.values
            if "@" in v and v[:1] not in "+-!^~" and not v.endswith("@")}


def _switch_way(finding: Finding, said: set[str]) -> int:
    """+1 when it asks a switch on (in words, or one of `said` by its name),
    -1 when off, 0 for neither or both."""
    names = {x[5:] for x in said}
    on = "+@~switch" in finding.values or any(
        f"+@{n}" in finding.values or f"=true@{n}" in finding.values for n in names)
    off = "-@~switch" in finding.values or any(
        f"-@{n}" in finding.values or f"=false@{n}" in finding.values for n in names)
    return 0 if on == off else 1 if on else -1


def _gone_keys(finding: Finding) -> set[str]:
    """The settings it asks a value away from ("not `DEBUG`" for `log_level`)."""
    return {v.rsplit("@", 1)[1] for v in finding.values
            if v.startswith("!") and "@" in v and not v.endswith("@")}


def _switched_both_ways(named: dict[str, set[str]], said: dict[str, set[str]]) -> bool:
    """A switch asked on (or off) by its name and the other way in words only,
    about the anchor the two share: "Set `telemetry.crashReports.enabled` to
    `true`" against "Crash reporting must be off by default"."""
    by_name = {v for k, vs in named.items() if k for v in vs if v in _SWITCHES}
    in_words = {v for v in said.get("", set()) if v in _SWITCHES}
    return bool(by_name and in_words and by_name.isdisjoint(in_words))


_SWITCHES = frozenset({"=true", "=false"})


def _removed(one: Finding, other: Finding) -> set[str]:
    """`other`'s names in code that `one` asks to be rid of (and `other` did
    not): "remove `X`", or `X` under a longer name that ends with it ("drop
    `0142_orders_created_at_idx`", the migration of `orders_created_at_idx`)."""
    gone = {v[2:] for v in one.values if v.startswith("-@") and v not in other.values}
    if not gone:
        return set()  # (most findings ask nothing gone: this runs for every pair)
    return {x for x in other.anchors if x.startswith("code:") and any(
        name == x[5:] or (len(x[5:]) >= 8 and name.endswith("_" + x[5:])) for name in gone)}


def _other_value(a: Finding, b: Finding) -> bool:
    """Both ask a value for one setting, and not the same one. Values given to
    named settings are compared setting by setting; a value given to a setting
    the other finding never names is about something else."""
    for one, other in ((a, b), (b, a)):
        # One asks to remove the very value the other asked to set.
        gone = {v[1:] for v in one.values if v.startswith("!")}
        given = {v for v in other.values if "@" in v and not v.endswith("@")}
        if gone & given:
            return True
        # ("`CORS_ALLOWED_ORIGINS` must not default to `*`" against "leave the
        # allowed origins wide open": refused for the setting the other names
        # in words, and asked there.)
        if any(g.rsplit("@", 1)[0] + "@" in other.values and names_of(other, g.rsplit("@", 1)[1])
               for g in gone if not g.endswith("@")):
            return True
        # ("와일드카드 … 안 됩니다. 명시적으로 나열한 목록만": not `*`, for the
        # setting the point names, which the other gives `*`.)
        # ("Replace `'*'` with an allowlist" on `/v2/embed` against "`origin`
        # has to stay `'*'` on these routes": the same place.)
        here = bool(one.places and other.places and same_place(one.places, other.places))
        if any(g.endswith("@") and v.startswith(g) and (
                f"code:{v.rsplit('@', 1)[1]}" in one.anchors or here)
               for g in gone for v in given):
            return True
        # ("`PARTNER_ORIGINS` 화이트리스트에 있는 origin만" against "`/api/v2/export`는
        # `Access-Control-Allow-Origin: *`로 열어 두어야": in one place, the
        # wildcard refused and asked, whatever each calls the setting.)
        if here and any(g.startswith("=*@") and v.startswith("=*@") for g in gone for v in given):
            return True
    for one, other in ((a, b), (b, a)):
        # "`collapse_key`는 설정하지 말고" against "`collapse_key`를
        # `order_{order_id}`로 설정해": not set at all, against a value for it.
        gone = {v[2:] for v in one.values if v.startswith("-@")} - _value_keys(one)
        # ("Turn `X` off" and "`X=false`" ask one thing of a switch.)
        if gone and any(v[:1] not in "+-!^~" and "@" in v and not v.endswith("@")
                        and v.rsplit("@", 1)[1] in gone
                        and v.rsplit("@", 1)[0] != _SWITCHED["-"] for v in other.values):
            return True
    # One asks for a name the other asks to be rid of ("add `--frozen-lockfile`",
    # retries for and against), or keeps as it is ("`created_at`은 지금처럼
    # 유지") what the other asks to change ("`created_at`을 정수로 바꿔").
    if _asked_both_ways(a, b, "+", "-") or _asked_both_ways(a, b, "^", "~"):
        return True
    if _cache_conflict(a, b) or _two_libraries(a, b) or _one_name_two_units(a, b):
        return True
    va = _by_setting([v for v in a.values if not v.startswith(("!", "+", "-", "^", "~"))])
    vb = _by_setting([v for v in b.values if not v.startswith(("!", "+", "-", "^", "~"))])
    if "cache-control" in va and "cache-control" in vb:
        # Directives, not one value: "no-store" and "private" hold together.
        del va["cache-control"], vb["cache-control"]
    if not va or not vb:
        return False
    # One setting, named in full or by its last word (`SESSION_COOKIE_SAMESITE`
    # and `SameSite=None`).
    common = [(x, y) for x in va for y in vb if x and y and (
        x == y or (min(len(x), len(y)) >= 4 and (x.endswith("_" + y) or y.endswith("_" + x))))]
    if common:
        return any(not compatible(va[x], vb[y]) for x, y in common)
    if _switched_both_ways(va, vb) or _switched_both_ways(vb, va):
        return True
    for mine, other in ((va, b), (vb, a)):
        named = mine.keys() - {""}
        if named and not any(names_of(other, k) for k in named):
            return False  # "`LOGIN_LIMIT` to 5" and "`SEARCH_LIMIT` to 120"
    mine_all = {v for vs in va.values() for v in vs}
    theirs_all = {v for vs in vb.values() for v in vs}
    if bool(va.keys() - {""}) != bool(vb.keys() - {""}):
        # "`CACHE_TTL`을 300으로" against "캐시 유지 시간은 30초 이하로": the named
        # setting's bare number is in the unit the words give it.
        if va.keys() - {""}:
            mine_all = in_unit_of(mine_all, theirs_all)
        else:
            theirs_all = in_unit_of(theirs_all, mine_all)
    kinds_a, kinds_b = {kind(v) for v in mine_all}, {kind(v) for v in theirs_all}
    if not kinds_a & kinds_b and ("number" not in kinds_a | kinds_b or any(
            v.startswith(("<=", ">=")) for v in mine_all | theirs_all)):
        # "300초" and "5MB": a time and a size are two settings (a bare 30 may
        # be either, but not a bound: "합계 30 이하" is no time).
        return False
    return not compatible(mine_all, theirs_all)


_SWITCHED = {"+": "=true", "-": "=false"}


def _named_both_ways(a: Finding, b: Finding) -> bool:
    """A name one finding asks there (`+@orjson`) and the other gone, in code
    or in words ("json 모듈"); not a way of working (`+@~sync`)."""
    def named(f: Finding, sign: str) -> set[str]:
        return {v[2:] for v in f.values if v.startswith(sign + "@") and v[2:3] != "~"}
    return bool(named(a, "+") & named(b, "-") or named(a, "-") & named(b, "+"))


def _asked_both_ways(a: Finding, b: Finding, one: str, other: str) -> bool:
    """A name one finding asks `one` of (`+@x`) and the other `other` of (`-@x`)."""
    def names(f: Finding, sign: str) -> set[str]:
        # (A switch asked in words, `~switch`, names no switch: "`autoindex`
        # 비활성화" and "`gzip on;` 켜 주십시오" in one `location` are two.)
        named = {v[2:] for v in f.values if v.startswith(sign + "@")} - {"~switch"}
        if f"{sign}@~switch" in f.values:
            # "`DEBUG_TOOLBAR = True` … Turn it off": the switch is the one
            # name its point gives (a literal, `True`, names none).
            only = {x[5:] for x in f.anchors
                    if x.startswith("code:") and x[5:] not in LITERAL_WORDS}
            if len(only) == 1:
                named |= only
        if sign in _SWITCHED:
            # "`LOG_REQUEST_BODIES=false`" asks the switch off as "turn it
            # off" does; "turn it back on" is then its opposite.
            named |= {v.rsplit("@", 1)[1] for v in f.values
                      if v.rsplit("@", 1)[0] == _SWITCHED[sign] and not v.endswith("@")}
        return named
    return bool(names(a, one) & names(b, other) or names(a, other) & names(b, one))


def _two_libraries(a: Finding, b: Finding) -> bool:
    """"HTTP 클라이언트를 `httpx.AsyncClient`로 교체해" against "`aiohttp`로 가야
    합니다": each asks in a library of one kind, and not the other's."""
    def asked(f: Finding) -> set[str]:
        return {v[2:] for v in f.values if v.startswith("+@")}
    mine, theirs = asked(a), asked(b)
    return any(mine & kind and theirs & kind and not mine & theirs & kind
               for kind in LIBRARY_KINDS)


# Words of naming: both points must speak of the name.
_NAMES = frozenset({"이름", "명명", "name", "renam", "naming"})


def _one_name_two_units(a: Finding, b: Finding) -> set[str]:
    """"`checkout_latency_seconds`로 바꾸고" against "이 지표 이름은
    `checkout_latency_ms`로": two names asked of one thing, each with its unit
    (the same name before the unit, or one the name the other renames:
    `search_latency` → `search_request_duration_seconds` against
    `search_latency_ms`)."""
    def unitless(name: str) -> str:
        parts = name.split("_")
        return "_".join(parts[:-1]) if len(parts) >= 2 and parts[-1] in NAME_UNITS else ""
    out: set[str] = set()
    if not (_NAMES.intersection(a.terms) and _NAMES.intersection(b.terms)):
        return out  # ("keep `job_duration_ms` as well": two metrics, none renamed)
    for x in (v[2:] for v in a.values if v.startswith("+@")):
        for y in (v[2:] for v in b.values if v.startswith("+@")):
            bx, by = unitless(x), unitless(y)
            if x != y and bx and by and (
                    (bx == by and "_" in bx) or f"code:{by}" in a.anchors
                    or f"code:{bx}" in b.anchors):
                out |= {"code:" + x, "code:" + y}
    return out


def _cache_directives(finding: Finding) -> set[str]:
    """The `Cache-Control` directives a finding asks for: "no-store",
    "private", "max-age" (above zero)..."""
    out: set[str] = set()
    for value in finding.values:
        literal, _, key = value.rpartition("@")
        if key == "cache-control" and literal.startswith("="):
            out.update(d.split("=", 1)[0].strip() for d in literal[1:].split(",")
                       if not d.strip().endswith("=0"))
        elif key in ("max-age", "s-maxage") and literal[:1].isdigit() and literal.strip("0"):
            out.add(key)
    return out


# Directives no response can carry together: one forbids what the other asks.
# ("immutable" says never check back; "no-cache", check back every time.)
_CACHE_EXCLUSIVE = (({"no-store"}, {"max-age", "s-maxage", "public", "immutable"}),
                    ({"private"}, {"public", "s-maxage"}), ({"no-cache"}, {"immutable"}))


def _cache_conflict(a: Finding, b: Finding) -> bool:
    """"`Cache-Control` must be `no-store`" against "raise it to
    `max-age=3600`": two directives of one header that cannot both hold."""
    da, db = _cache_directives(a), _cache_directives(b)
    # ("Please remove the `no-store` from that route" against "Add
    # `Cache-Control: private, no-store`": a directive asked in, asked out.)
    if any(f"-@{d}" in a.values for d in db) or any(f"-@{d}" in b.values for d in da):
        return True
    return any((x & da and y & db) or (x & db and y & da) for x, y in _CACHE_EXCLUSIVE)


def _by_setting(stored: list[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for item in stored:
        value, _, key = item.rpartition("@") if "@" in item else (item, "", "")
        out.setdefault(key, set()).add(value)
    return out
