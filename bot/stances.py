"""What a request asks of a name or a way of working, beside the values it
gives: a name asked there or gone ("add `--frozen-lockfile`", "remove `X`"),
kept as it is or changed; retries asked for or against; the work asked done
in the request or out of it. Pure functions of one clause; `bot.values`
keeps their answers among a finding's values (`+@x`, `-@~retry`, `+@~sync`)
for `bot.contradictions` to compare.
"""

from __future__ import annotations

import re

from bot import wording as w

LITERAL_WORDS = frozenset({"none", "null", "nil", "true", "false", "yes", "no", "on", "off"})
NUMBER_VALUE = re.compile(r"\d+(?:\.\d+)?\s*(?:" + w.VALUE_UNITS + r")?")


# What follows a Korean verb when it is not to be done: "추가하지 말고", "바꾸지
# 마세요", "사용하지 않", "변경하면 안 됩니다".
NOT_DONE_KO = r"(?![가-힣]*(?:지\s*(?:말|마|않)|면\s*안))"


# "Add `--frozen-lockfile`", "`X`로 바꾸고", "switch to `X`" ask that a name be
# there; "remove `X`", "`X`를 쓰지 말고", "instead of `X`" that it be gone. Kept
# as `+@x` and `-@x`: another reviewer asking the opposite about the same name
# reverses the request.
_PRESENT = re.compile(
    # (Not "do not add `structlog`", which `_ABSENT` reads.)
    # (Not "the switch to `orjson` has to be reverted": a change named, not asked.)
    r"(?<!not\s)(?<!n't\s)(?<!never\s)(?<!the\s)"
    r"\b(?:add|include|enable|use|keep|switch\s+to|move\s+to|re-?add|restore|put\s+back)"
    r"\s+(?:the\s+|a\s+|an\s+)?(?:stdlib\s+|standard\s+|built-?in\s+)?`([^`\n]{1,60})`"
    # ("Go back to `api/render.py:40`: …" points at a line, not a library.)
    r"|\b(?:go\s+back|revert|switch\s+back)\s+to\s+(?:the\s+)?(?:stdlib\s+|standard\s+|built-?in\s+)?"
    r"`((?![^`\n]*[/:])[^`\n]{1,60})`"
    # "Replace the stdlib `json` module with `orjson`": the new one asked there.
    # ("Replace `requests` in `billing/client.py` with `httpx.AsyncClient`": where, between.)
    r"|\breplace\s+(?:the\s+)?(?:[\w-]+\s+)?`[^`\n]{1,60}`(?:\s+[\w-]+)?(?:\s+(?:in|on|for|from)\s+`[^`\n]{1,80}`)?\s+with\s+(?:the\s+)?`([^`\n]{1,60})`"
    # "json 모듈을 계속 사용해 주세요", "keep using the standard json module": a
    # library named in plain words.
    # (Not a description: "json 모듈을 사용하고 있어", "사용하면 느려집니다".)
    r"|(?<![\w`])`?([a-z][a-z0-9_-]{1,30})`?\s*(?:모듈|라이브러리|패키지)(?:을|를)?\s*(?:계속\s*|그대로\s*)?"
    r"(?:사용|유지|쓰|써)(?!하?고\s*있|하?면|게\s*되)" + NOT_DONE_KO
    # (An imperative "keep", not "We keep using the … module, which is slow".)
    + r"|(?:^|[.;:!]\s+|\b(?:please|should|must|to)\s+)keep\s+(?:using\s+)?(?:the\s+)?(?:stdlib\s+|standard\s+|built-?in\s+)?"
    r"`?(?!(?:existing|this|that|same|old|current|new|other)\b)([a-z][\w-]{1,30})`?\s+(?:module|library|package)\b"
    # "이 지표 이름은 `checkout_latency_ms`로 해 주십시오", "name it `X`",
    # "rename the metric to `X`": the name asked.
    r"|(?:이름|명칭)(?:은|을|는)?\s*`([^`\n]{1,60})`(?:으로|로)\s*(?:해|하고|하도록|지어|정해|바꿔|변경)"
    + NOT_DONE_KO +
    r"|(?<!not\s)(?<!n't\s)(?<!never\s)\bname\s+(?:it|this|the\s+\w+)\s+`([^`\n]{1,60})`"
    r"|(?<!not\s)(?<!n't\s)(?<!never\s)\brename\s+(?:it|this|the\s+\w+)\s+(?:to|as)\s+`([^`\n]{1,60})`"
    # "`user_email` 필드는 반드시 남겨주세요": kept.
    r"|`([^`\n]{1,60})`(?:\s*(?:필드|컬럼|칼럼|항목|헤더|키))?(?:은|는|을|를)\s*(?:반드시\s*|꼭\s*|그대로\s*)?"
    r"남(?:겨|기)\s*(?:주|야|두)" + NOT_DONE_KO +
    # "Switch `app/logging.py` to `structlog`": the new one asked there.
    r"|\b(?:switch|migrate|port)\s+`[^`\n]{1,60}`\s+(?:over\s+)?to\s+`([^`\n]{1,60})`"
    # "`date-fns` + `date-fns-tz`로 교체": the first of two names asked in.
    r"|`([^`\n]{1,60})`(?=\s*(?:\+|와|과|및|and)\s*`[^`\n]{1,60}`\s*(?:으로|로)\s*(?:다시\s*)?(?:바꾸|바꿔|변경|전환|교체))"
    # "needs to log `user_email` again", "put `X` back"
    r"|(?<!never\s)(?<!not\s)(?<!n't\s)(?<!no\s)\b(?:log|store|write|record|include|send|return|expose|put|bring)\s+(?:the\s+)?"
    r"`([^`\n]{1,60})`\s+(?:again|back)\b"
    # "turn `X` back on", "turn on `X`", "`X`를 다시 켜 주세요": a switch on.
    r"|(?<!never\s)(?<!not\s)(?<!n't\s)\bturn\s+(?:on\s+`([^`\n]{1,60})`|`([^`\n]{1,60})`\s+(?:back\s+)?on\b)"
    r"|`([^`\n]{1,60})`(?:을|를|는|은)?\s*(?:다시\s*)?켜(?:\s*(?:주|야|두)|고|\.|$)"
    # "`offset` 파라미터는 없애면 안 됩니다": it must stay.
    r"|`([^`\n]{1,60})`\s*(?:필드|컬럼|칼럼|항목|헤더|키|옵션|플래그|파라미터|인자|엔드포인트|라우트)?"
    r"(?:을|를|는|은)?\s*(?:없애|제거하|삭제하|빼|지우)(?:으)?면\s*안\s*(?:됩|되|돼)"
    r"|`([^`\n]{1,60})`(?:\s*\([^)\n]{0,60}\))?\s*(?:"
    # "`offset` must stay", "`X` has to remain"
    r"(?:must|should|has\s+to|needs\s+to|will\s+have\s+to)\s+(?:stay|remain)\b|"
    # "`X`를 추가", "`X` 사용"; "`X`로 바꿔" (but "`X`를 바꿔" changes X: not here)
    r"(?:\s*(?:위젯|모달|배너|버튼|필드|컬럼|헤더|옵션|플래그|미들웨어))?"
    # ("`orjson.dumps`를 쓰고, …", "써 주세요"; not "쓰고 있어", "쓰게 되면".)
    r"(?:을|를)?\s*(?:다시\s*|반드시\s*|꼭\s*)?(?:추가|포함|활성화|사용|유지|복구|띄워|띄우|표시"
    r"|쓰(?=[도세십셔]|고(?!\s*있))|써\s*(?:주|야))"
    # ("`aiohttp`로 가야 합니다": the one to go with.)
    # ("xlsx 생성은 반드시 `openpyxl`로 유지해 주세요": the one kept in use.)
    r"|(?:으로|로)\s*(?:다시\s*)?(?:바꾸|바꿔|변경|전환|되돌|교체|가야|유지(?!하?고\s*있|하?면|되|돼)))"
    + NOT_DONE_KO +
    # "`openpyxl` 대신 `XlsxWriter`의 `constant_memory` 모드로 바꿔야": the library asked in.
    r"|대신\s*`([^`\n]{1,60})`의\s",
    re.I,
)
_ABSENT = re.compile(
    # "Replace the stdlib `json` module with …": the one replaced.
    r"\breplace\s+(?:the\s+)?(?:[\w-]+\s+)?`([^`\n]{1,60})`(?:\s+[\w-]+)?(?:\s+(?:in|on|for|from)\s+`[^`\n]{1,80}`)?\s+with\b"
    # "the switch to `orjson` has to be reverted", "revert the move to `X`"
    r"|\bthe\s+(?:switch|move|migration|change)\s+to\s+`([^`\n]{1,60})`[^.;\n]{0,20}?"
    r"\b(?:has\s+to|must|should|needs\s+to)\s+be\s+(?:reverted|undone|rolled\s+back)"
    r"|\b(?:revert|undo|roll\s+back)\s+the\s+(?:switch|move|migration|change)\s+to\s+`([^`\n]{1,60})`"
    r"|\b(?:remove|drop|delete|disable|strip|avoid|get\s+rid\s+of|instead\s+of"
    r"|(?:do\s+not|don't|never|stop)\s+(?:use|add|enable|using|adding))"
    r"\s+(?:the\s+|a\s+|an\s+)?`([^`\n]{1,60})`"
    # "`date-fns`가 아니라 `dayjs`로", "Use `dayjs`, not `date-fns`": the one refused.
    r"|`([^`\n]{1,60})`(?:가|이)\s*아니라|(?:,\s*not|\brather\s+than)\s+`([^`\n]{1,60})`"
    # "turn `X` off", "turn off `X`", "`X`는 꺼 주세요": a switch off.
    r"|(?<!never\s)(?<!not\s)(?<!n't\s)\bturn\s+(?:off\s+`([^`\n]{1,60})`|`([^`\n]{1,60})`\s+(?:back\s+)?off\b)"
    # "The pip `actions/cache` step has to come out of `test.yml`", "take `X` out".
    r"|`([^`\n]{1,60})`(?:\s+[a-z]+){0,2}\s+(?:has\s+to|must|should|needs\s+to|ought\s+to)\s+"
    r"(?:come|be\s+(?:taken|ripped|pulled))\s+out\b"
    r"|(?<!not\s)(?<!n't\s)\b(?:take|rip|pull)\s+(?:out\s+(?:the\s+)?`([^`\n]{1,60})`|(?:the\s+)?`([^`\n]{1,60})`(?:\s+[a-z]+){0,2}\s+out\b)"
    r"|`([^`\n]{1,60})`(?:을|를|는|은)?\s*(?:다시\s*)?(?:꺼|끄)(?:\s*(?:주|야|두)|고|\.|$)"
    # "`httpx` 는 아직 승인 목록에 없으므로 이 모듈로 들어오면 안 됩니다"
    r"|`([^`\n]{1,60})`\s*(?:는|은|이|가)\s(?:`[^`\n]*`|[^.`\n]){0,80}?(?:들어오|들어가|포함되|쓰이|사용되|도입되)(?:으)?면\s*안\s*(?:됩|되|돼)"
    # "the new `ip_address` column should not be there"
    r"|`([^`\n]{1,60})`(?:\s+[a-z]+){0,2}\s+(?:should|must)\s*(?:not|n't)\s+be\s+(?:there|here)\b"
    # "`user_email` must not be written to the audit log"
    r"|`([^`\n]{1,60})`\s+(?:must|should|may)\s*(?:not|never|n't)\s+be\s+"
    r"(?:written|logged|stored|kept|included|sent|exposed|persisted|returned|shown|recorded)\b"
    # ("`user_email` 필드를 아예 제거", "`mask_pii()` 호출은 제거": the kind of
    # thing may stand between.)
    # ("CAPTCHA(`ImageCaptcha`)를": the name in an aside.)
    r"|`([^`\n]{1,60})`\)?(?:\s*\([^)\n]{0,60}\))?\s*(?:필드|컬럼|칼럼|항목|헤더|키|옵션|플래그|파라미터|인자|호출|데코레이터|미들웨어|래퍼|적용)?"
    r"(?:을|를|는|은)?\s*(?:아예\s*|완전히\s*|모두\s*)?"
    # ("제거하지 마세요" keeps it; "설정하지 않으면" is a condition.)
    r"(?:(?:제거|삭제|빼|비활성화|없애|대신)" + NOT_DONE_KO
    + r"|(?:쓰|사용하|추가하|켜|넣)지\s*(?:말|마|않)|설정하지\s*(?:말|마)"
    # "`ImageCaptcha`를 넣어서는 안 됩니다"
    + r"|(?:넣어|추가해|써|사용해|띄워|켜)서는\s*안\s*(?:됩|되|돼))",
    re.I,
)
# "`created_at`은 지금처럼 … 유지", "keep `X` as it is": the name as it is now
# (`^@x`); "`created_at`을 정수(ms)로 바꿔", "change `X` to …": the name
# otherwise (`~@x`). One reviewer's keeping reverses another's changing.
_AS_IS = re.compile(
    r"`([^`\n]{1,60})`(?:은|는|을|를)?\s*(?:지금처럼|현재처럼|지금\s*그대로|기존(?:처럼|대로)|현재\s*그대로)"
    r"[^.;\n]{0,80}?(?:유지|그대로\s*두|둬\s*주|두어\s*주)" + NOT_DONE_KO
    + r"|\b(?:keep|leave)\s+`([^`\n]{1,60})`\s+(?:as\s+(?:it\s+)?is|unchanged|alone|as\s+today)\b"
    # "`userId`, `createdAt` 은 그대로 두고": each name of the list kept.
    r"|`([^`\n]{1,60})`(?=(?:\s*(?:,|와|과|및)\s*`[^`\n]{1,60}`)*\s*(?:은|는|을|를)?\s*"
    r"(?:그대로|지금처럼|현재처럼)\s*(?:두|둬|유지|남겨)" + NOT_DONE_KO + ")",
    re.I,
)
_OTHERWISE = re.compile(
    r"`([^`\n]{1,60})`(?:을|를)\s*[^.`\n]{0,30}?(?:로|으로)\s*(?:바꿔|바꾸|변경|전환)"
    + NOT_DONE_KO  # (not "바꾸지 말아", "변경하면 안 됩니다")
    + r"|(?<!n't\s)(?<!not\s)(?<!never\s)\b(?:change|switch|convert)\s+`([^`\n]{1,60})`\s+(?:to|into)\b",
    re.I,
)
# "`userId` → `user_id`" in a request to rename: renamed (not in a condition,
# "`userId` → `user_id` 처럼 바꾸면 앱이 깨지므로", nor a call chain `a` -> `b` -> `c`).
_ARROW = re.compile(r"(?<!(?:→|>)\s)(?<!(?:→|>))`([^`\n]{1,60})`\s*(?:→|->|=>)\s*`[^`\n]{1,60}`(?!\s*(?:→|->|=>))")
_RENAME_ASKED = re.compile(r"통일|바꿔|바꾸어|변경해|맞춰|\b(?:rename|change|switch|convert|migrate)\b", re.I)
_CONDITION = re.compile(r"[가-힣]면\s|더라도|\b(?:if|even\s+if|when|unless)\b", re.I)
_NAME = re.compile(r"[\w.:/-]+")
_ORIGIN = re.compile(r"https?://([^/\s]+)(?:/\S*)?")
_WORDS = re.compile(r"[a-z_][\w.-]*(?:\s+[\w./-]+){1,2}")  # `USER app`, not `Cache-Control: x`


