"""Values written in forms of their own, for `bot.values`: a package version
("`requests` has to be >= 2.32.0"), a time zone ("UTC로 통일", "`Asia/Seoul`
기준으로"), a setting given its value in one span ("`LOG_BODY=true`로 …"),
the wildcard refused or asked in words, a name asked to become another.
Each reader returns where in the clause the value stands, so `bot.values`
gives it to the setting named before it. Pure.
"""

from __future__ import annotations

import re

from bot.quantities import VERSION
from bot.stances import NOT_DONE_KO
from bot.wording import CODE

# A setting given its value in one span, then "로 …" whatever the verb:
# "`LOG_REQUEST_BODY=true`로 요청 본문 로깅을 켜 주십시오".
_ASSIGNED = re.compile(r"`([A-Za-z_][\w.-]*)\s*=\s*([^`=\n]{1,40})`\s*(?:으로|로)(?![가-힣])")


# A package version asked for: "`requests` has to be >= 2.32.0", "must stay
# pinned at `==2.31.0`", "2.6.0 이상으로" (at least, at most or exactly).
_VERSION = re.compile(
    # (Not a requirement quoted in code: "`Django<5.0`을 요구해서" states it.)
    r"(?<![\w\]])(?P<sign>>=|<=|==|~=|>|<)\s*`?v?(?P<signed>\d+\.\d+(?:\.\d+)?)(?![\d.]*\d)"
    r"|\b(?:pinned|pin(?:ned)?\s+(?:it|`?(?P<pinned>[a-z][\w.\[\]-]*)`?)|stay|keep\s+it)\s+(?:pinned\s+)?(?:at|to|on)\s+"
    r"(?:(?:an?\s+)?(?:exact\s+)?version,?\s+)?`?v?(?P<at>\d+\.\d+(?:\.\d+)?)(?![\d.]*\d)"
    r"|(?<![\d.])v?(?P<bounded>\d+\.\d+\.\d+)`?\s*(?:(?P<up>이상|or\s+(?:later|newer|above|higher))"
    r"|(?P<down>이하|or\s+(?:earlier|older|below|lower)))"
    # "pin `faiss-cpu==1.8.0`": a requirement in code, asked for.
    r"|\bpin\s+`(?P<required>[a-z][\w.\[\]-]*)==v?(?P<exact>\d+\.\d+(?:\.\d+)?)`",
    re.I,
)


_A_VERSION = re.compile(r"v?\d+\.\d+\.\d+")


def _version_value(match: re.Match[str]) -> str:
    """A `_VERSION` match as a stored value: `>=2.32.0ver`, `2.31.0ver`."""
    number = next(match.group(g) for g in ("signed", "at", "bounded", "exact") if match.group(g))
    bound = {">": ">=", ">=": ">=", "<": "<=", "<=": "<="}.get(match.group("sign") or "", "")
    bound = ">=" if match.group("up") else "<=" if match.group("down") else bound
    return bound + number + VERSION


# A time zone a request asks dates to be read in: "UTC로 통일", "`Asia/Seoul`
# 기준으로", "in UTC", "AT TIME ZONE 'UTC'", "한국 시간 기준" (KST, Seoul: one zone).
_ZONE = re.compile(
    r"(?:\b(?:in|to|use|at\s+time\s+zone)\s+)?[`'\"]?(?<![a-z0-9_])(utc|gmt|kst|jst|(?:asia|europe|america|africa|australia|pacific|etc)/[a-z_]+)(?![a-z0-9_/])[`'\"]?"
    r"(?=\s*(?:기준|으로|로(?![가-힣])|\)|time\b|timezone\b|zone\b|boundar|midnight|day\b|dates?\b|$))"
    r"|(한국|서울)\s*(?:시간|시각|날짜)\s*기준",
    re.I,
)
_ZONES = {"gmt": "utc", "etc/utc": "utc", "kst": "asia/seoul", "한국": "asia/seoul",
          "서울": "asia/seoul"}


