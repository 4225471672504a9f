"""Reversals read in words only: two points that name no setting in common
but ask one thing two ways (a quantity with bounds no value meets, retries for
and against, a fixed change asked back, an author said to be wrong by name,
something asked added and asked kept out). Each needs the points to share
words besides the concepts, and places that may be one. Pure; called by
`bot.contradictions.reverses` when the points share no name in code.
"""

from __future__ import annotations

import re

from bot.demands import ADD, BACK, JUST, TAKE_OUT
from bot.finding import Finding, agreed, is_made
from bot.places import same_place
from bot.quantities import compatible, in_unit_of, kind
from bot.setting_names import name_words
from bot.topics import word_stem
from bot.wording import EN_CONCEPT


def in_words(a: Finding, b: Finding, reported: frozenset[str] = frozenset()) -> bool:
    """Does one point reverse the other, read in words alone? `reported`:
    findings a fix was just reported for."""
    return (quantity_in_words(a, b) or _retry_in_words(a, b)
            or _back_in_words(a, b, reported) or _opposed_in_words(a, b)
            or _refused_in_words(a, b) or _taken_out_in_words(a, b, reported)
            or _just_undone(a, b, reported) or _removal_refused(a, b, reported))


# Verbs of removing, as a prohibition holds them ("지우지 말고", "삭제하지 마세요",
# "don't delete").
_REMOVE_VERBS = frozenset({"지우", "삭제", "제거", "없애", "빼", "delete", "remove", "drop"})


def _removal_refused(a: Finding, b: Finding, reported: frozenset[str]) -> bool:
    """"회원 행은 지우지 말고 … 되돌려 주세요" after "회원 행 자체를 물리
    삭제해야 합니다" was done: the removal the other asked for, refused in any
    verb of removing and asked undone, about what both name (two words in
    common: "파일" alone may be two files)."""
    if not may_clash(a, b):
        return False
    for one, other in ((a, b), (b, a)):
        if (_REMOVE_VERBS.intersection(one.prohibits) and _UNDO.intersection(one.asks)
                and TAKE_OUT in other.asks and is_made(other, reported)
                and _word_count(_shared_words(one, other)) >= 2):
            return True
    return False


def _just_undone(a: Finding, b: Finding, reported: frozenset[str]) -> bool:
    """"방금 변경은 되돌려야 합니다" after the owner's turn reported one fix, for
    another reviewer's finding: that change, asked undone."""
    if len(reported) != 1 or a.author == b.author or not may_clash(a, b):
        return False
    for one, other in ((a, b), (b, a)):
        if (JUST in one.asks and (BACK in one.asks or _UNDO.intersection(one.asks))
                and other.label in reported):
            return True
    return False


def _taken_out_in_words(a: Finding, b: Finding, reported: frozenset[str]) -> bool:
    """One asks taken out what the other, made, asked put in, naming it with
    the same words: "테스트 병렬 실행은 빼 주십시오" after "`pytest -n auto`로
    병렬 실행을 추가해 주십시오" was done (the thing asked for in both, and
    another word of the points in common)."""
    if not may_clash(a, b):
        return False
    for one, other in ((a, b), (b, a)):
        if TAKE_OUT not in one.asks or ADD not in other.asks or not is_made(other, reported):
            continue
        things = (set(one.asks) & set(other.asks)) - {ADD, TAKE_OUT, BACK}
        said = _name_parts_said(one, other)
        words = _word_count(_shared_words(one, other) | said)
        # (English keeps the verbs alone: "Add a \"Remember my email\" checkbox"
        # against "The new `remember_email` cookie … remove the checkbox":
        # three words in common, one of them a part of a name in code that the
        # other says in words.)
        if (things and words >= 2) or (said and words >= 3):
            return True
    return False


def unnamed_quantities(finding: Finding) -> set[str]:
    """Its values given to no named setting ("<=3회@"), without literals."""
    return {v[:-1] for v in finding.values if v.endswith("@") and v[:1] not in "+-!="}


