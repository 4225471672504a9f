"""What a point asks for, for contradictions between reviewers: which of its
clauses ask, its direction (lower or raise), what it asks *not* to do, the
reviewers it says it is against, and an owner saying two demands cannot both
be met (the values it gives to settings are `bot.values`). Pure functions of
text; `bot.contradictions` compares findings with them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from bot import wording as w
from bot.points import point_items
from bot.quantity_words import ENOUGH
from bot.topics import word_stem

# -- direction and conflicts -----------------------------------------------------
_DOWN = re.compile(
    r"\b(?:lower|reduce|decrease|shorten|shorter|smaller|less|disable|turn(?:ed)?\s+off|switch(?:ed)?\s+off|remove|delete|drop"
    r"|cut|shrink|tighten|narrow|restrict|downgrade)(?:\b|(?=해|하(?!지\s*(?:말|마|않)|면\s*안)))"
    # "bring `MAX_UPLOAD_BYTES` down to 10 MB", "has to go down".
    r"|\b(?:bring|take)\s+(?:\S+\s+){0,3}?down\b|\bgo\s+down\b|줄여|줄이|낮춰|낮추|짧게|감소|축소|끄|꺼|비활성|제거|삭제|빼|좁혀|좁히"
    # ("버전을 다시 내려야"; not "내려받아", a download, nor "클라이언트에 WebP를
    # 내려 주십시오", serve it)
    r"|내려(?!받|\s*주|\s*드|\s*보내)|내리(?!받)"
    # "The catalog response must not be cached", "캐시하지 마십시오": caching off.
    r"|\b(?:must|should)\s+(?:not|never)\s+be\s+cached\b|\b(?:don't|do\s+not|never)\s+cache\b"
    r"|캐시(?:하지|를\s*두지|를\s*쓰지)\s*(?:말|마)",
    re.I,
)
_UP = re.compile(
    r"\b(?:raise|increase|lengthen|longer|larger|bigger|more|enable|turn(?:ed)?\s+on|switch(?:ed)?\s+on|restore|put\s+(?:it\s+)?back"
    r"|add\s+(?:it\s+)?back|re-?add|bring\s+back|keep|grow|loosen|relax|widen|broaden|re-?allow)\b"
    r"|\bgo\s+up\b"  # "The attachment limit has to go up to 50 MB"
    # ("`'unsafe-inline'`을 다시 허용해 주셔야", "allow it again": back in.)
    r"|\ballow\b[^.;]{0,40}\bagain\b"
    r"|늘려|늘리|올려|올리|길게|증가|확대|켜|활성화|복구|복원|되돌려|원복|다시\s*(?:추가|넣|살려|허용)|유지|넓혀|넓히"
    # "항목은 registry 에 남겨 두어야 합니다": kept where it is.
    r"|남겨\s*(?:두|둬|놓|놔)(?!지\s*(?:말|마|않)|면\s*안|서는\s*안)",
    re.I,
)
_CONFLICT = re.compile(
    r"\bcannot\s+both|\bcan't\s+(?:both|satisfy\s+both|meet\s+both|do\s+both)|\bconflict\w*|\bcontradict\w*"
    r"|\bmutually\s+exclusive|\bincompatible|\bat\s+odds|\bone\s+or\s+the\s+other|\bpull\s+in\s+opposite"
    # ("나머지 두 건은 함께 처리할 수 없습니다")
    r"|(?:동시에|함께|둘\s*다)\s*(?:만족|충족|맞출|맞추|지킬|반영|처리|적용|수용|구현|따를|따르)\S*\s*(?:수\s*(?:가\s*|는\s*)?)?(?:없|못|불가|어렵)"
    r"|(?:만족|충족)(?:시킬|할)\s*수\s*없|상충|충돌|모순|양립|서로\s*반대"
    # "I can't write both clauses", "두 분 요청이 반대라서", "의견이 엇갈려"
    r"|\bcan(?:'t|not)\s+(?:write|apply|implement|have|ship|honou?r)\s+both"
    r"|(?:요청|의견|요구)(?:이|가)?\s*(?:서로\s*)?(?:정?반대|엇갈|상반)",
    re.I,
)


_NOT_DOWN = re.compile(
    r"(?:낮추|줄이|짧게\s*하|제거하|삭제하|끄)지\s*(?:말|마|않)|\b(?:don't|do\s+not|never)\s+(?:lower|reduce|decrease|shorten|remove|delete|disable|drop)",
    re.I,
)
_NOT_UP = re.compile(
    r"(?:올리|늘리|길게\s*하|추가하|켜|되돌리|복구하)지\s*(?:말|마|않)|\b(?:don't|do\s+not|never)\s+(?:raise|increase|lengthen|enable|restore|add)",
    re.I,
)


def asks(clause: str) -> bool:
    """The clause asks for something in so many words ("please", "must",
    "주세요", an imperative, also after a colon: "…JSON: enable compression"),
    not only names a problem."""
    return bool(w.ASKS.search(clause) or w.IMPERATIVE.match(clause) or (
        ": " in clause and _VERB_AFTER_COLON.match(clause.split(": ", 1)[1])))


# After a colon only a verb asks ("JSON: enable compression"), not a noun that
# IMPERATIVE also holds ("Benchmark: cache hit rate is 95%").
_VERB_AFTER_COLON = re.compile(
    r"\s*(?:please\s+)?(?:enable|disable|turn\s+(?:on|off)|add|remove|use|set|raise|lower|increase"
    r"|decrease|reduce|revert|restore|drop|rename|replace|move|switch|make|keep|avoid|stop|wrap|validate"
    r"|escape|sanitize|close|release|reject|invalidate|extract)\b", re.I)


# "It should shrink roughly tenfold": the effect expected, not a request.
# (Not "it should increase to 30s": that asks.)
_EFFECT = re.compile(r"\b(?:it|this|that|which)\s+(?:should|will|would)\s+(?!be\b|stay\b|remain\b)[a-z]+\b"
                     r"(?!\s+(?:(?:down|up|back)\s+)?to\s+`?\d)"
                     # "reject anything larger": what a cap refuses, not a raise.
                     r"|\b(?:reject|refuse|deny|block)\s+(?:anything|everything|values?|requests?)\s+"
                     r"(?:larger|bigger|longer|higher|more)\b"
                     # "환경 변수 `X`로 빼 주십시오": moved out into a setting, not removed.
                     r"|(?:으로|로)\s*(?:따로\s*|별도로\s*)?빼", re.I)


# "재시도는 두 번이면 충분합니다", "two retries are enough": a value recommended
# (where a point asks it, though it says no "please").
_ENOUGH = re.compile(r"(?:\d\S*|(?:두|세|네|다섯|한)\s*(?:번|회|개))\s*(?:" + ENOUGH + ")"
                     r"|\b(?:two|three|four|five|one)\s+\w+\s+(?:" + ENOUGH + ")", re.I)


@lru_cache(maxsize=8192)  # setting_values() and direction() of every point ask for it
def asked(text: str) -> tuple[str, ...]:
    """The clauses of a point that ask for something (where its direction and
    values are); the whole point when none does."""
    parts = point_items(text)
    out: list[str] = []
    for i, (point, clause) in enumerate(parts):
        if not (asks(clause) or _ENOUGH.search(clause)):
            continue
        # "재시도는 세 번까지만 하고, 그 뒤에는 … 보내 주십시오": the halves of
        # one sentence joined by "and" are one request (not those of "but").
        at = text.find(clause)
        for j in range(i - 1, -1, -1):
            earlier_point, earlier = parts[j]
            start = text.rfind(earlier, 0, at) if at > 0 else -1
            if earlier_point != point or start < 0 or _APART.search(_masked(text), start, at):
                break
            if earlier not in out and len(earlier) > 3:
                out.append(earlier)
            at = start
        out.append(clause)
    return tuple(out) or (text,)


@lru_cache(maxsize=1024)
def _masked(text: str) -> str:
    """The text with code spans and decimals blanked (same length): the dot of
    `retry.max` or 1.5 ends no sentence."""
    text = w.CODE.sub(lambda m: "x" * len(m.group(0)), text)
    return re.sub(r"(?<=\d)\.(?=\d)", "x", text)


# Between two halves: the end of a sentence, or "but".
_APART = re.compile(r"[.!?\n]|(?<!까)지만|다만|\bbut\b|\bhowever\b", re.I)


def requests(text: str) -> str:
    """`asked` as one string."""
    return "; ".join(asked(text))


@lru_cache(maxsize=8192)
def direction(text: str) -> int:
    """-1 for "lower / remove", +1 for "raise / restore", 0 for neither or both."""
    # (`restore-keys` is a name, not a request to restore; "it should shrink
    # tenfold" is what the change will do, not what to change.)
    prose = _EFFECT.sub(" ", w.CODE.sub(" ", requests(text)))
    # "낮추지 말고 올려 주세요", "don't lower it, raise it": a negated request points the other way.
    flipped_up = bool(_NOT_DOWN.search(prose))
    flipped_down = bool(_NOT_UP.search(prose))
    prose = _NOT_UP.sub(" ", _NOT_DOWN.sub(" ", prose))
    down = bool(_DOWN.search(prose)) or flipped_down
    up = bool(_UP.search(prose)) or flipped_up
    return -1 if down and not up else 1 if up and not down else 0


# "미리 만들지 말고", "생성하지 않는 것이 좋겠습니다", "don't pre-create": a request
# not to do something. (Only prohibitions: "설정하지 않으면" is a condition.)
_PROHIBITED_KO = re.compile(
    r"([가-힣]{2,6})지\s*(?:말|마세요|마십시오|않는\s*(?:것이|게|편이)\s*(?:좋|낫)|않아야|않도록\s*해)"
    # "인덱스를 추가하는 것은 하지 말아 주십시오": the verb before "하는 것".
    r"|([가-힣]{1,5})하는\s*(?:것|걸)(?:은|을|도|는)?\s*(?:하지\s*(?:말|마)|피해|삼가)"
    # "확장을 추가하면 안 됩니다": not to be done.
    r"|([가-힣]{2,6})(?:으)?면\s*안\s*(?:됩|되|돼)"
    # "locale별 포맷으로 바꾸지 말아": not to be 포맷-ed another way.
    r"|([가-힣]{2,4}?)(?:으로|로)\s*(?:바꾸|변경하|전환하)지\s*(?:말|마)"
    # "PDF 에 넣지 말아 주십시오": a verb of one syllable.
    r"|(?<![가-힣])(넣|빼|켜|끄|쓰|두)지\s*(?:말|마세요|마십시오)"
    # "`NOT NULL`은 걸면 안 됩니다": the same, before "면 안".
    r"|(?<![가-힣])(넣|빼|켜|끄|쓰|걸)(?:으)?면\s*안\s*(?:됩|되|돼)"
)
# Putting something in, in any of its words: "넣지 말아" refuses what "추가해
# 주십시오" and "들어가야 합니다" ask (`~add`).
ADD = "~add"
_ADD_WORDS = ("넣", "걸", "두", "추가", "포함", "들어가", "add", "include")
_CONDITION = re.compile(r"\b(?:if|unless|when|whenever)\b", re.I)
_PROHIBITED_EN = re.compile(
    r"(?<!\bif )(?<!\bunless )(?<!\bwhen )\b(?:don't|do\s+not|never|shouldn't|should\s+not"
    r"|must\s+not|mustn't|no\s+need\s+to)\s+(?:\w+ly\s+)?(?:pre-?)?([a-z]{3,})",
    re.I,
)
_AS_IT_IS = re.compile(r"(?:그대로|이대로|지금처럼|현재처럼|방치해)\s*$")
# The thing put in, just before "넣지 말아": "검사를 ", "로그를 ".
_OBJECT_KO = re.compile(r"([가-힣]{2,4})(?:을|를)\s*$")
# Verbs whose prohibition says nothing about the work ("don't worry", "잊지 마세요").
_NOT_A_DEMAND_KO = ("걱정", "망설", "잊", "신경")
_NOT_A_DEMAND = frozenset({
    "be", "have", "need", "want", "think", "know", "see", "worry", "forget", "mind", "bother",
    "hesitate", "expect",
})


@lru_cache(maxsize=8192)
def prohibited(text: str) -> frozenset[str]:
    """What a point asks *not* to do: "미리 만들지 말고" is `만들`, "재생성하지
    마세요" is `재생성`, "don't pre-create" is `create`."""
    out: set[str] = set()
    for clause in asked(text):
        for match in _PROHIBITED_KO.finditer(clause):
            word = next(g for g in match.groups() if g)
            word = word[:-1] if word.endswith("하") else word  # 생성하지 -> 생성
            if match.group(3) and word.endswith("으") and len(word) == 2:
                word = word[0]  # "넣으면 안 됩니다": 넣
            if word == "두" and (_AS_IT_IS.search(clause, 0, match.start())
                                or not _OBJECT_KO.search(clause, 0, match.start())):
                # "그대로 두지 말고" (not to leave it: a change asked), "`a.py`에
                # 두지 말고 …로 옮겨" (not to keep it there): nothing refused in.
                continue
            if word in _ADD_WORDS:
                out.add(ADD)  # ("don't add", "넣지 말아": adding, in any of its words)
                # "magic bytes 검사를 넣지 말아": not to check, as "검사하고
                # … 거부해야" asks to.
                thing = _OBJECT_KO.search(clause, 0, match.start())
                if thing:
                    out.add(thing.group(1))
            if len(word) >= 2 and not word.startswith(_NOT_A_DEMAND_KO):
                out.add(word)
        for match in _PROHIBITED_EN.finditer(clause):
            if _CONDITION.search(clause[: match.start()]):
                continue  # "If we don't retry, …" argues; it prohibits nothing
            word = word_stem(match.group(1).lower())
            if word in _ADD_WORDS or word == "put":
                out.add(ADD)
            if word not in _NOT_A_DEMAND:
                out.add(word)
    return frozenset(out)