def _zone(match: re.Match[str]) -> str:
    """The zone a `_ZONE` match names, one name for each zone."""
    name = (match.group(1) or match.group(2)).lower()
    return "tz:" + _ZONES.get(name, name)


# A cloud region asked in words ("미국 동부(버지니아 북부) 리전에 두어야",
# "move the bucket to the Frankfurt region"): the region's code, as a setting
# `region = "ap-northeast-2"` holds it. Only in a clause about a region: "서울"
# alone is a city, a time zone, a team.
_REGION_NAMES = {
    "us-east-1": ("미국 동부", "버지니아", "us east", "virginia"),
    "us-east-2": ("오하이오", "ohio"),
    "us-west-1": ("캘리포니아", "california"),
    "us-west-2": ("오레곤", "오리건", "oregon"),
    "ap-northeast-1": ("도쿄", "tokyo"),
    "ap-northeast-2": ("서울", "seoul"),
    "ap-southeast-1": ("싱가포르", "singapore"),
    "eu-central-1": ("프랑크푸르트", "frankfurt"),
    "eu-west-1": ("아일랜드", "ireland"),
}
_REGION_WORD = re.compile(
    "|".join(rf"(?P<{code.replace('-', '_')}>" + "|".join(
        re.escape(name) if not name.isascii() else rf"\b{re.escape(name)}\b" for name in names) + ")"
        for code, names in _REGION_NAMES.items()), re.I)
_ABOUT_REGION = re.compile(r"리전|\bregions?\b", re.I)


def regions(clause: str) -> list[tuple[int, str]]:
    """(where, stored value) of each cloud region asked in words: `=us-east-1`."""
    if not _ABOUT_REGION.search(clause):
        return []
    seen: dict[str, int] = {}
    for m in _REGION_WORD.finditer(clause):
        seen.setdefault(str(m.lastgroup).replace("_", "-"), m.start())
    return [(at, "=" + code) for code, at in seen.items()]


# Where a listener takes connections, asked in words: "listen on loopback
# only", "localhost에서만 받도록" (`=127.0.0.1`); "on all interfaces", "모든
# 인터페이스에서" (`=0.0.0.0`). The address a bind setting gives in code
# (`METRICS_BIND = "0.0.0.0:9100"`) is its other value.
_LOOPBACK = re.compile(
    r"\b(?:loopback|localhost)(?:\s+(?:interface|address))?\s+only\b"
    r"|\bonly\s+(?:on|to)\s+(?:the\s+)?(?:loopback|localhost)\b"
    r"|(?:루프백|로컬호스트|\blocalhost|\bloopback)\s*(?:(?:인터페이스|주소)\s*)?(?:에서|에|으로|로)만", re.I)
# (Of a listener: "the test connects to localhost only" is no address asked.)
_LISTENS = re.compile(r"\b(?:listen|bind|serve|expose|reachable)|바인딩|리슨|열어|노출|접근", re.I)
_ANY_INTERFACE = re.compile(r"\b(?:on|to)\s+all\s+(?:network\s+)?interfaces\b"
                            r"|모든\s*(?:네트워크\s*)?인터페이스(?:에서|에|로)", re.I)
_LISTEN_HINT = re.compile(r"loopback|localhost|interface|루프백|로컬호스트|인터페이스", re.I)


def listen_addresses(clause: str) -> list[tuple[int, str]]:
    """(where, address) of each listening address asked in words."""
    if not _LISTEN_HINT.search(clause) or not _LISTENS.search(clause):
        return []  # (most clauses: one quick look)
    out = [(m.start(), "=127.0.0.1") for m in _LOOPBACK.finditer(clause)]
    return out + [(m.start(), "=0.0.0.0") for m in _ANY_INTERFACE.finditer(clause)]