# Retrying, asked for or against: "add `@retry(…)`", "try it again a few times
# with backoff", "재시도 5회 이상" against "never retry", "must never re-send",
# "자동 재시도는 하지 말아야", "`retry_on_5xx=True`도 제거". Kept as `+@~retry`
# and `-@~retry`: one asks for what the other asks to be rid of.
_RETRY_WORD = (r"\bre-?tr(?:y|ies|ied|ying)(?![a-z])|@retry|\bre-?send\w*|\bre-?sent\b"
               r"|\btry\s+(?:it\s+|them\s+)?again\b|재시도|재전송|다시\s*시도")
_RETRY = re.compile(_RETRY_WORD, re.I)
_NO_RETRY = re.compile(
    # (The refusal governs the retry: "don't drop the message, retry it" asks for one.)
    r"\b(?:never|no|don't|do\s+not|must\s+not|mustn't|should\s+not|shouldn't|remove|drop"
    r"|stop|disable)\b(?:\s+[\w-]+){0,2}?\s+(?:" + _RETRY_WORD + r")"
    r"|(?:" + _RETRY_WORD + r")[^.;]{0,24}?(?:하지\s*(?:말|마|않)|없이|제거|빼|금지|끄|꺼|없애|(?:하|해서)면?\s*안\s*(?:됩|되|돼))",
    re.I,
)
# (Asked for in so many words: "retry" in a name, `retry_backoff`, asks nothing.)
_RETRY_ASKED = re.compile(
    r"\b(?:add|enable|keep|put\s+(?:\w+\s+){0,2}back|bring\s+(?:\w+\s+){0,2}back|restore|re-?add"
    r"|should|must|need\s+to|needs\s+to|has\s+to|have\s+to|please)\b[^.;]{0,30}?"
    r"(?:\bretry|\bretries|\bre-?try|\btry\s+(?:it\s+|them\s+)?again|\bre-?send)"
    r"|\b(?:retry|retries)\b[^.;]{0,30}?(?:\d+\s*(?:times|회)|with\s+backoff|up\s+to\s+\d+|at\s+least)"
    r"|\btry\s+(?:it\s+|them\s+)?again\b|^\W*(?:please\s+)?retry\b"
    r"|@retry\b[^.;`]{0,80}`?\s*(?:를|을)?\s*(?:추가|넣|다시\s*넣|붙|적용|복구|되돌)"
    r"|(?:재시도|재전송)(?:를|는|을|가|도)?[^.;]{0,20}?(?:추가|넣어|넣도록|해\s*주|하도록|해야|되돌|살려|복구|\d+\s*회)",
    re.I,
)