def _named_quantities(finding: Finding) -> set[str]:
    """Its values given to one setting named in code, when it names one."""
    by_key: dict[str, set[str]] = {}
    for v in finding.values:
        value, _, key = v.rpartition("@")
        if key and v[:1] not in "+-!=^~":
            by_key.setdefault(key, set()).add(value)
    return next(iter(by_key.values())) if len(by_key) == 1 else set()


def _back_in_words(a: Finding, b: Finding, reported: frozenset[str]) -> bool:
    """Neither names it in code, but one asks to put back what the other,
    fixed, got changed: "Please put the login limit back to 20 per minute"
    after "the login limit … should be 5 attempts per minute"; "최소 길이는
    원래대로 8자로" after "최소 길이는 … 12자여야". The points share two
    words besides the concepts, and the one asking back gives a number, or
    they share three ("Please bring back the type-DELETE step in the modal"
    after "Replace the typed confirmation with a … button")."""
    if agreed(a, b):
        return False
    for one, other in ((a, b), (b, a)):
        undo = bool(_UNDO.intersection(one.asks))
        if not is_made(other, reported) or (BACK not in one.asks and not undo):
            continue
        if not undo and not may_clash(a, b):
            continue  # (undoing a move names the other place: "nginx로 옮긴 것은 되돌려야")
        words = _word_count(_shared_words(one, other))
        # ("CORS 처리를 nginx로 옮긴 것은 되돌려야": asked undone in so many
        # words, two words of the change will do.)
        if words >= 3 or (words >= 2 and (
                undo or any(x.startswith("num:") for x in one.anchors) or unnamed_quantities(one))):
            return True
    return False


# Asking a change undone, in so many words.
# ("I have to object to the retention change": against a change made.)
_UNDO = frozenset({"revert", "undo", "object", "되돌", "원복", "롤백"})


def _opposed_in_words(a: Finding, b: Finding) -> bool:
    """One says it is against the other's author, and they share a word
    besides the concepts: "finance-bot이 말한 결번 없는 채번은 … 받아들일 수
    없습니다" against "번호에 결번이 없어야 합니다"."""
    if not (b.author in a.opposes or a.author in b.opposes) or not may_clash(a, b):
        return False
    return _word_count(_shared_words(a, b)) >= 1


def _refused_in_words(a: Finding, b: Finding) -> bool:
    """One asks something put in and the other not to put it in, in words
    only, about one thing: "고객 주소는 인보이스 PDF 에 넣지 말아" against
    "고객 주소가 없으니 추가해 주십시오" (three words in common besides the
    concepts and the polite endings)."""
    if not may_clash(a, b):
        return False
    for one, other in ((a, b), (b, a)):
        if ADD in one.prohibits and ADD in other.asks and ADD not in other.prohibits:
            if _word_count(_shared_words(one, other)) >= 3:
                return True
    return False


def _shared_words(a: Finding, b: Finding) -> set[str]:
    """The words two points share, without the concepts (`~limit`) and the
    pieces of a polite ending every Korean request holds ("주십시오")."""
    return {t for t in set(a.terms) & set(b.terms) if not t.startswith("~") and t not in _POLITE}


# The two-syllable pieces of the endings requests are written in.
_POLITE = frozenset(
    ending[i:i + 2]
    for ending in ("주십시오", "주세요", "합니다", "습니다", "드립니다", "바랍니다", "입니다",
                   "됩니다")
    for i in range(len(ending) - 1))


def _name_parts_said(a: Finding, b: Finding) -> set[str]:
    """The parts of one point's names in code (`remember_email`) that the
    other says in words ("Remember my email")."""
    out: set[str] = set()
    for one, other in ((a, b), (b, a)):
        words = set(other.terms)
        for anchor in one.anchors:
            if anchor.startswith("code:") and "_" in anchor:
                out.update(word_stem(part) for part in anchor[5:].split("_")
                           if len(part) >= 3 and word_stem(part) in words)
    return out