# A file format asked in words: "엑셀(xlsx)로 바꿔야", "CSV 대신 parquet으로",
# "export it as Excel" (`=xlsx`, `=parquet`: as a format setting holds them in
# code, `EXPORT_FORMAT = "parquet"`). Not the format refused ("CSV로 바꾸면 안
# 됩니다", "not to CSV"), nor one named without "으로" or "to/as" ("CSV가
# 아니라", "instead of CSV").
_FILE_FORMAT = r"(csv|tsv|xlsx|excel|엑셀|parquet|jsonl|ndjson|json|pdf|xml|avro)"
_FORMAT_ASKED = re.compile(
    r"(?<![\w가-힣])" + _FILE_FORMAT + r"\)?\s*(?:(?:파일|형식|포맷)\s*)?(?:으로|로)(?![가-힣])"
    r"(?!\s*[가-힣]*(?:지\s*(?:말|마|않)|면\s*안))"
    r"|(?<!not\s)(?<!n't\s)(?<!never\s)\b(?:to|as|in|into)\s+(?:an?\s+)?" + _FILE_FORMAT
    + r"\b", re.I)
_FORMAT_HINT = re.compile(r"csv|tsv|xlsx|excel|엑셀|parquet|json|pdf|xml|avro", re.I)
# (Only of a file: "parse the body as JSON", "log it as JSON" ask no format.)
_FILE_WORDS = re.compile(r"export|download|file|format|report|내보내|다운로드|파일|형식|포맷|리포트|보고서",
                         re.I)
FILE_FORMATS = frozenset({"=csv", "=tsv", "=xlsx", "=parquet", "=jsonl", "=ndjson", "=json", "=pdf",
                          "=xml", "=avro"})


def file_formats(clause: str) -> list[tuple[int, str]]:
    """(where, format) of each file format asked in words."""
    if not _FORMAT_HINT.search(clause) or not _FILE_WORDS.search(clause):
        return []  # (most clauses: one quick look)
    out = []
    for m in _FORMAT_ASKED.finditer(clause):
        said = (m.group(1) or m.group(2)).lower()
        out.append((m.start(), "=" + ("xlsx" if said in ("excel", "엑셀") else said)))
    return out


# A command-line flag with its number, in any code span: `--splits 8`,
# `--splits 2 --group 1`, `--workers=4` (the value of a setting `splits`).
FLAG = re.compile(r"--([a-z][a-z0-9_-]*)(?:\s+|=)(\d+(?:\.\d+)?)(?![\w.])")


def flags(clause: str) -> list[tuple[int, str, str]]:
    """(where, value, flag name) of each numbered flag in the clause's code."""
    if "--" not in clause:
        return []  # (most clauses: one quick look)
    out = []
    for span in CODE.finditer(clause):
        # (Of the command the span runs: `gunicorn … --workers 4` and `uvicorn …
        # --workers 1` are two processes' settings.)
        first = span.group(1).split(maxsplit=1)[0] if span.group(1).strip() else ""
        command = "" if first.startswith("-") else re.sub(r"\W", "", first.lower()) + "_"
        out += [(span.start() + m.start(), m.group(2), command + m.group(1).replace("-", "_"))
                for m in FLAG.finditer(span.group(0))]
    return out


# Where a name is asked to live: "`shared/pdf/renderer.py`로 옮겨", "move it
# back to `billing/invoice_pdf.py`" (`=at:billing/invoice_pdf.py`). Two places
# asked for one function are two values of one setting.
# (`public/locales/{lng}/{ns}.json`: a pattern of places is a place.)
# ("S3 (`s3://acme-reports/monthly/`)에 올리고", "`/mnt/secure-reports` 에만
# 저장하도록", "upload them to `s3://…`": where files are asked to be kept.)
_PLACE = r"`((?:[a-z][a-z0-9]{1,5}://)?[\w.{}-]*/[\w./{}-]*|[\w-]+\.[a-z]{1,4})`"
_DESTINATION = re.compile(
    _PLACE + r"\s*(?:으로|로)\s*(?:다시\s*)?(?:옮기|옮겨|이동|분리|빼|나누|나눠)"
    r"|" + _PLACE + r"\)?\s*(?:에만|에)\s*(?:올리|올려|저장하|저장해|보관하|보관해|업로드)"
    r"|\b(?:store|save|upload|archive)\s+(?:\w+\s+){0,3}?(?:only\s+)?(?:to|in|into|under|on)\s+" + _PLACE
    + r"|\b(?:move|put)\b[^.;\n`]{0,30}(?:`[^`\n]+`[^.;\n`]{0,20})?"
    r"\b(?:back\s+)?(?:to|into|under)\s+" + _PLACE,
    re.I,
)