# Where a request says what to do: "…두어야 합니다", "…해 주세요", "please …".
_ASK_KO = re.compile(w.MUST_KO_END + r"|주세요|주십시오|주시기|주시면|주셨으면|바랍니다|도록")
_ASK_EN = re.compile(
    # ("must be restricted to admins" asks to restrict, as "must restrict" does.)
    r"\b(?:please|should|must|need\s+to|needs\s+to|has\s+to|have\s+to)\s+(?:also\s+)?"
    r"(?:be\s+(?=[a-z]{3,}ed\b))?(?:pre-?)?([a-z]{3,})",
    re.I,
)
_HANGUL_WORD = re.compile(r"[가-힣]+")
# The last syllable of a verb in its "-어" form and in its base: 남겨 -> 남기,
# 낮춰 -> 낮추, 바꿔 -> 바꾸, 줄여 -> 줄이 ("남기면 안 됩니다" prohibits what
# "남겨 주십시오" asks). ("하여" is 하다's, not a base ending in 이.)
_BASE = dict(zip("겨려혀쳐켜셔져펴춰워둬줘뤄꿔여", "기리히치키시지피추우두주루꾸이", strict=True))


def _base_form(word: str) -> str:
    if word[-1] not in _BASE or word.endswith("하여"):
        return word
    return word[:-1] + _BASE[word[-1]]