def _word_count(terms: set[str]) -> int:
    """About how many words the shared terms are: a Korean word is kept as
    the two-syllable pieces of it ("애플리케이션": 애플, 플리, 리케…), so a run of
    pieces that follow one another counts once."""
    korean = {t for t in terms if len(t) == 2 and "\uac00" <= t[0] <= "\ud7a3"}
    follows = {t for t in korean if any(u[1] == t[0] for u in korean if u != t)}
    return len(terms) - len(follows)


def may_clash(a: Finding, b: Finding) -> bool:
    """Neither said it does not conflict with the other, and their places
    (files, routes, environments) may be the same."""
    if agreed(a, b):
        return False
    return not (a.places and b.places and not same_place(a.places, b.places))


def quantity_in_words(a: Finding, b: Finding, linked: bool = False, cited: bool = False) -> bool:
    """Neither names the setting in code, but both ask one quantity, at least
    one as a bound, and no value meets both: "재시도는 세 번까지만" against
    "재전송 횟수를 8회 이상으로", "no more than 50 messages per second" against
    "at least 200 messages a second". The points must share a concept
    (`~retry`). `linked`: one side's words name the other's setting (its other
    names in code are about something else), so its values are that setting's;
    `cited`: by the number the other gives it, which is about as sure as a
    concept in common."""
    if not may_clash(a, b):
        return False
    names_a = {x for x in a.anchors if x.startswith("code:")}
    names_b = {x for x in b.anchors if x.startswith("code:")}
    if linked:
        own_a, own_b = bool(unnamed_quantities(a)), bool(unnamed_quantities(b))
        if own_a != own_b:  # the side that gives its values in words only
            names_a, names_b = (set(), names_b) if own_a else (names_a, set())
    clock = _one_clock(a, b)
    if names_a and names_b and not clock:
        # Each names its own thing in code (`PURGE_BATCH_SIZE`, `time.sleep(0.2)`)
        # and no name is shared: two quantities of two things.
        return False
    va, vb = unnamed_quantities(a), unnamed_quantities(b)
    # "`CATALOG_CACHE_TTL`을 3600초 이상으로" against "상품 캐시 만료 시간은
    # 30초로": one names the setting, the other says it in words only. (A
    # measured quantity then: "40 requests" against "10 connections" are two
    # counts, not one setting.)
    named = (not va and not names_b) or (not vb and not names_a)
    va = va or (_named_quantities(a) if not names_b else set())
    vb = vb or (_named_quantities(b) if not names_a else set())
    if not va or not vb:
        return False
    if not any(v.startswith(("<=", ">=")) for v in va | vb) and not (
            a.direction * b.direction == -1 and _word_count(_shared_words(a, b)) >= 3):
        # (Two exact values are one quantity asked two ways when one lowers it
        # and the other raises it, in many of the same words: "`/v1/login`을
        # 분당 10회로 낮춰" against "로그인 엔드포인트 한도는 분당 120회로 올려".)
        return False
    if a.direction * b.direction == -1 and _word_count(_shared_words(a, b)) >= 2:
        # "`MAX_TICKETS_PER_ORDER`를 2로 낮춰" against "주문 한도는 최소 8장으로
        # 올려", "IP당 분당 60으로 낮춰" against "IP당 분당 최소 300건 이상으로":
        # one lowers and the other raises, in the same words, a count one side
        # gives bare.
        va, vb = _counted(va), _counted(vb)
        named = False
    elif named and ((names_b and _concepts(names_b) & set(a.terms))
                    or (names_a and _concepts(names_a) & set(b.terms))):
        # "`retry_max=3`으로 낮춰" against "재시도는 적어도 다섯 번까지는": the
        # name says what the words count, so its bare number is in their unit.
        va, vb = (in_unit_of(va, vb), vb) if names_a else (va, in_unit_of(vb, va))
        named = False
    kinds = {kind(v) for v in va} & {kind(v) for v in vb}
    if named:
        kinds.discard("number")
    va, vb = {v for v in va if kind(v) in kinds}, {v for v in vb if kind(v) in kinds}
    if not va or not vb or compatible(va, vb):
        return False
    # (A name's words hold concepts too: `CATALOG_CACHE_TTL` is a cache's ttl.)
    # (Or one time of day, said in the same words.)
    return cited or clock or any(t.startswith("~") for t in (set(a.terms) | _concepts(names_a))
               & (set(b.terms) | _concepts(names_b)))