def assignments(clause: str) -> list[tuple[int, str, str]]:
    """(where, setting as written, literal) of each "`name=value`로 …" in the clause."""
    return [(m.start(), m.group(1), m.group(2).strip().strip("\"'").lower())
            for m in _ASSIGNED.finditer(clause)]


def versions(clause: str) -> list[tuple[int, str, str | None]]:
    """(where, stored value, package) of each version asked: `>=2.32.0ver`,
    `2.31.0ver`; the package when the request names it ("pin `faiss-cpu==1.8.0`",
    "pin faiss-cpu to 1.7.4"), else None (the setting named before it)."""
    return [(m.start(), _version_value(m), (m.group("pinned") or m.group("required") or "").lower()
             or None) for m in _VERSION.finditer(clause)]


# A language asked for in words: "기본 로케일은 한국어로", "default to English".
_LANGUAGE = re.compile(
    r"(한국어|영어|일본어|중국어)\s*(?:로|으로)(?![가-힣])"
    r"|\b(?:to|in)\s+(korean|english|japanese|chinese)\b",
    re.I,
)
_LANGUAGES = {"한국어": "ko", "korean": "ko", "영어": "en", "english": "en", "일본어": "ja",
              "japanese": "ja", "중국어": "zh", "chinese": "zh"}


def languages(clause: str) -> list[tuple[int, str]]:
    """(where, stored value) of each language asked in words: `=ko`, `=en`
    (as a locale setting's value `ko` is stored)."""
    return [(m.start(), "=" + _LANGUAGES[(m.group(1) or m.group(2)).lower()])
            for m in _LANGUAGE.finditer(clause)]


# A zone asked as whose it is, with the name that holds it: "in the
# recipient's timezone (`booking.customer.tz`)", "수신자 시간대(`user.tz`)로".
_ZONE_OF = re.compile(
    r"\b(?:in|to|use)\s+(?:the\s+)?([\w-]+)(?:'s|s')\s+(?:time\s*zone|zone)\s*\(?`[\w.]{1,60}`"
    r"|([가-힣]+?)(?:의)?\s*(?:시간대|타임존)\s*\(?`[\w.]{1,60}`\)?\s*(?:기준|으로|로(?![가-힣]))", re.I)
# Whose zone, one word for each person: the zone a name holds is theirs.
_WHOSE = {"recipient": "customer", "customer": "customer", "user": "customer", "patient": "customer",
          "수신자": "customer", "고객": "customer", "사용자": "customer", "organiser": "provider",
          "organizer": "provider", "provider": "provider", "clinic": "provider",
          "주최자": "provider", "병원": "provider"}


def zones(clause: str) -> list[tuple[int, str]]:
    """(where, stored value) of each time zone asked: `=tz:utc`, `=tz:asia/seoul`,
    `=tz:of:customer` (whose zone, as a name in code holds it)."""
    out = [(m.start(), "=" + _zone(m)) for m in _ZONE.finditer(clause)]
    if "`" in clause:
        out += [(m.start(), "=tz:of:" + _WHOSE.get(who, who))
                for m in _ZONE_OF.finditer(clause)
                for who in [(m.group(1) or m.group(2)).lower()]]
    return out


def destinations(clause: str) -> list[tuple[int, str]]:
    """(where, stored value) of each place a name is asked moved to:
    `=at:shared/pdf/renderer.py`."""
    # (Where the place stands: the name moved is the one named before it.)
    out = []
    for m in _DESTINATION.finditer(clause):
        group = next(i for i in range(1, 5) if m.group(i))
        out.append((m.start(group), "=at:" + m.group(group).lower().rstrip("/")))
    return out


def is_version(literal: str) -> bool:
    """A literal that is a version of three parts: `20.11.1`, `v2.31.0`."""
    return bool(_A_VERSION.fullmatch(literal))