_NAME_SPAN = re.compile(r"`(?!@)[^`\n]*`")
_ONE_PLACE = re.compile(r"한\s*(?:곳|군데|계층)에서만|\b(?:in|at)\s+(?:one|a\s+single)\s+(?:place|layer)\b",
                        re.I)


def retry_stance(clause: str) -> int:
    """+1 for a clause that asks for retries, -1 for one against them, 0 for
    neither (or both: "retry on 5xx, not on 4xx")."""
    if not _RETRY.search(clause) or _ONE_PLACE.search(clause):
        return 0  # ("재시도는 한 곳에서만": where to retry, not whether)
    against = bool(_NO_RETRY.search(clause))
    # (A name in code other than a decorator, `retry.max`, asks for nothing.)
    prose = _NAME_SPAN.sub(" ", _NO_RETRY.sub(" ", clause))
    for_it = bool(_RETRY_ASKED.search(prose))
    return 0 if against == for_it else -1 if against else 1


def presence(clause: str) -> set[str]:
    """The names a clause asks there (`+@x`), gone (`-@x`), kept as they are
    (`^@x`) or changed (`~@x`)."""
    out: set[str] = set()
    dotted: dict[str, set[tuple[str, str]]] = {}  # sign -> (module, function) named
    patterns = [("+", _PRESENT), ("-", _ABSENT), ("^", _AS_IS), ("~", _OTHERWISE)]
    if "`" in clause and _RENAME_ASKED.search(clause) and not _CONDITION.search(clause):
        patterns.append(("~", _ARROW))
    for sign, pattern in patterns:
        for match in pattern.finditer(clause):
            said = next(g for g in match.groups() if g).strip()
            name = said.lower().rstrip("()").strip()
            dot = _MODULE_FUNCTION.fullmatch(name)
            if dot:
                dotted.setdefault(sign, set()).add((dot.group(1), dot.group(2)))
            header = w.HEADER_SPAN.match(name) if sign == "-" else None
            if header:
                name = header.group(1)  # "`X-Frame-Options: DENY` 헤더는 빼": the header
            origin = _ORIGIN.fullmatch(name)
            if origin:
                # "add `https://admin.example.com`": an origin, named by its
                # host (not by its last dot, `com`).
                out.add(f"{sign}@{origin.group(1)}")
                continue
            # (`USER app`, an instruction of two words, is named by each, as
            # the anchors name it.)
            parts = name.split() if _WORDS.fullmatch(name) else [name]
            for part in parts:
                if (_NAME.fullmatch(part) and not w.COMMIT.fullmatch(part)
                        and part not in LITERAL_WORDS and not NUMBER_VALUE.fullmatch(part)
                        and (len(parts) == 1 or len(part) >= 3)):
                    out.add(f"{sign}@{part.rsplit('.', 1)[-1]}")  # named as the anchors name it
                    library = _MODULE_CLASS.fullmatch(said)
                    if library and sign in "+-":
                        # "`httpx.AsyncClient`로 교체": the library is asked in too.
                        out.add(f"{sign}@{library.group(1).lower()}")
    # "`json.dumps` 대신 `orjson.dumps`를 쓰고": one function of two modules,
    # one asked in and one out: the modules are what is asked.
    for module, function in dotted.get("+", set()):
        for gone, same in dotted.get("-", set()):
            if same == function and gone != module:
                out.update({f"+@{module}", f"-@{gone}"})
    return out