def _counted(values: set[str]) -> set[str]:
    """The values with a count's unit dropped ("8장", "3개" read as 8 and 3)."""
    return {re.sub(r"[^\d.]+$", "", v) if kind(v) == "count" else v for v in values}


def _one_clock(a: Finding, b: Finding) -> bool:
    """Both ask a time of day given to no name, in words they share: "ETL
    시작을 01:00으로" against "ETL 시작 시각은 04:00 이후로" (whatever else
    each names in code, `mart_sales_daily`, `VACUUM FULL`)."""
    # (Asked of every pair of findings: the cheap tests first.)
    return (any(v.endswith("시각") for v in unnamed_quantities(a))
            and any(v.endswith("시각") for v in unnamed_quantities(b))
            and _word_count(_shared_words(a, b)) >= 2)


def _concepts(names: set[str]) -> set[str]:
    return {"~" + EN_CONCEPT[part] for name in names for part in name_words(name[5:])
            if part in EN_CONCEPT}


def _retry_in_words(a: Finding, b: Finding) -> bool:
    """Neither names it in code, but one asks for retries and the other
    against them, about the same operation: "the job should try it again on
    its own a few times" against "the job must never re-send a capture by
    itself"; or one asks the work done in the request and the other out of
    it: "Render the PDF asynchronously: enqueue a job" against "The PDF has to
    be rendered synchronously again"; or one asks a switch on and the other
    off: "prepared statement 캐시는 꺼서는 안 됩니다" against "prepared
    statement 캐시를 꺼야 합니다". (Two words of the points in common besides
    the stance's own.)"""
    if not may_clash(a, b):
        return False
    for key, own in (("@~retry", _RETRY_TERMS), ("@~sync", _SYNC_TERMS),
                     ("@~switch", _SWITCH_TERMS), ("@~logfile", _LOG_FILE_TERMS),
                     ("@~localized", _LOCALE_TERMS)):
        stances = {v for v in a.values if v.endswith(key)}
        theirs = {v for v in b.values if v.endswith(key)}
        if len(stances) != 1 or len(theirs) != 1 or stances == theirs:
            continue
        if key not in ("@~retry", "@~logfile", "@~localized") and all(
                any(x.startswith("code:") for x in f.anchors) for f in (a, b)):
            # Each names its own operation in code (a commit, a mail), or its
            # own switch (`search_v2` on, `search_v1_shadow_traffic` off).
            continue
        statuses = (_statuses(a), _statuses(b)) if key == "@~retry" else (set(), set())
        if all(statuses) and not statuses[0] & statuses[1]:
            # "410 은 재시도하지 않고" against retrying the 503s longer: two
            # responses, each with its own rule.
            continue
        common = {t for t in set(a.terms) & set(b.terms) if not t.startswith("~") and t not in own}
        if len(common) >= 2:
            return True
    return False


def _statuses(finding: Finding) -> set[str]:
    """The HTTP error statuses a finding names (`num:503`, `num:410`)."""
    return {x for x in finding.anchors if re.fullmatch(r"num:[45]\d\d", x)}


_RETRY_TERMS = frozenset({"retry", "retri", "재시", "시도", "재전", "전송", "again", "send"})
_SYNC_TERMS = frozenset({"sync", "synchronous", "synchronously", "async", "asynchronous",
                         "asynchronously", "동기", "비동", "again", "다시"})
# (A service's logs go one place: a file named in code and `sys.stdout` are
# where, not two things.)
_LOG_FILE_TERMS = frozenset({"file", "files", "stdout", "파일", "출력", "표준"})
# (A date in the reader's locale or in one form: the form's own words.)
_LOCALE_TERMS = frozenset({"locale", "localize", "iso", "format", "로케", "케일", "형식", "포맷"})
# ("꺼야" and "켜면 안": the switch's own words are not what the points share.)
_SWITCH_TERMS = frozenset({"turn", "switch", "enable", "disable", "활성", "성화", "비활", "다시"})