# "restrict `allow_origins` to an explicit list", "와일드카드 패턴을 두면 안
# 됩니다": anything but the wildcard (`!=*@allow_origins`), which reverses a
# request for `*` on the same setting.
_EXPLICIT_ONLY = re.compile(
    r"\bexplicit\s+(?:allow-?)?list|명시적으로\s*나열|명시(?:적(?:인)?)?\s*목록"
    r"|와일드카드[^.;\n]{0,20}?(?:안\s*됩|금지|쓰지\s*말|두지\s*말)|\bno\s+wildcards?\b"
    # "화이트리스트에 있는 origin만 반사하도록", "only origins on the allowlist".
    r"|(?:화이트\s*리스트|허용\s*목록)에\s*(?:있는|등록된|포함된)\s*\S{1,12}만"
    r"|\bonly\s+(?:the\s+)?(?:origins?|domains?|hosts?)\s+(?:in|on|from)\s+(?:the\s+|our\s+)?(?:allow-?list|whitelist)"
    r"|\bwildcards?\b[^.;\n]{0,20}?\b(?:not\s+allowed|forbidden)"
    # "`CORS_ALLOWED_ORIGINS` must not default to `*`"
    r"|\b(?:must|should)\s*(?:not|n't)\s+(?:default\s+to|be)\s+`\*`",
    re.I,
)
# "keep allowing any origin", "leave the allowed origins wide open", "모든
# 도메인을 허용": the wildcard, asked in words.
_ANY_ORIGIN = re.compile(
    r"\b(?:allow(?:ing|s)?|accept(?:ing|s)?)\s+(?:any|all|every)\s+(?:\w+\s+)?origins?\b"
    r"|\borigins?\b[^.;\n`]{0,20}\bwide\s+open\b"
    r"|모든\s*(?:origin|오리진|도메인|출처)(?:을|를|에서)?\s*(?:다\s*)?(?:[가-힣]{1,6}\s*)?(?:허용|열어)"
    # "출처 제한을 없애고", "drop the origin restriction": back to any origin.
    r"|(?:origin|오리진|도메인|출처)\s*제한(?:을|은)?\s*(?:없애|풀어|풀|해제|제거)"
    r"|\b(?:remove|drop|lift)\s+the\s+origin\s+(?:restriction|allow-?list|whitelist)s?\b",
    re.I,
)


def wildcards(clause: str) -> list[tuple[int, str]]:
    """(where, stored value) of the wildcard refused ("an explicit list only":
    `!=*`) or asked in words ("keep allowing any origin": `=*`)."""
    return ([(m.start(), "!=*") for m in _EXPLICIT_ONLY.finditer(clause)]
            + [(m.start(), "=*") for m in _ANY_ORIGIN.finditer(clause)])


# A name asked to become another: "`darkMode` 플래그 키를 `FF_DARK_MODE`로
# 바꿔", "rename `darkMode` to `FF_DARK_MODE`": the new name is the old one's
# value (`=ff_dark_mode@darkmode`), so two reviewers naming two new names for
# it ask two values.
_RENAME = re.compile(
    r"`([A-Za-z_][\w.-]{0,60})`(?:\s*[가-힣]{1,6}){0,2}\s*(?:을|를)\s*`([A-Za-z_][\w.-]{0,60})`\s*(?:으로|로)\s*"
    r"(?:바꿔|바꾸|변경|이름을\s*바꿔)" + NOT_DONE_KO
    + r"|\brename\s+(?:the\s+)?`([A-Za-z_][\w.-]{0,60})`(?:\s+[a-z]+)?\s+to\s+`([A-Za-z_][\w.-]{0,60})`"
    # "`darkMode` should be renamed to `FF_DARK_MODE`"
    r"|`([A-Za-z_][\w.-]{0,60})`(?:\s+[a-z]+)?\s+(?:should|must|needs\s+to|has\s+to)\s+be\s+renamed\s+to\s+`([A-Za-z_][\w.-]{0,60})`"
    # "`darkMode` 플래그는 `FF_DARK_MODE`로 이름을 바꿔"
    r"|`([A-Za-z_][\w.-]{0,60})`(?:\s*[가-힣]{1,6}){0,2}\s*(?:은|는)\s*`([A-Za-z_][\w.-]{0,60})`\s*(?:으로|로)\s*이름을\s*(?:바꿔|바꾸|변경)" + NOT_DONE_KO,
    re.I,
)