# (Not an object's attribute: `self.timeout`, `settings.timeout`.)
_MODULE_FUNCTION = re.compile(
    r"(?!(?:self|cls|this|settings|config|cfg|conf|app|request|req|ctx|obj|args|kwargs|options|opts)\.)"
    r"([a-z][a-z0-9_]*)\.([a-z_][a-z0-9_]*)")


# A library's class: `httpx.AsyncClient`, `urllib3.PoolManager` (not
# `settings.APP_BASE_URL`, nor `SlackNotifier.send`).
_MODULE_CLASS = re.compile(r"([a-z][a-z0-9_]*)\.[A-Z][a-z]+[A-Z]?\w*")


# Run in the request or out of it: "`send_receipt()` has to run synchronously
# inside the checkout transaction" (`+@~sync`) against "enqueue it as a Celery
# task, and let checkout return without waiting" (`-@~sync`).
_SYNC = re.compile(r"\bsynchronous(?:ly)?\b|\binline\s+call\b|\bcalled?\s+inline\b|(?<!비)동기(?:적으로|식으로|\s*방식|\s*호출|로\s*(?:실행|처리|호출|커밋|기록|저장|유지|끝나|완료|마무리|보내|발송))", re.I)
_ASYNC = re.compile(
    r"\basynchronous(?:ly)?\b|\basync\b|\bin\s+the\s+background\b|\bbackground\s+(?:job|task|worker|queue)"
    r"|\benqueue|\bcelery\s+(?:task|queue)|\b(?:to|onto|into|on)\s+(?:the\s+|a\s+)?(?:job\s+|task\s+|work\s+)?queue\b"
    r"|\bwithout\s+waiting\b|비동기|백그라운드|(?:작업|태스크|잡)\s*큐(?:로|에)\s*(?:넘|보내|옮|넣)",
    re.I,
)
# A refusal next to the way asked ("don't make it async", "비동기로 하지 말아").
# ("an inline call instead of the Celery task": the task refused.)
_REFUSED_BEFORE = re.compile(r"\b(?:not|don't|never|no|instead\s+of|rather\s+than)\b[^.;]{0,20}$", re.I)
_REFUSED_AFTER = re.compile(r"^[^.;]{0,12}?(?:지\s*(?:말|마|않)|면\s*안)")