_JOINED_KO = re.compile(r"([가-힣]{2,4})하고(?![가-힣])")


_OPPOSE = re.compile(
    r"반대합니다|반대입니다|반대하(?!지\s*않)|동의하지\s*않|동의하기\s*(?:어렵|힘듭)"
    # "privacy-bot 의견과는 반대로, …", "contrary to sec-bot's request"
    r"|(?:의견|요청|제안|지적|말씀)(?:과|와)(?:는)?\s*(?:정)?반대로|\bcontrary\s+to\b"
    # "finance-bot이 말한 결번 없는 채번은 … 받아들일 수 없습니다"
    r"|(?:받아들일|수용할)\s*수\s*(?:없|는\s*없)|\bcan(?:'t|not|\s+not)\s+accept\b"
    r"|(?<!n't\s)(?<!not\s)\b(?:disagree|oppose|object\s+to|push\s+back\s+on)\b",
    re.I,
)


# What the code did against a reviewer's request, said as a fact: "방금 커밋은
# sec-bot 요청과는 반대로 `SESSION_TTL`을 다시 늘렸습니다", "Contrary to
# sec-bot's request, `X` is still 86400" (backing that request, not against it).
_AGAINST_IT_DONE = re.compile(
    r"(?:반대로|\bcontrary\s+to\b)[^.\n]*?(?:(?:었|았|였|렸|했|됐)습니다|\b(?:is|are|was|were)\s+still\b)",
    re.I)


