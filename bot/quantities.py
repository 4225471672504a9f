"""Comparing the values two requests give one setting: the same value, or a
value inside the other's bound ("240초" meets "600초 이하"), with units of one
kind (times, sizes, shares, counts) brought to one scale. Pure.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

# Each unit as a multiple of its kind's base (seconds, bytes), to compare bounds.
SCALE = {"ms": 0.001, "s": 1, "초": 1, "m": 60, "min": 60, "분": 60, "h": 3600, "시간": 3600,
          "d": 86400, "일": 86400, "k": 1e3, "kb": 1e3, "mb": 1e6, "gb": 1e9,
          "ki": 2**10, "kib": 2**10, "mi": 2**20, "mib": 2**20, "gi": 2**30, "gib": 2**30}


def compatible(mine: set[str], theirs: set[str]) -> bool:
    """Some value of one meets some value of the other: the same value, or a
    value inside the other's bound ("240초" meets "600초 이하")."""
    return any(_meets(x, y) for x in mine for y in theirs)


def _meets(x: str, y: str) -> bool:
    if x == y:
        return True
    if x.endswith(VERSION) or y.endswith(VERSION):
        return _versions_meet(x, y)
    bx, nx, ux = _parse(x)
    by, ny, uy = _parse(y)
    if nx is None or ny is None:
        # (An address with its port and one without: "127.0.0.1:9100" meets
        # "loopback only", asked in words with no port.)
        hx, hy = _ADDRESS.fullmatch(x), _ADDRESS.fullmatch(y)
        if hx and hy and not (hx.group(2) and hy.group(2)):
            return hx.group(1) == hy.group(1)
        return False  # two literals, not the same
    if kind(ux) != kind(uy) or (ux not in SCALE) != (uy not in SCALE):
        return False
    if ux in PER_SECONDS:
        # ("60/minute" and "1/second", "0.7/minute" and "42/hour": one rate.
        # Exact fractions, so that one rate written two ways is one number.)
        return _bounds_meet(bx, Fraction(repr(nx)) / PER_SECONDS[ux],
                            by, Fraction(repr(ny)) / PER_SECONDS[uy])
    # (One value written twice: "30s" and "30초", "3000원" and "3000 won".)
    return _bounds_meet(bx, nx * SCALE.get(ux, 1), by, ny * SCALE.get(uy, 1))


def _bounds_meet(bx: str, x: Any, by: str, y: Any) -> bool:
    """Two values, each exact ("") or a bound ("<=", ">="), some one value
    meets: numbers, or versions as tuples."""
    if not (bx or by):
        return bool(x == y)
    if bx and by:
        # Two bounds meet unless one's floor is above the other's ceiling
        # ("at most 600" and "at most 300" agree; "at least 400", "at most 365" do not).
        if bx == by:
            return True
        low, high = (x, y) if bx == ">=" else (y, x)
        return bool(low <= high)
    bound, limit, value = (bx, x, y) if bx else (by, y, x)
    return bool(value <= limit if bound == "<=" else value >= limit)


# A package version, "2.32.0" asked as `>=2.32.0ver` (at least), `2.31.0ver` (exactly).
VERSION = "ver"


_ADDRESS = re.compile(r"=(\d{1,3}(?:\.\d{1,3}){3})(:\d+)?")


def _versions_meet(x: str, y: str) -> bool:
    """Two version requests one release can meet: "`==2.31.0`" and ">= 2.32.0" cannot."""
    if not (x.endswith(VERSION) and y.endswith(VERSION)):
        return False  # a version and a number: two settings' worth, never one
    (bx, vx), (by, vy) = _version(x), _version(y)
    return _bounds_meet(bx, vx, by, vy)


def _version(value: str) -> tuple[str, tuple[int, ...]]:
    bound = value[:2] if value.startswith(("<=", ">=")) else ""
    digits = value[len(bound):].removesuffix(VERSION)
    return bound, tuple(int(d) for d in digits.split(".") if d.isdigit())


def _parse(value: str) -> tuple[str, float | None, str]:
    """(bound, number, unit) of a stored value: "<=600초" is ("<=", 600.0, "초")."""
    bound = value[:2] if value.startswith(("<=", ">=")) else ""
    match = re.fullmatch(r"([\d.]+)\s*(\S*)", value[len(bound):])
    if match is None:
        return bound, None, ""
    try:
        return bound, float(match.group(1)), match.group(2).lower()
    except ValueError:
        return bound, None, ""


# A rate's time ("/minute", as values write "5 per minute") in seconds.
PER_SECONDS = {"/second": 1, "/minute": 60, "/hour": 3600, "/day": 86400}

_UNIT_KINDS = {
    "time": ("ms", "s", "m", "h", "d", "min", "초", "분", "시간", "일"),
    "size": ("k", "kb", "mb", "gb", "ki", "mi", "gi", "kib", "mib", "gib"),
    "share": ("%",),
    "rate": tuple(PER_SECONDS),
    "count": ("개", "건", "장", "매", "명"),
    # Money: one currency's words (no rates between currencies here).
    "krw": ("원", "won", "krw"),
    "usd": ("달러", "usd"),
    "version": (VERSION,),
}


def in_unit_of(bare: set[str], worded: set[str]) -> set[str]:
    """`bare`'s plain numbers written in the one unit of `worded` (if it has
    one): `MAX_TICKETS`'s 2 beside "8장 이상" is 2장; a time in code counts
    seconds (`CACHE_TTL`'s 300 beside "30초 이하" or "10분 이하" is 300초)."""
    units = {re.sub(r"^(?:[<>]=)?[\d.]+", "", v) for v in worded}
    if not units or "" in units or not any(kind(v) == "number" for v in bare):
        return bare
    # (Several units of time, "1분" and "60초": a time still, in seconds.)
    times = all(kind("1" + u) == "time" for u in units)
    if len(units) != 1 and not times:
        return bare
    unit = "s" if times else units.pop()
    # (Only the plain numbers: "61%" beside them is a share, whatever it was given to.)
    return {v + unit if kind(v) == "number" else v for v in bare}


def kind(value: str) -> str:
    """What a value measures: a literal, a plain number, a time, a size…"""
    if value.startswith("=at:"):
        return "place"  # where code lives: compared with places only
    if value.startswith("="):
        return "literal"
    unit = re.sub(r"^(?:[<>]=)?[\d.]+", "", value).strip().lower()
    return next((kind for kind, units in _UNIT_KINDS.items() if unit in units), unit or "number")