def sync_stance(clause: str) -> int:
    """+1 for a clause that asks the work done in the request, -1 for one
    that asks it out of the request, 0 for neither or both. A way refused is
    the other asked: "비동기 task로 바꾸지 말고" keeps it in the request."""
    prose = _NAME_SPAN.sub(" ", clause)
    ways = {-way if (_REFUSED_BEFORE.search(prose, max(0, m.start() - 30), m.start())
                     or _REFUSED_AFTER.match(prose[m.end():])) else way
            for way, pattern in ((1, _SYNC), (-1, _ASYNC)) for m in pattern.finditer(prose)}
    return ways.pop() if len(ways) == 1 else 0


# Where logs go: a file (`/var/log/ingest/worker.log`, a `RotatingFileHandler`,
# "로그 파일로 남겨") or the standard output only ("containers must log to
# stdout only", "No log files inside the container", "표준 출력으로만").
_LOG_FILE = re.compile(
    r"\b(?:write|send|log)\s+(?:them|logs?|it|everything)?\s*(?:to|into)\s+`[^`\n]*\.log`"
    r"|\b(?:Rotating|TimedRotating|Watched)?FileHandler\b|로그\s*파일(?:로|에)\s*(?:남|기록|저장|쓰)", re.I)
_LOG_STDOUT = re.compile(
    r"\b(?:log|logs|write|go)\s+(?:\w+\s+)?to\s+`?stdout`?\s+only\b|\bonly\s+(?:to\s+)?`?stdout\b"
    r"|\bno\s+log\s+files\b|(?:표준\s*출력|stdout)(?:으로|로)만|로그\s*파일(?:을|은)?\s*(?:남기|쓰|만들)지\s*(?:말|않)", re.I)