def opposed(text: str, authors: set[str]) -> frozenset[str]:
    """The authors a point says it is against: "다만 perf-bot의 `gzip` 요청에는
    반대합니다", "I disagree with sec-bot here" (not "they do not conflict",
    nor "Agree with sec-bot: we cannot accept unsigned requests")."""
    named = _named_in(text, authors, lambda c: bool(_OPPOSE.search(c))
                      and not w.NO_CONFLICT.search(c) and not _AGREE.search(c)
                      and not _AGAINST_IT_DONE.search(c))
    if not authors:
        return named
    # "I disagree with keying on `user_id`", "`user_id` 기준 제한에는 반대합니다":
    # against what another point asks of that name (kept as `code:user_id`),
    # when the sentence names no reviewer.
    return named | {"code:" + (m.group(1) or m.group(2)).lower().rstrip("()").rsplit(".", 1)[-1]
                    for _, clause in point_items(text) if not w.NO_CONFLICT.search(clause)
                    and not any(a.lower() in clause.lower() for a in authors)
                    for m in _OPPOSED_NAME.finditer(clause)}


_OPPOSED_NAME = re.compile(
    r"\b(?<!n't\s)(?<!not\s)(?:disagree\s+with|object\s+to|oppose|push\s+back\s+on)\s+"
    r"(?:[a-z-]+\s+){0,3}?`([^`\n]{1,60})`"
    r"|`([^`\n]{1,60})`[^.;\n`]{0,20}?(?:에는|에|은|는)\s*반대(?:합니다|입니다)", re.I)