def renames(clause: str) -> list[tuple[int, str, str]]:
    """(where, stored value, old name) of each name asked to become another."""
    out: list[tuple[int, str, str]] = []
    for m in _RENAME.finditer(clause):
        old_name, new_name = (g for g in m.groups() if g)
        out.append((m.start(), "=" + new_name.strip().lower(), old_name.strip().lower()))
    return out


# A timestamp format asked for a field: "an ISO 8601 string", "RFC 3339",
# "Unix epoch milliseconds", "epoch 밀리초 정수": two formats of one field are
# two values of it (`=fmt:iso8601`, `=fmt:epoch_ms`, `=fmt:epoch_s`).
_FORMAT = re.compile(
    r"\bISO[- ]?8601\b|\bRFC[- ]?3339\b|\bISO\s+(?:strings?|format|timestamps?)\b|\bISO\s*(?:문자열|형식|포맷)"
    r"|(?P<ms>\b(?:unix\s+)?epoch\s*(?:ms|millis(?:econds)?|밀리초)|\bmilliseconds\s+since\s+(?:the\s+)?epoch\b"
    r"|에포크\s*밀리초|유닉스\s*밀리초)"
    r"|\b(?:unix\s+)?epoch(?:\s+seconds?)?\b|\bunix\s+(?:timestamps?|time|seconds)\b|에포크|유닉스\s*(?:타임스탬프|시간|초)",
    re.I,
)


def formats(clause: str) -> list[tuple[int, str]]:
    """(where, stored value) of each timestamp format asked."""
    out: list[tuple[int, str]] = []
    for m in _FORMAT.finditer(clause):
        said = m.group(0).lower()
        kind = ("iso8601" if "iso" in said or "3339" in said
                else "epoch_ms" if m.group("ms") else "epoch_s")
        out.append((m.start(), "=fmt:" + kind))
    return out


# Caching asked in words: "browsers should check back with our server every
# time", "매번 서버에 재검증" (`no-cache`); "must not be kept in browser caches at
# all", "브라우저 캐시에 저장하지 않도록" (`no-store`). Given to `Cache-Control`.
_NO_CACHE_WORDS = re.compile(
    r"\b(?:check\s+back\s+with|revalidate\s+(?:with|against))\s+(?:the\s+|our\s+)?(?:origin|server)\s+"
    r"(?:every\s+time|each\s+time|on\s+every\s+request)"
    r"|\brevalidated?\s+(?:on\s+)?(?:every|each)\s+(?:request|time|load)"
    r"|(?:매번|요청마다)\s*(?:서버에\s*)?(?:재검증|다시\s*확인)", re.I)
_NO_STORE_WORDS = re.compile(
    r"\b(?:must|should)\s+(?:not|never)\s+be\s+(?:stored|cached|kept)\s+(?:in|by)\s+(?:any\s+|the\s+)?"
    r"(?:browser\s+|shared\s+)?caches?\s+at\s+all\b"
    r"|(?:브라우저|공유)?\s*캐시에\s*(?:아예\s*)?(?:저장|보관)(?:하지|되지)\s*(?:않|말)", re.I)


_CACHE_HINT = re.compile(r"cach|캐시|check\s+back|revalidat|재검증|다시\s*확인", re.I)


def cache_words(clause: str) -> list[tuple[int, str]]:
    """(where, directive) of each `Cache-Control` directive asked in words."""
    if not _CACHE_HINT.search(clause):
        return []  # (most clauses: one quick look)
    out = [(m.start(), "=no-cache") for m in _NO_CACHE_WORDS.finditer(clause)]
    out += [(m.start(), "=no-store") for m in _NO_STORE_WORDS.finditer(clause)]
    return out