def log_file_stance(clause: str) -> int:
    """+1 for a clause that asks logs written to a file, -1 for one that asks
    them on the standard output only, 0 for neither or both."""
    return _one_way(clause, _LOG_FILE, _LOG_STDOUT)


# A column required or left optional: "`NOT NULL` 제약을 걸어야" (+1) against
# "`email` 컬럼은 nullable로 유지해야" (-1). (Not a condition: "`NOT NULL`을
# 추가하면 마이그레이션이 실패합니다" asks nothing.)
_NOT_NULL = re.compile(
    # ("`NOT NULL DEFAULT 'KRW'` 로 추가해야": with the default it comes with.)
    r"NOT\s+NULL(?:\s+DEFAULT\s+[^`\n]{1,30})?`?\s*(?:제약(?:조건)?|constraint)?\s*(?:을|를|이|로|으로)?\s*(?:걸|추가|넣|붙|설정|적용)(?![가-힣]*면)"
    r"|\b(?:add|enforce|put)\s+(?:a\s+)?`?NOT\s+NULL\b|\bnon-?nullable\b|\b(?:null|nullable)\s*=\s*False\b"
    r"|\bmust\s+(?:not|never)\s+be\s+null\b|\bmake\s+(?:it\s+|`[^`\n]+`\s+)?(?:`)?NOT\s+NULL"
    # "`users.email`은 NOT NULL을 유지하고", "keep the column NOT NULL"
    r"|NOT\s+NULL`?\s*(?:제약(?:조건)?)?\s*(?:을|를|은|는)?\s*(?:유지|지켜|남겨)(?![가-힣]*면)"
    r"|\b(?:keep|leave)\s+(?:it\s+|them\s+|the\s+(?:column|field)\s+|`[^`\n]+`\s+|the\s+)?`?NOT\s+NULL\b",
    re.I,
)
_NULLABLE = re.compile(
    # (Not a condition: "`currency` 를 nullable 로 두면 … 필요해집니다".)
    r"nullable\s*(?:로|으로)?\s*(?:유지|두|둬|남겨|바꿔|변경|되어야|이어야|여야)(?!하?면)"
    r"|\b(?:keep|leave|make)\s+(?:it\s+|them\s+|`[^`\n]+`\s+)?nullable\b|\b(?:stay|remain)s?\s+nullable\b"
    r"|\b(?:null|nullable)\s*=\s*True\b"
    r"|NOT\s+NULL`?\s*(?:제약(?:조건)?)?\s*(?:은|는|을|를)?\s*(?:빼|제거|걸지\s*(?:말|마)|추가하지\s*(?:말|마))"
    r"|\b(?:drop|remove)\s+(?:the\s+)?`?NOT\s+NULL\b|\b(?:don't|do\s+not|never)\s+(?:add|enforce)\s+(?:a\s+|the\s+)?`?NOT\s+NULL\b",
    re.I,
)