# Siding with the reviewer it names: "Agree with sec-bot", "as sec-bot said",
# "sec-bot이 지적한 대로", "동의합니다".
_AGREE = re.compile(
    r"\bagree(?:d|s)?\s+with\b|\bas\s+[\w-]+\s+(?:said|noted|pointed\s+out|suggested)"
    r"|(?:지적|말씀|의견|제안)(?:한|하신|하신\s*것)?\s*대로|동의합니다|동의하며|동의하고",
    re.I,
)


def unopposed(text: str, authors: set[str]) -> frozenset[str]:
    """The authors a point says it does not conflict with: "perf-bot의 1번은
    `/static/` 대상이라 이것과 겹치지 않습니다", or agrees with: "sec-bot 님
    의견에 동의합니다" (not "I agree with sec-bot's goal, but …")."""
    return _named_in(text, authors, lambda c: bool(w.NO_CONFLICT.search(c)) or (
        agrees_with(c) and not w.CODE.search(c)))


def agrees_with(clause: str) -> bool:
    """The clause sides with another reviewer ("sec-bot 님 의견에 동의합니다").
    (Naming something in code, "`status_label` 건은 i18n-bot 의견에 동의합니다",
    it agrees on that only: `bot.reviewer_turn` marks the findings it names.)"""
    return bool(_AGREE.search(clause)) and not _OPPOSE.search(clause) and not _BUT.search(clause)


_BUT = re.compile(r"\bbut\b|\bhowever\b|지만|다만|동의하나", re.I)


def accepted(text: str) -> frozenset[str]:
    """What a point says it is fine with another doing, as `~stem`: "I'm fine
    with dropping the body" is `~drop`, "본문을 빼는 것은 괜찮습니다" `~빼`
    (a change someone else asked; a request to do it too is no clash)."""
    out: set[str] = set()
    for match in _ACCEPTED.finditer(text):
        start, stop = _sentence(text, match.start(), match.end())
        if _BUT.search(text, start, stop) or _NOT.search(text, start, stop):
            continue  # ("fine with dropping it, but not …": a condition, in its sentence)
        verb = next(g for g in match.groups() if g).lower()
        if verb.endswith("ing"):
            verb = verb[:-3]
            if len(verb) >= 3 and verb[-1] == verb[-2]:
                verb = verb[:-1]  # dropping: drop
        out.add("~" + verb)
    return frozenset(out)


def _sentence(text: str, start: int, end: int) -> tuple[int, int]:
    """Where the sentence holding `text[start:end]` begins and ends."""
    begin = max(text.rfind(mark, 0, start) for mark in ".!?\n") + 1
    stops = [i for i in (text.find(mark, end) for mark in ".!?\n") if i >= 0]
    return begin, min(stops, default=len(text))


_NOT = re.compile(r"\b(?:not|never)\b|n't\b|않|(?<![가-힣])안\s|못\s", re.I)
_ACCEPTED = re.compile(
    r"\b(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:fine|ok|okay|happy|on\s+board)\s+with\s+([a-z]+ing)\b"
    r"|\bno\s+objections?\s+to\s+([a-z]+ing)\b"
    r"|([가-힣]+?)(?:하는|는)\s*(?:것|건|부분)(?:은|에는|에|도)?\s*(?:괜찮|동의|찬성|문제\s*없)"
    # "`new_editor` 제거에는 동의합니다": the removal itself, agreed to.
    r"|([가-힣]{2,4})(?:에는|에도|에)\s*(?:동의|찬성)",
    re.I)


def _named_in(text: str, authors: set[str], says: Callable[[str], bool]) -> frozenset[str]:
    out: set[str] = set()
    if not authors:
        return frozenset()  # one reviewer: no other to name
    for _, clause in point_items(text):
        if says(clause):
            lowered = clause.lower()
            out.update(a for a in authors if a.lower() in lowered)
    return frozenset(out)


@lru_cache(maxsize=8192)
def asked_verbs(text: str) -> frozenset[str]:
    """What a point asks to *do*, as `prohibited` names it: the stems of the
    words just before "…어야 합니다" / "주세요" ("미리 만들어 두어야 합니다"
    holds `만들`), the verb after "please / must / should", an imperative's
    first word. (A few words too many is harmless: a reversal also needs a
    prohibition of that very stem and a shared anchor.)"""
    out: set[str] = set()
    for clause in asked(text):
        for match in _ASK_KO.finditer(clause):
            # The verb and its helper ("만들어 두어야"): every stem a
            # prohibition could name, 만들어 -> 만들, 만들어.
            # (Its last three words: a window, not the whole clause again for every match.)
            for word in _HANGUL_WORD.findall(clause[max(0, match.start() - 80): match.start() + 1])[-3:]:
                out.update(word[:n] for n in range(2, len(word) + 1))
                out.update(_base_form(word[:n]) for n in range(2, len(word) + 1))
            # "확장을 추가하고 인덱스를 만들어야": the verbs joined before it ask too.
            # (In the same window before the ask.)
            out.update(m.group(1) for m in _JOINED_KO.finditer(
                clause, max(0, match.start() - 80), match.start()))
        for match in _ASK_EN.finditer(clause):
            out.add(word_stem(match.group(1).lower()))
        first = re.match(r"\s*(?:please\s+)?(?:pre-?)?([a-z]{3,})", clause, re.I)
        if first and w.IMPERATIVE.match(clause):
            out.add(word_stem(first.group(1).lower()))
        if _BACK.search(clause):
            out.add(BACK)
        if _PUT_BACK_KO.search(clause):
            out.update((BACK, "되돌"))  # "체크아웃 모듈 안으로 다시 돌려 놓아": undone, in so many words
        if _TAKE_OUT.search(clause):
            out.add(TAKE_OUT)
        if _JUST_CHANGED.search(clause):
            out.add(JUST)
    if out & set(_ADD_WORDS) or any(v.startswith(("넣", "걸어")) for v in out):
        # ("넣어 주십시오" holds 넣어, never 넣 alone; "`NOT NULL`을 걸어야"
        # puts a constraint in.)
        out.add(ADD)
    return frozenset(out - _NOT_A_DEMAND)


# Taken out, in so many words: "병렬 실행은 빼 주십시오", "drop the retry step".
# Kept among the verbs as `~out`: taking out what another reviewer's fixed
# finding got put in.
TAKE_OUT = "~out"
_TAKE_OUT = re.compile(
    r"(?<![가-힣])빼\s*(?:주|야|\.|$)|(?:제거|삭제)(?:해\s*(?:주|야)|하도록)|없애\s*(?:주|야)"
    # ("함께 drop해주세요": an English verb with a Korean ending.)
    r"|\b(?:remove|drop|take\s+out|rip\s+out|get\s+rid\s+of)(?:\b|(?=해|하(?!지\s*(?:말|마|않)|면\s*안)))",
    re.I,
)