def null_stance(clause: str) -> int:
    """+1 for a clause that asks a column required (`NOT NULL`), -1 for one that
    asks it left nullable, 0 for neither or both."""
    return _one_way(clause, _NOT_NULL, _NULLABLE)


# Output that follows the reader's locale (+1: "로케일 포맷으로 출력해야",
# "format per locale with `Intl.DateTimeFormat`") or one fixed form for all
# (-1: "로케일과 무관하게 ISO 8601로 고정", "regardless of locale").
_LOCALIZED = re.compile(
    r"(?:로케일|\blocale)\s*(?:별|마다|에\s*따라|에\s*맞(?:게|춘|춰))|로케일\s*(?:기반\s*)?(?:포맷|형식)(?:으로|을|에\s*맞)"
    r"|\b(?:per|by\s+the\s+user'?s|each|the\s+user'?s)\s+locale\b|\blocale-?(?:aware|specific|dependent)\b"
    r"|\bformat\w*\s+(?:\w+\s+){0,2}(?:per|by|for\s+each)\s+locale\b"
    # "Format the subject date in the recipient's locale as well"
    r"|\bin\s+the\s+(?:recipient|reader|user|customer|viewer)'?s\s+locale\b",
    re.I,
)
_FIXED_FORM = re.compile(
    r"로케일(?:과|와)?\s*(?:무관하게|상관없이|관계없이)|\b(?:regardless\s+of|independent\s+of|irrespective\s+of)\s+(?:the\s+)?(?:user'?s\s+)?locale\b"
    r"|\blocale-?(?:independent|agnostic|neutral)\b|ISO\s*8601[^.;\n]{0,40}?(?:로|으로)\s*고정|\balways\s+(?:in\s+)?ISO\s*8601\b"
    # "ISO `YYYY-MM-DD` for every locale. Please don't localize it"
    r"|\bISO\b[^.;\n]{0,30}?\bfor\s+(?:every|each|all)\s+locales?\b|\b(?:don't|do\s+not|never)\s+locali[sz]e\b",
    re.I,
)


def locale_stance(clause: str) -> int:
    """+1 for a clause that asks output in the reader's locale, -1 for one that
    asks one fixed form whatever the locale, 0 for neither or both."""
    return _one_way(clause, _LOCALIZED, _FIXED_FORM)


# A switch asked on or off in words: "캐시는 꺼서는 안 됩니다" and "열람 추적
# 플래그는 켜 주십시오" (+1) against "캐시를 꺼야 합니다" and "열람 추적은 켜면 안
# 됩니다" (-1). (Not a state: "추적이 꺼져 있어 …" says how it is; nor a
# condition: "캐시를 끄면 p95가 늘어납니다" argues. "꺼져 있어야" is a state,
# which `bot.values` reads as the setting's value.)
_SWITCH_ON = re.compile(
    r"(?<![가-힣])(?:다시\s*)?켜(?:\s*(?:주세요|주십시오|주시기|두어야|둬야|두십시오|두세요)|야\s*(?:합|하|한))"
    r"|(?<!비)활성화(?:해\s*(?:주|야)|\s*상태로\s*(?:두|유지))"
    r"|(?<![가-힣])(?:꺼서는|끄면|꺼도|꺼선)\s*안\s*(?:됩|되|돼)|(?<![가-힣])끄지\s*(?:말|마)"
    r"|\b(?:turn|switch)\s+(?:it\s+)?(?:back\s+)?on\b(?!\s+(?:the|a|an)\b)"
    r"|\b(?:do\s+not|don't|never|must\s+not|should\s+not)\s+(?:turn|switch)\s+(?:it\s+)?off\b",
    re.I,
)
_SWITCH_OFF = re.compile(
    r"(?<![가-힣])(?:다시\s*)?(?:꺼|끄)(?:\s*(?:주세요|주십시오|주시기|두어야|둬야|두십시오|두세요|둔\s*채)|야\s*(?:합|하|한))"
    r"|비활성화(?:해\s*(?:주|야)|\s*상태로\s*(?:두|유지))"
    r"|(?<![가-힣])(?:켜서는|켜면|켜도|켜선)\s*안\s*(?:됩|되|돼)|(?<![가-힣])켜지\s*(?:말|마)"
    r"|\b(?:turn|switch)\s+(?:it\s+|[a-z-]+\s+(?:[a-z-]+\s+)?)?(?:back\s+)?off\b(?!\s+(?:the|a|an)\b)"
    r"|\b(?:do\s+not|don't|never|must\s+not|should\s+not)\s+(?:turn|switch)\s+(?:it\s+)?on\b",
    re.I,
)


def switch_stance(clause: str) -> int:
    """+1 for a clause that asks a switch on (or not off) in words, -1 for one
    that asks it off (or not on), 0 for neither or both."""
    return _one_way(_NAME_SPAN.sub(" ", clause), _SWITCH_ON, _SWITCH_OFF)


def _one_way(clause: str, this: re.Pattern[str], that: re.Pattern[str]) -> int:
    """+1 when only `this` is asked, -1 when only `that`, 0 for neither or both."""
    yes, no = bool(this.search(clause)), bool(that.search(clause))
    return 0 if yes == no else 1 if yes else -1