# "다시 돌려 놓아", "되돌려 놓아": put back where it was (not "테스트를 돌려",
# which runs it).
_PUT_BACK_KO = re.compile(r"(?:다시\s*|되)돌려\s*놓")
# Asked to be as it was: "put the login limit back to 20", "원래대로 8자로",
# "이전 값으로". Kept among the verbs as `~back`: undoing what another
# reviewer's fixed finding got done.
BACK = "~back"
_BACK = re.compile(
    # (Not "fall back to the cache", "redirect back to /login": a way out, not undoing.)
    r"(?<!fall\s)(?<!falls\s)(?<!falling\s)(?<!redirect\s)(?<!redirects\s)(?<!write\s)(?<!writes\s)"
    r"(?<!report\s)(?<!send\s)(?<!sends\s)(?<!come\s)(?<!get\s)\bback\s+to\b"
    r"|\b(?:put|bring)\s+(?:[\w-]+\s+){0,4}back\b|\bbring\s+back\b|\bgo\s+back\b|\bas\s+(?:it\s+)?(?:was|were)\s+before\b"
    r"|원래대로|원래\s*(?:값|설정|상태)(?:으로|로)|(?:이전|예전)\s*(?:값|설정|상태|수준)(?:으로|로)"
    # ("이전처럼 유지" keeps; "이전처럼 … 되돌려", "이전처럼 … 만 남겨" undo.)
    r"|(?:이전|예전)(?:처럼|대로)[^.;\n]{0,40}?(?:되돌|복구|돌려|원복|만\s*남겨|허용해|풀어)"
    # "SVG 로고도 다시 업로드할 수 있게": allowed again.
    r"|다시\s*(?:[가-힣]+\s*){0,2}?(?:수\s*있게|허용)"
    # "로그에 고객 이메일 주소를 다시 남겨 주십시오": put back what was taken out.
    r"|다시\s*(?:남겨|넣어|기록해|포함해|살려)\s*(?:주|야|두)",
    re.I,
)


# "방금 변경은 되돌려야 합니다", "revert the change you just made": the
# change of the owner's last turn. Kept among the verbs as `~just`: undoing
# it undoes the one finding that turn reported fixed.
JUST = "~just"
_JUST_CHANGED = re.compile(
    # (The change itself is what is undone: not "방금 커밋 확인했고, 로그 레벨은
    # 이전 설정으로 되돌려 주세요".)
    r"(?:방금|이번)\s*(?:의\s*)?(?:변경|수정|바꾼\s*것|바뀐\s*것|적용|커밋|반영)(?:\s*사항|한\s*것|하신\s*것|된\s*것)?"
    r"(?:은|을|는)?\s*(?:모두\s*|전부\s*)?(?:되돌|원복|롤백|취소)"
    r"|\b(?:revert|undo|roll\s+back)\s+(?:the\s+)?(?:change|commit|fix)\s+you\s+just\s+(?:made|pushed|applied)\b"
    r"|\bthe\s+(?:change|commit|fix)\s+you\s+just\s+(?:made|pushed|applied)\s+(?:has\s+to|must|should|needs\s+to)"
    r"\s+be\s+(?:reverted|undone|rolled\s+back)\b"
    r"|\b(?:revert|undo|roll\s+back)\s+the\s+(?:latest|last|new)\s+change\b"
    r"|\bthe\s+(?:latest|last|new)\s+change\s+(?:has\s+to|must|should|needs\s+to)\s+be\s+(?:reverted|undone|rolled\s+back)\b",
    re.I,
)


# "처음에는 … 충돌한다고 생각했는데", "I first thought they conflicted, but":
# a conflict the owner took back.
_RETRACTED = re.compile(
    r"(?:거라고|것이라고|줄)\s*(?:생각했|알았|봤)|생각했는데|처음에는|처음엔"
    # "동시에 만족할 수 없는 것처럼 보였지만": it only looked so.
    r"|처럼\s*보(?:였|일|이지만|입니다만)|\bI\s+(?:first\s+|initially\s+|had\s+)?thought\b|\b(?:seemed|looked)\s+(?:like\s+|to\s+)",
    re.I,
)


def mentions_conflict(text: str) -> bool:
    """Words of a conflict anywhere (a quick test before reading clause by clause)."""
    return bool(_CONFLICT.search(_prose(text)))


def _prose(text: str) -> str:
    """The words, not code nor a merge: "`ON CONFLICT (image_id, size) DO
    UPDATE`로 변경", "resolved the merge conflict" declare nothing."""
    return _MERGE.sub(" ", w.CODE.sub(" ", text))


_MERGE = re.compile(r"\b(?:merge|rebase)\s+conflicts?\b|(?:머지|병합|리베이스)\s*(?:충돌|컨플릭트)", re.I)


def retracts_conflict(text: str) -> bool:
    """Words that take a conflict back ("I first thought", "처음엔", "것처럼 보였지만")."""
    return bool(_RETRACTED.search(text))


def declares_conflict(text: str) -> bool:
    """An owner saying two demands cannot both be met (and not taking it back)."""
    return (bool(_CONFLICT.search(_prose(text))) and not _RETRACTED.search(text)
            and not w.NO_CONFLICT.search(text))
