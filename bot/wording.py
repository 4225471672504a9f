"""The words review text is read with: anchors (paths, `identifiers`,
numbers, commits), stop words and Korean endings, and the vocabulary of each
act (a request, an acknowledgement, a refusal, a reference to an earlier
point, a fix report, a promise, point selectors).

Only patterns and word lists live here; `bot.points`, `bot.findings` and
`bot.topics` read clauses with them and `bot.demands` reads what a point
asks for.
"""

from __future__ import annotations

import re

from bot.alternation import words

# -- anchors -----------------------------------------------------------------
PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.[a-z][a-z0-9]{0,5})(?::(\d+))?\b")
CODE = re.compile(r"`([^`\n]{1,80})`")
IDENT = re.compile(r"\b([a-z_][a-z0-9_]*\(\)|[a-z]+_[a-z0-9_]+|[a-z]+[A-Z][A-Za-z0-9]+)")
# (A Korean particle may follow: "429가", "5000건", "3회로".)
NUMBER = re.compile(r"(?<![\w.-])(\d+(?:\.\d+)?)\s*(k|m|mb|gb|kb|ms|s|초|분|시간|%|개|건|회)?(?![A-Za-z0-9_])", re.I)
# (Not `\b` after the digits: "F1과", "F2는" name F1 and F2, and Hangul is a word character.)
FINDING_ID = re.compile(r"(?<![\w#])(F\d{1,3}|#\d{1,6}|[A-Z]{2,6}-\d{1,5})(?![0-9A-Za-z_])")
LABEL = re.compile(r"(?<![\w#])F\d{1,3}(?![0-9A-Za-z_])")  # a finding's label: F1, F12
URL = re.compile(r"https?://[^\s`]+")  # (not the backtick closing its code span)

# Extensions of the files a finding can be about (not `t3.large`, `img.draft`).
FILE_EXTENSIONS = frozenset(
    "py pyi js jsx ts tsx mjs go rs java kt kts rb php cs c cc cpp h hpp swift sql yaml yml json "
    "toml ini cfg conf env properties xml html css scss sh tf tfvars gradle proto graphql vue "
    "svelte md txt lock dockerfile".split())


def is_file(name: str) -> bool:
    """`session.py`, `prod.env`: a file; `limits.memory`, `t3.large`: a name."""
    return name.rsplit(".", 1)[-1].lower() in FILE_EXTENSIONS

# -- words -------------------------------------------------------------------
WORD = re.compile(r"[a-z][a-z0-9_]*|[\uac00-\ud7a3]+")
KO_SUFFIXES = sorted(
    """했습니다 됐습니다 었습니다 았습니다 습니다 입니다 합니다 됩니다 있습니다 없습니다 니다
    에서는 에서 으로는 으로 에게 까지 부터 이라는 라는 이라고 라고 하는 되는 되지 하지 해야 되어야
    이었 였 였다 이다 하다 되다 어요 아요 해요 세요 지만 는데 은데 하고 이고 이며 하여 해서
    하게 되어 돼요 예요 이에요 인데 이나 처럼 보다 마다 만큼 하면 되면 으면 면 도록 고요 네요
    했고 했는데 됐고 이 가 을 를 은 는 의 에 로 도 만 와 과 요 다 고 며 게 지""".split(),
    key=len,
    reverse=True,
)
STOP_EN = set(
    """the a an is are was were be been to of in on at and or it its this that these those for
    with as by from into than then so if but not no yes i we you he she they them our your my me
    us there here have has had do does did can could would should will shall may might must
    also just only still again very more less some any all both each other same one two first
    second third last previous point points item items review comment comments please thanks
    thank now which what when where why how who about above below after before because while
    done lgtm approved step_done task_done done_with_concerns blocked needs_context escalate
    remain remains open issue issues said mentioned time file line""".split()
)
STOP_KO = set(
    """이 그 저 것 수 등 및 또 또한 그리고 하지만 그러나 다만 아직 여전히 지금 현재 이번 지난번
    지난 이전 앞서 위 아래 부분 점 사항 내용 확인 경우 때 중 더 좀 잘 다시 모두 두 가지 첫 번째
    번 말씀 말씀드린 지적 지적한 리뷰 검토 해당 관련 문제 부탁 감사 있 없 하 되 합 됩""".split()
)

# Bigrams that Korean endings and filler leave behind: grammar, not content.
KO_GRAMMAR = set(
    """주세 주시 합니 습니 같습 있어 않아 아서 어서 하기 것이 겠다 보다 하는 되는 이라 에서 으로 있습
    없습 입니 됩니 니다 해주 드립 드리 겠습 였습 었습 았습 했습 하겠 하였 해야 되어 돼서 이고 하고
    것으 것을 것은 것도 수있 수도 있는 없는 하면 되면 그래 그리 다만 혹시 정말 조금 부분 경우 관련
    해당 상황 생각 의견 부탁 감사 죄송 말씀 확인 검토 다시 한번 번더 같은 이런 그런 저런 어떤 때문
    문에 위해 통해 대해 대한 에게 까지 부터 처럼 보입 보이 이는 하여 해서 인데 는데 지만 으나""".split()
)

# Concepts: the same thing said in either language or with a common synonym.
# Korean keys match inside a word (Korean glues particles on), English keys
# match a whole (lightly stemmed) word.
_CONCEPTS: dict[str, tuple[str, ...]] = {
    "cache": ("cache", "caching", "memoize", "memoized", "캐시", "캐싱"),
    "ttl": ("ttl", "expiry", "expire", "expiration", "만료", "유지 시간", "유지시간"),
    "test": ("test", "tests", "testing", "테스트", "spec"),
    "timeout": ("timeout", "타임아웃", "시간초과", "유휴 만료"),
    "idle": ("idle", "inactivity", "유휴"),
    "retry": ("retry", "retries", "autoretry", "resend", "redeliver", "redelivery", "재시도", "재전송", "재발송"),
    "log": ("log", "logs", "logging", "logger", "로그", "로깅"),
    "token": ("token", "토큰"),
    "session": ("session", "세션"),
    "cookie": ("cookie", "cookies", "쿠키"),
    # (What `SameSite` limits: a cookie sent from another site.)
    "crosssite": ("samesite", "사이트 간", "사이트간", "교차 사이트", "크로스 사이트"),
    "index": ("index", "인덱스"),
    "migration": ("migration", "migrate", "마이그레이션"),
    "lock": ("lock", "locking", "mutex", "락", "잠금"),
    "leak": ("leak", "leaks", "leaking", "release", "released", "누수", "해제"),
    "connection": ("connection", "conn", "handle", "커넥션", "연결"),
    "close": ("close", "closed", "closing", "닫"),
    # (Not "verified": the word a reviewer confirms a fix with.)
    "validate": ("validate", "validation", "validated", "check", "verify", "verification",
                 "검증", "유효성", "체크"),
    "serialize": ("serialize", "serialized", "serializes", "serialization", "직렬화"),
    "body": ("body", "payload", "본문", "페이로드"),
    "raw": ("raw", "원본"),
    "whitespace": ("whitespace", "공백"),
    "error": ("error", "exception", "raise", "raises", "에러", "오류", "예외"),
    "null": ("null", "none", "nil", "널"),
    "permission": ("permission", "permissions", "authorization", "authz", "권한", "인가"),
    "auth": ("auth", "authentication", "login", "인증", "로그인"),
    "password": ("password", "비밀번호", "패스워드"),
    "hash": ("hash", "hashing", "해시"),
    "encrypt": ("encrypt", "encryption", "암호화"),
    "secret": ("secret", "secrets", "credential", "credentials", "시크릿", "자격"),
    "query": ("query", "queries", "sql", "쿼리"),
    "transaction": ("transaction", "atomic", "atomically", "트랜잭션", "원자적"),
    "race": ("race", "concurrent", "concurrency", "parallel", "simultaneous", "동시성", "동시에", "경쟁"),
    "memory": ("memory", "ram", "메모리"),
    "limit": ("limit", "cap", "maximum", "max", "제한", "상한", "한도"),
    "rate": ("rate", "throttle", "throttling", "속도", "분당", "초당", "시간당"),
    "batch": ("batch", "배치"),
    # (Work cut into parts run apart: `--splits 4`, "4개 shard", "여덟 갈래로 나눠".)
    "split": ("split", "splits", "shard", "shards", "sharding", "샤드", "분할", "나눠", "나누"),
    "size": ("size", "크기", "사이즈"),
    # (Korean only with what follows it: "풀" alone is also "pull" and "solve".)
    "pool": ("pool", "pooling", "풀 크기", "풀 사이즈", "커넥션 풀", "연결 풀", "풀을", "풀의"),
    "header": ("header", "headers", "헤더"),
    "response": ("response", "응답"),
    "request": ("request", "요청"),
    "route": ("route", "endpoint", "라우트", "엔드포인트"),
    "debug": ("debug", "디버그"),
    "region": ("region", "regions", "리전"),
    "origin": ("origin", "origins", "오리진", "출처"),
    "config": ("config", "configuration", "setting", "settings", "설정"),
    "env": ("env", "environment", "환경변수", "환경"),
    "doc": ("doc", "docs", "documentation", "docstring", "readme", "문서"),
    "type": ("type", "types", "typing", "타입"),
    "rounding": ("round", "rounding", "반올림"),
    "currency": ("currency", "decimal", "통화", "소수"),
    "date": ("date", "time", "timezone", "tz", "utc", "날짜", "시간대", "타임존", "표준시", "세계시"),
    "user": ("user", "users", "사용자", "유저"),
    "input": ("input", "입력"),
    "escape": ("escape", "escaping", "sanitize", "sanitise", "이스케이프"),
    "injection": ("injection", "인젝션", "주입"),
    "duplicate": ("duplicate", "duplicated", "dedupe", "중복"),
    "order": ("order", "ordering", "sort", "sorted", "순서", "정렬"),
    "pagination": ("pagination", "paging", "cursor", "커서"),
    "delete": ("delete", "deletion", "remove", "removed", "삭제", "제거"),
    "missing": ("missing", "absent", "lack", "lacks", "누락", "빠져", "빠진"),
    "translation": ("translation", "translate", "i18n", "locale", "번역", "다국어", "로케일"),
    "formatter": ("formatter", "formatters", "포매터", "포맷터"),
    "message": ("message", "messages", "메시지"),
    "file": ("file", "files", "파일"),
    "path": ("path", "경로"),
    "webhook": ("webhook", "웹훅"),
    "signature": ("signature", "서명"),
    "schema": ("schema", "스키마"),
    "column": ("column", "컬럼", "열"),
    "table": ("table", "테이블"),
    "default": ("default", "기본값", "디폴트", "기본 로케일", "기본 언어", "기본 설정", "기본 통화",
                "기본 타임존"),
    "fallback": ("fallback", "폴백"),
    "metric": ("metric", "metrics", "메트릭", "지표"),
    # (Where a server takes connections: `METRICS_BIND`, "listen on loopback only".)
    "listen": ("bind", "listen", "listens", "listening", "바인드", "바인딩", "리슨"),
    "coverage": ("coverage", "커버리지"),
    "flaky": ("flaky", "flakiness", "불안정", "간헐"),
    "performance": ("performance", "slow", "latency", "성능", "느리", "지연"),
    "security": ("security", "보안"),
    "upload": ("upload", "업로드"),
    "money": ("money", "amount", "amounts", "금액"),
    "compression": ("compression", "compress", "compressed", "gzip", "brotli", "압축"),
    "download": ("download", "다운로드"),
    "export": ("export", "exports", "내보내기", "내보내", "익스포트"),
    # (A file's format, `EXPORT_FORMAT`; not a formatter.)
    "format": ("format", "formats", "형식", "포맷"),
    "email": ("email", "mail", "이메일", "메일"),
    "notification": ("notification", "alert", "알림"),
    "queue": ("queue", "큐"),
    "worker": ("worker", "workers", "워커"),
    "thread": ("thread", "스레드"),
    "async": ("async", "await", "비동기"),
    "blocking": ("blocking", "blocks", "block", "블로킹"),
    "key": ("key", "keys", "키"),
    "tenant": ("tenant", "테넌트"),
    "invalidate": ("invalidate", "invalidation", "무효화"),
    "status_code": ("400", "401", "403", "404", "409", "413", "422", "429", "500", "503"),
}
# Words that hold a Korean concept key and mean something else: a catalog, a
# program, a blog are no log.
KO_CONCEPT_EXCEPT: dict[str, tuple[str, ...]] = {
    "로그": ("카탈로그", "블로그", "프로그", "다이얼로그", "프롤로그", "에필로그"),
    "포맷": ("포맷터",),
}
EN_CONCEPT: dict[str, str] = {}
KO_CONCEPT: list[tuple[str, str]] = []
for _concept, _words in _CONCEPTS.items():
    for _w in _words:
        if "\uac00" <= _w[0] <= "\ud7a3":
            KO_CONCEPT.append((_w, _concept))
        else:
            EN_CONCEPT[_w] = _concept

# Libraries that do one job, of which a codebase uses one: two reviewers
# asking two of them for one client ask two things of it.
LIBRARY_KINDS: tuple[frozenset[str], ...] = (
    frozenset({"requests", "httpx", "aiohttp", "urllib3"}),  # HTTP clients
    # (Not `json` or `logging`: "`logging`을 추가해" asks for logs, not the module.)
    frozenset({"orjson", "ujson", "simplejson", "msgspec"}),  # JSON
    frozenset({"structlog", "loguru"}),
    frozenset({"psycopg2", "psycopg", "asyncpg", "aiopg"}),  # PostgreSQL drivers
    frozenset({"celery", "rq", "dramatiq", "arq", "huey"}),  # task queues
    frozenset({"npm", "yarn", "pnpm"}),
    frozenset({"pip", "poetry", "uv", "pdm", "pipenv"}),
    frozenset({"moment", "dayjs", "luxon", "date-fns"}),
    frozenset({"jest", "vitest", "mocha"}),
    frozenset({"axios", "ky", "got", "superagent"}),
    frozenset({"pytz", "zoneinfo"}),
)

# -- what a clause does --------------------------------------------------------
# A commit hash: 7-40 hex digits with at least one digit and one letter.
# (The lookaheads look no further than a hash is long: a 30,000-digit line
# must not be scanned again from every digit.)
HASH = r"(?=[0-9a-f]{0,39}\d)(?=[0-9a-f]{0,39}[a-f])[0-9a-f]{7,40}"
# "Fixed" as a verb, not "fixed window", "fixed-size", "fixed rate".
# ("the fixed 30-day divisor", "a fixed list": an adjective, not a fix.)
FIXED_WORD = (r"(?<!\bthe\s)(?<!\ba\s)fixed(?!\s*(?:-|\d|window|size|width|point|rate|cost|number|amount|interval|delay|length"
              r"|price|schedule|minute|bucket|format|set|list|order|timeout)s?\b)")
# Any Korean verb's "must": 바꿔야 합니다, 두어야 합니다, no-store여야 합니다.
MUST_KO_END = r"야\s*(?:합니다|한다|해요|하며|하고)"
MUST_KO = r"[가-힣]" + MUST_KO_END
# The units a value is written with (5MB, 300초, 30s, 90%, 3,000원).
VALUE_UNITS = (r"km|k|kb|mb|gb|ki|mi|gi|kib|mib|gib|ms|s|m|h|d|min|%|초|분|시간|일|개|건|장|매|명|회|시각"
               r"|원|won|krw|달러|usd|eur|엔|jpy")
# "3,000", "1,000,000": one number written in groups of three digits.
DIGIT_GROUPS = re.compile(r"(?<![\d,.])\d{1,3}(?:,\d{3})+(?!\d|[.,]\d)")
# "7_200_000": the same in code (Python, JavaScript, Rust digit separators).
CODE_DIGIT_GROUPS = re.compile(r"(?<![\w.])\d{1,3}(?:_\d{3})+(?![\w.])")


def ungrouped(text: str) -> str:
    """The text with its digit groups joined: "3,000원" reads as "3000원"
    (not as 3 and 000), `7_200_000` as `7200000`."""
    if "_" in text:
        text = CODE_DIGIT_GROUPS.sub(lambda m: m.group(0).replace("_", ""), text)
    if "," not in text:
        return text
    return DIGIT_GROUPS.sub(lambda m: m.group(0).replace(",", ""), text)
# After "now", verbs that report something worse (never a fix or an
# acknowledgement); "this" and "was" are not verbs at all.
WORSE = (r"(?:fails|breaks|crashes|errors|throws|times|raises|leaks|hangs|drops|loses|this|was|has"
         r"|returns\s+(?:500|an?\s+error|nothing|null|none))\b")
# "해당 커밋은 `README.md`만 수정합니다", "That commit only touches the docs":
# a statement whose subject is the owner's commit.
THE_COMMIT = words(r"^\W*(?:(?:해당|이|그|이번)\s*커밋(?:은|는|에서는|에는)|(?:the|that|this|your)\s+commit\b"
                   r"|`?" + HASH + r"`?\s*(?:은|는|에서는|에는|only\b|just\b))", re.I)
NEG_ACK = words(
    r"\bnot\s+(?:approving|approved|ready)|\bcan(?:'t|not)\s+approve|^\W*not\s+yet\b|승인(?:하기|할\s*수)?\s*(?:어렵|못|보류|없)|"
    r"\bnot\s+(?:yet\s+|been\s+|really\s+)?(?:fixed|addressed|resolved|done|changed|handled)|미해결|미반영|미조치"
    r"|\b(?:isn't|wasn't|hasn't been|haven't been)\s+(?:fixed|addressed|resolved|changed|handled)"
    r"|\bnothing\s+(?:has\s+)?changed|\bunresolved|\bunaddressed|\bno\s+change"
    r"|\b(?:nothing|none)\b[^.;]{0,60}?\b(?:has|have|was|were)\s+(?:yet\s+)?been\s+(?:addressed|fixed|resolved|changed|handled)"
    r"|\bneither\b[^.;]{0,40}?\b(?:is|are|was|were|has\s+been)\s+(?:addressed|fixed|resolved|handled)"
    r"|(?:반영|해결|수정|처리|변경|개선)(?:이|가|은|는)?\s*(?:되지|안\s*되|되어\s*있지|하지)\s*않"
    r"|(?:반영|해결|수정|처리|변경)\s*(?:안|전)|달라진\s*(?:것|게|점)?이?\s*없"
    # "말씀하신 변경이 실제로 들어가 있지 않습니다", "the change isn't actually in it":
    # the fix reported is not there.
    r"|(?:변경|수정|커밋)(?:\s*사항)?(?:이|은|도)?\s*(?:실제로\s*)?(?:들어가|포함되어|올라가)\s*있지\s*않"
    r"|\b(?:the\s+)?(?:change|changes|fix|fixes)\s+(?:isn't|aren't|is\s+not|are\s+not)\s+(?:actually\s+)?(?:in|there|included)\b",
    re.I,
)
# "This closes my earlier comment": the point is settled (an acknowledgement,
# though it names the earlier point as a reference does; not "once …, that
# resolves my concern": `bot.findings` reads what comes before).
CLOSES_POINT = re.compile(
    r"\b(?:this|that|it|which)\s+(?:now\s+)?(?:closes|resolves|settles)(?:\s+out)?\s+(?:F\d{1,3}\b|(?:(?:both|all)\s+(?:of\s+)?)?"
    r"(?:my|the|this|that)\s+(?:earlier\s+|previous\s+|last\s+|original\s+)?(?:comment|point|finding|concern|request|objection)s?\b)",
    re.I)
ACK = words(
    r"\b(?:(?:is|are)\s+(?:fine|good)(?:\s+now\b)?+(?!\s*,?\s*(?:but|except|however))|"
    + FIXED_WORD + r"|addressed|resolved|looks?\s+(?:good|right|fine|correct)(?!\s*,?\s*(?:but|except|however))"
    r"|confirmed|verified|works\s+now|thanks\s+for\s+(?:fixing|the\s+fix|addressing)|that\s+fixes"
    r"|(?:is|are)\s+(?:now\s+)?(?:handled|covered|gone)|covers\s+it|resolves\s+it"
    # ("The index is used now (`Index Scan using …`)")
    r"|(?:is|are)\s+(?:now\s+used|used\s+now)\b(?!\s*,?\s*(?:but|except|however))"

    # "Cache mount works.", "Healthcheck passes.", "Context is small now.", "Good."
    r"|(?:is|are)\s+(?:small|smaller|fast|faster|fine|correct|right|clean|green|stable|consistent|sorted)\s+now"
    r"\b(?!\s*,?\s*(?:but|except|however)))\b"
    # ("Error code works with the form, thanks.": where it works, then thanks.)
    r"|(?<!only\s)(?<!never\s)(?<!longer\s)(?<!nothing\s)\b(?:works|passes)"
    r"(?:\s+(?:with|in|on|for)\s+(?:the\s+)?(?!only\b)[\w-]+(?:\s+(?!only\b)[\w-]+)?)?"
    r"\W*(?:thanks|thank\s+you)?\W*$|^\W*(?:good|great|nice|perfect)\W*$"
    # "Stable now, thanks.", "Green now."
    r"|^\W*(?:stable|green|correct|consistent|fast|clean|deterministic|idempotent)\s+now\b(?!\s*,?\s*(?:but|except|however))"
    r"|반영(?:된|되었|됐|되어(?!야))|(?:해결|해소)(?:된|되었|됐|되어(?!야))|수정(?:된|되었|됐)|고쳐(?:진|졌)"
    r"|(?:^|\|)\s*확인(?:\s*완료)?\s*[.]?\s*\|?\s*$|확인했(?!는데|더니|습니다만)|확인하였(?!는데|더니|습니다만)|확인됐|확인되었|문제\s*없|괜찮아졌"
    # "마스킹이 올바르게 적용되었습니다", "나머지 배분은 맞게 되었습니다" (not
    # "제대로 적용되지 않았습니다")
    r"|(?:올바르게|정상적으로|제대로|맞게)\s*(?:적용|반영|처리|동작|수정|변경|마스킹|들어갔|들어가\s*있|되었|됐)(?![가-힣]{0,6}\s*(?:지\s*(?:않|못)|안\s|못\s|는지))"
    r"|잘\s*(?:처리|반영|수정)|(?<!그대로 )(?<!그대로)(?<!없이 )통과(?:하|했|합)",  # (not "그대로 통과합니다": the bug passes)
    re.I,
)
WITHDRAW = words(
    r"\bwithdraw|\bretract|\bfair\s+enough|\bfair\s+point(?!\s+to\s+(?:raise|bring|take|discuss))|\byou(?:'re| are)\s+right|\bi\s+(?:stand\s+corrected|accept)"
    r"|\b(?:i'm|i\s+am|i'll|i\s+will|let's|let\s+me|i)\s+(?:also\s+)?drop(?:ping)?\s+(?:this|that|it|my|the)\b(?!\s+(?:\w+\s+)?(?:to|down\s+to|from)\b)"
    # ("Drop it or serve a cached estimate", "Drop the column": asked of the owner.)
    r"|\bdrop(?:ping)?\s+(?:this|that|my|the)\s+(?:\w+\s+)?(?:point|concern|request|objection|comment|nit|suggestion|ask)\b|^\W*dropping\s+(?:this|that|it|my|the)\b|\bnot\s+a\s+blocker\s+(?:any\s*more|anymore)|(?<!not\s)(?<!n't\s)(?<!never\s)(?<!yet\s)\bconvinced(?!\s+(?:yet|otherwise))"
    r"|\b(?:explanation|reasoning|argument|point|that)\s+makes\s+sense(?!\s+to\s+me\s+(?:but|however))(?<!hope\sthat\smakes\ssense)|\bok(?:ay)?\s+to\s+keep|\bfine\s+to\s+keep|\bcan\s+stay|\bno\s+longer\s+(?:a\s+)?(?:concern|issue|needed)"
    r"|철회|납득|수긍|동의합니다|동의하겠|말씀이\s*맞|맞는\s*말씀|일리가|그대로\s*(?:두셔도|두어도|둬도|유지하셔도)"
    r"|취소하겠|거두겠|문제\s*삼지\s*않|넘어가겠|이해했습니다(?!\s*만)",  # ("이해했습니다만, …": but)
    re.I,
)
REFERENCE = words(
    r"\bas\s+(?:i\s+)?(?:said|mentioned|noted|before|previously|above)"
    r"|\b(?:as\s+)?(?:raised|flagged|noted|pointed\s+out|discussed|requested|asked)\s+(?:before|earlier|previously|last\s+time)"
    r"|\b(?:please\s+)?(?:take\s+another\s+look|check\s+(?:it\s+)?again|look\s+again)"
    r"|(?:다시|한\s*번\s*(?:만\s*)?더)\s*(?:한\s*번\s*)?(?:확인|봐|보아|검토|살펴)\s*(?:해\s*)?(?:주|부탁)"
    r"|계속\s*(?:나옵|나오|나타|발생|재현|보입|보이|실패|남아|남습)"
    # "같은 두 테스트가 같은 값으로 실패합니다", "결과는 같습니다", "same result".
    # (The same test failing another way is a new point: "같은 테스트" alone is not here.)
    r"|같은\s*(?:값|결과|결과값)|결과(?:는|가|도)?\s*(?:같|동일|그대로)"
    r"|\bsame\s+(?:result|results|values?|output)\b|\bprevious(?:ly)?\b|\blast\s+(?:review|time|round)"
    # ("as I said earlier", not "whether earlier rows exist")
    r"|\bearlier\b(?!\s+(?:rows?|records?|entries|items|pages?|versions?|data|events?|values?|calls?|runs?|releases?|migrations?|builds?)\b)"
    r"|\bremain(?:s)?\s+(?:open|unaddressed|unresolved|valid|a\s+blocker|outstanding)|(?:동일하게|똑같이|마찬가지로)\s*(?:실패|깨지|깨집|나옵|재현)|결과가\s*(?:같|동일|똑같)|\bstill\b|\bsame\s+(?:issue|problem|points?|concern|error|failure|reason|assertion)|\bfails?\s+the\s+same\s+way"
    r"|\bsame\s+(?:two|three|both|\d)\s+(?:issues|problems|points|concerns|findings)\b"
    r"|\bstands?\b|\bagain\b|\bthe\s+points?\s+above|\bmy\s+(?:earlier|previous|last)"
    r"|앞서|지난번|지난\s*리뷰|이전\s*(?:리뷰|지적|코멘트)|이전에|여전히|아직|그대로\s*남|말씀드린|지적(?:한|드린|했던)"
    r"|동일한\s*(?:문제|지적|이유|에러|오류|메시지|실패)|같은\s*(?:문제|지적|이유|에러|오류|메시지|실패)|위에서|반복|거듭|다시\s*(?:말씀|한\s*번|요청|강조|정리(?:하면|하자면|해\s*보면))|변함(?:이|은)?\s*없"
    r"|그대로(?:입니다|예요|이에요|네요|인\s*것)|여전|재차|\bonce\s+more\b|\bre-?iterat|\bi\s+(?:must\s+|have\s+to\s+)?repeat|\brepeating\s+(?:myself|my)"
    r"|\b(?:view|position|opinion|stance|concern|point)s?\s+(?:(?:has|have)n't|(?:has|have)\s+not|(?:is|are)(?:n't|\s+not)?)\s+(?:changed|unchanged)"
    r"|똑같|마찬가지|\bthe\s+same\s+(?:problem|issue|bug|gap)|\bunchanged\b|\bhasn't\s+changed|\bstill\s+(?:think|believe|stand|hold)|입장(?:은|이)?\s*(?:그대로|같습|변함)|의견(?:은|이)?\s*(?:그대로|같습)"
    # "그래도 장당 4.2MB는 받아들이기 어렵습니다", "Even so, …": insisting after an answer.
    r"|^\s*(?:그래도|그럼에도|그렇더라도)\s|^\s*(?:even\s+so|nonetheless|nevertheless)\b"
    # "제 의견은 바뀌지 않았습니다": my view has not changed.
    r"|(?:의견|입장|생각|판단)(?:은|이|도)?\s*(?:바뀌|변하|달라지)지\s*않"
    # "…요청은 유지합니다", "I maintain my request": the point stands, said again.
    r"|(?:요청|지적|의견|입장|항목|가지|건)(?:은|을|는)?\s*(?:모두\s*|다\s*|전부\s*)?유지(?:합니다|하겠|드립)"
    # "2번은 유지합니다": the point by its number.
    r"|^\s*\d+\s*번(?:은|는)\s*(?:그대로\s*)?유지(?:합니다|하겠|드립)"
    r"|\bi\s+(?:maintain|keep)\s+(?:my|the|this)\s+(?:request|point|objection|concern)"
    # "같은 `TimeoutError: …`로 떨어집니다", "fails with the same `KeyError`"
    # (not "raise the same `ValueError` for negative amounts too": a request).
    r"|(?:같은|동일한)\s*`[^`\n]{0,80}?(?:Error|Exception|Failure)[^`\n]{0,80}`\s*(?:으로|로|이|가|와|과)?\s*(?:실패|떨어|나옵|나와|발생|재현|깨)"
    r"|\b(?:fails?|failing|failed|crash(?:es|ed)?|dies|breaks)\s+(?:again\s+)?with\s+the\s+same\s+`[^`\n]{0,80}?(?:Error|Exception|Failure)",
    re.I,
)
# "Verified `9c3e77a`: no email in the payload", "Confirmed: no retries on
# 4xx": what follows the colon is what was checked, not a request.
VERIFIED_LEAD = words(r"^\W*(?:verified|confirmed|checked)\b[^:.;\n]{0,40}:", re.I)
# A failure said in so many words ("fails on Python 3.12", "실패합니다").
FAILING = words(r"\bfail(?:s|ed|ing|ure)?\b|\berrors?\b|\bbroken\b|\bcrash|실패|에러|오류|깨지|깨집", re.I)
# "답변 확인했습니다", "Thanks for the explanation": the reviewer read the
# owner's answer; that acknowledges no fix.
READ_REPLY = words(
    r"(?:답변|답글|회신|설명|말씀|코멘트)(?:은|을|는|도)?\s*(?:잘\s*)?(?:확인|읽)"
    r"|\bthanks\s+for\s+(?:the|your)\s+(?:reply|explanation|answer|context)\b"
    r"|\bi(?:'ve|\s+have)?\s+read\s+(?:your|the)\s+(?:reply|explanation|answer)\b",
    re.I,
)
# "I withdraw my previous comment", "앞의 의견은 철회합니다": about an earlier message.
EARLIER_COMMENT = words(
    r"\b(?:previous|earlier|above|last)\s+(?:comment|point|request|message|ask|remark)"
    r"|(?:앞|위|이전|방금)(?:의|에서|서)?\s*(?:제\s*)?(?:의견|요청|코멘트|지적|말씀)",
    re.I,
)
# "For reference, here's what `handle_event()` looks like (trimmed):", "참고로
# 재현 방법은 처음과 같습니다: …": context, not a point, whatever it names
# (unless it asks in so many words: `ASKS`).
LEAD_IN = words(r"^\W*(?:for\s+(?:reference|context)|fyi|참고로|참고용으로)\b", re.I)
# A heading over what the reviewer checked and found good ("Things I verified
# and am happy with:", "문제없는 부분:"): the bullets under it are no findings;
# they are read with `CHECKED_MARK` before them, as is a line that is all one
# aside in parentheses and asks nothing (`ASKS`).
GOOD_HEADING = words(
    r"\b(?:look(?:s|ed)?\s+(?:fine|good|right|correct)|happy\s+with|(?:is|are)\s+fine|no\s+issues?|what\s+works"
    r"|(?:the\s+)?good\s+(?:parts|bits|things))\b|\bverified\s*:|\blgtm\b"
    r"|문제\s*없|좋(?:은|았던)\s*(?:점|부분)|잘\s*된\s*(?:점|부분)|확인\s*완료|괜찮은\s*(?:점|부분)",
    re.I,
)
ISSUES_HEADING = re.compile(r"\b(?:issues?|problems?|concerns?|blockers?|but|except)\b|문제(?:가|점)|지적|다만|우려", re.I)
CHECKED_MARK = "✓ "
# Asking in so many words: "please", "must", "주세요", any verb's "-어야 합니다"
# (바꿔야, 만들어 두어야, no-store여야). `bot.demands.asks` adds imperatives.
ASKS = re.compile(
    r"주세요|주십시오|하십시오|주시(?:고|기|면)|주셔야|바랍니다|해야|하세요|필요합니다|" + MUST_KO + r"|좋겠습니다"
    # Asking not to: "추가하지 마세요", "넣으면 안 됩니다".
    r"|지\s*마(?:세요|십시오)|[가-힣](?:면|서는)\s*안\s*(?:됩니다|돼요|됩니다만)"
    r"|\b(?:must|should|please|needs?\s+to|has\s+to|have\s+to)\b",
    re.I,
)
# Words an acknowledgement says besides what it acknowledges.
ACK_WORDS = frozenset(
    "반영 수정 확인 변경 부분 사항 내용 적용 해결 완료 처리 감사 감사합 고맙 이번 이제 모두 전부 "
    "thanks thank fix fixed change changes update updated now all both looks good confirm".split())
# "Unrelated: …", "별개로 …": an owner's point about other work, not an
# answer to an open finding.
UNRELATED = words(
    r"^\W*(?:unrelated(?:\s+to\s+the\s+review)?|separately|on\s+an\s+unrelated\s+note|side\s+note"
    r"|also\s+unrelated|as\s+an?\s+(?:extra|bonus)|bonus"
    # "While I was in there I added WebP output": work beside the review.
    r"|while\s+i\s+was\s+(?:in\s+there|at\s+it|there))\b|^\W*(?:별개로|별도로|이와\s*별개로|리뷰와\s*별개로|참고로"
    # "추가 개선으로, … 돌아가도록 했습니다": work beyond what was asked.
    r"|추가\s*개선(?:으로|으로는|사항으로|:)|덧붙여)",
    re.I,
)
# "That is not what I asked": a rebuttal of the owner's answer, not a new point.
REBUTTAL = words(
    r"\bnot\s+what\s+i\s+(?:asked|meant|requested)|\bi\s+(?:can't|cannot|couldn't)\s+find\s+(?:that|this|any|the)\s+(?:decision|agreement|requirement|sign-?off|approval|record)"
    r"|(?:그런|그|해당)\s*(?:결정|합의|요구사항|승인)(?:을|를|은|이)?\s*(?:찾을\s*수\s*없|찾지\s*못|확인할\s*수\s*없)|\bdoes(?:n't|\s+not)\s+(?:address|fix|solve|change)\s+(?:it|this|that|the)"
    r"|\bmisses\s+the\s+point|\bbeside\s+the\s+point|\bthat'?s\s+not\s+the\s+(?:issue|problem|point)"
    r"|요청(?:드린|한|했던)\s*(?:것|내용|부분)이\s*아닙|말씀드린\s*(?:것|내용)이\s*아닙|지적(?:한|드린)\s*(?:것|내용)이\s*아닙"
    r"|해결(?:되지|이\s*안)|핵심이\s*아닙|본질(?:은|이)|만으로는\s*(?:부족|안\s*됩|해결)|\b(?:is|isn't|is\s+not)\s+(?:not\s+)?enough"
    # Against the owner's reason: "클라이언트 측 검사는 … 근거가 될 수 없습니다".
    r"|(?:근거|이유|사유)가?\s*(?:될|되지)\s*(?:수\s*)?(?:없|않|못)|\bis\s+not\s+a\s+(?:valid\s+|good\s+)?(?:reason|argument|justification)\b|\bdoes(?:n't|\s+not)\s+justify\b"
    r"|\bnot\s+sufficient|\binsufficient|\bi\s+(?:don't|do\s+not)\s+(?:think|agree)\s+(?:that\s+)?(?:these|this|that|it|they)\s+(?:is|are)"
    r"|\bi\s+disagree\b|동의하기\s*어렵|동의하지\s*않"
    # "1번은 실제로 발생합니다", "It does happen": the owner's "it can't happen" answered.
    r"|실제로\s*(?:발생합니다|일어납니다|재현됩니다|발생하고\s*있습니다)|\bit\s+(?:does|did)\s+happen\b",
    re.I,
)
REQUEST = words(
    r"\b(?:must|should|shouldn't|need(?:s|ed)?|missing|lacks?|wrong|incorrect|broken|fails?|failing|failed"
    r"|bug|leaks?|leaking|doesn't|does\s+not|don't|isn't|is\s+not|aren't|never|please|remove|add|rename"
    r"|avoid|instead|too\s+\w+|risk|unsafe|race|regress\w*|can't|cannot|without|no\s+\w+|not\s+\w+"
    # "I'd still like the amount verified by a test": asked, not confirmed.
    # (Not "I'd like to thank you …": courtesy.)
    r"|i'd\s+(?:still\s+)?(?:like|want|prefer)(?!\s+to\s+(?:thank|say\s+thanks|acknowledge))"
    r"|i\s+would\s+(?:still\s+)?(?:like|want|prefer)(?!\s+to\s+(?:thank|say\s+thanks|acknowledge))"
    r"|crash\w*|error|exception|raises?|breaks?|vulnerab\w*|inject\w*|ignores?|drops?|loses?|require[sd]?"
    r"|use\s|switch|change|revert|restore|put\s+back|lower|raise|increase|decrease|reduce|bump"
    r"|blocker|blocking|problem|concern|issue\s+is|unsupported|not\s+supported|off\s+by|mismatch"
    r"|ha(?:s|ve)\s+to|go(?:es)?\s+back)\b"
    r"|" + MUST_KO + r"|해야|이어야|여야\s*합|필요|누락|없습니다|없어|없이|안\s*됩니다|안됩니다|않습니다|않고|않아|않는|않은|문제|버그|실패|오류|에러"
    r"|잘못|바꿔|바꾸|변경해|수정해|고쳐|주세요|주십시오|바랍니다|주시면|주셨으면|위험|빠져|빠졌|누수|깨지|깨집|깨져|틀렸|부족|대신|제거해"
    # ("설정 원복까지 확인했습니다": the revert it confirms, no request.)
    r"|추가해|되돌려|원복(?!까지|(?:도|을|를|이|가|은|는)?\s*(?:확인|완료|됐|되었))"
    r"|복구(?!까지|(?:도|를|가|는)?\s*(?:확인|완료|됐|되었))|낮춰|낮추|올려|올리|늘려|줄여|우려|취약|막아|막히|새고|새는|터집|터지",
    re.I,
)
POSITIVE = words(
    # ("Security side is satisfied.": not "is not satisfied".)
    r"\b(?:is|am|are|'m|'re)\s+satisfied\b"
    r"|\b(?:pass(?:es|ed|ing)?|green|works?|working|looks?\s+(?:good|fine|great|right)|nice|great|thanks|thank\s+you"
    r"|lgtm|agreed|correct(?:ly)?|clean|succeed\w*|ready\s+for|verified|confirmed)\b"
    r"|\b(?:saw|seen|read|looked\s+at|noted)\b"
    r"|\b(?:consistent\s+with|in\s+line\s+with|reads\s+(?:fine|well|correctly|right))\b|\b(?:covers|handles)\b[^.;]{0,60}\bwell\W*$"
    r"|통과|확인했|확인하였|좋습니다|좋네요|(?<!지\s)맞습니다|잘\s*(?:됩|동작|작동)|정상|감사(?!\s*(?:로그|기록|추적|이벤트|테이블|대상|보고|용\b|팀))|고맙|수고|깔끔|성공|봤습니다|보았습니다|읽었습니다"
    r"|(?:개선|향상)\s*폭(?:이|은)\s*(?:큽니다|상당합니다)|잘\s*(?:맞추|정리하|처리하|반영하)셨"
    r"|안정적(?:입니다|이고|으로\s*(?:동작|유지|처리))|이상\s*없(?:습니다|음|이)|문제\s*없이\s*(?:동작|통과|처리)|\b(?:is|are|stays?|remains?)\s+stable\b"
    r"|일치합니다|일치하고|부합합니다|적절합니다|타당합니다|(?:단축되었|단축됐|개선되었|개선됐)습니다|(?:편해|좋아|나아|깔끔해|빨라|명확해)졌|(?:좋아|나아)지고\s*있|즐겁습니다|(?:사라|없어)졌습니다|해소(?:되었|됐)습니다"
    # "운영하면서 큰 도움이 될 것 같아요": praise ("추가하면 도움이 될 것 같습니다" asks).
    r"|^(?![^.]*\S면\s)[^.]*도움이\s*(?:될|됩|되었|됐)"
    # "`didReceiveRemoteNotification`은 이미 구현되어 있습니다": a fact against
    # the owner's reason, not a new problem.
    r"|이미\s*(?:\S+\s*){0,2}?(?:구현|지원|적용|처리)(?:되어|돼)\s*있|\balready\s+(?:implemented|supported|handled|in\s+place|exists?)\b",
    re.I,
)
# Nouns that name a problem without asking for anything ("일관성 문제는 해결됐습니다").
# Words an acknowledgement may hold without asking: "no sleeps left in `X`"
# says what is gone.
WEAK = words(r"문제|이슈|\b(?:issue|problem|concern|bug)s?\b"
             r"|\bno\s+(?:\w+\s+){1,2}?(?:left|remain(?:s|ing)?)\b|\bnothing\s+left\b"
             # "The base URL change is good": the change made, a noun, not one asked.
             r"|\b(?:the|this|that|your)\s+(?:[\w.-]+\s+){0,3}?(?:change|fix|update)(?=\W*$)"
             # "Error code works with the form": a thing the product shows, named.
             r"|\berror\s+(?:codes?|messages?|pages?|handling|text|copy|bod(?:y|ies)|states?)\b", re.I)
# "이제 찾습니다", "now passes": the point is settled.
# "It passes in CI only.", "The export only works in Chrome.", "Nothing works
# on staging.", "로컬에서만 통과합니다": success somewhere, or nowhere, is what is wrong.
ONLY_WORKS = words(
    r"\bonly\s+(?:works|passes|runs|succeeds)\b|\b(?:works|passes|runs|succeeds)\s+only\b"
    r"|\b(?:works|passes|runs|succeeds)\s+(?:in|on|with|for|when|if)\b[^.;,]{1,40}\bonly\b"
    r"|\b(?:nothing|none\s+of\s+(?:it|them|the\s+\w+))\s+(?:works|passes|runs)\b"
    r"|(?:에서만|때만|경우에만)\s*(?:동작|통과|작동|성공)(?:합니다|하고|해요|됩니다)",
    re.I,
)
# A reviewer answering the owner's reasons: "버튼 비활성화로는 … 막을 수
# 없습니다", "PG사 쪽 방어에만 기대는 것은 충분하지 않습니다", "MEDIA-412 sitting
# on the board doesn't protect production", "a ticket is not enough".
FALLS_SHORT = words(
    r"(?:으로는|로는|만으로는|만으로|에만)\s*[^.\n]{0,50}?(?:수\s*없|부족|충분하지\s*않|안\s*됩|못\s*합|막지\s*못)"
    r"|충분하지\s*않|부족합니다|해결되지\s*않습니다"
    r"|\b(?:doesn't|does\s+not|won't|will\s+not|can't|cannot)\s+(?:protect|prevent|stop|cover|help|solve"
    r"|fix|guarantee|replace|substitute)\b|\b(?:isn't|is\s+not|aren't|are\s+not)\s+(?:enough|sufficient|a\s+substitute)\b"
    r"|\bnot\s+(?:enough|sufficient)\b",
    re.I,
)
# "Confirmed it only runs once now, thanks.", "이제 관리자일 때만 동작합니다.":
# the limit is the fix, confirmed (no `ONLY_WORKS` problem).
AS_INTENDED = words(
    r"\bnow\b|\banymore\b|\bas\s+(?:intended|expected|asked|requested|designed)\b|\bthanks?\b"
    r"|\bthank\s+you\b|\bconfirmed\b|\bverified\b|\bonly\s+once\b|\bonce\s+only\b"
    r"|이제|확인했|확인됐|확인되었|감사|의도대로|요청대로|한\s*번만",
    re.I,
)
NOW_WORKS = words(
    r"이제\s*(?:[^\s]+\s*){0,3}?(?:찾습니다|됩니다|동작합니다|작동합니다|통과합니다|나옵니다|보입니다|맞습니다)"
    r"|\b(?:now|finally)\s+(?:works|passes|finds|renders|loads|returns\s+the\s+right)"
    r"|\bnow\s+(?!" + WORSE + r")[a-z]{4,}s\b"
    # "해시 오류는 사라졌습니다": the error is gone.
    r"|(?:오류|에러|경고|실패|문제|크래시)(?:는|가|도)?\s*(?:모두\s*|전부\s*)?(?:사라졌|없어졌|해소되었|해소됐)",
    re.I,
)
IMPERATIVE = words(
    r"^\s*(?:please\s+)?(?:accept|treat|handle|make|use|add|move|wrap|return|check|validate|guard|catch"
    r"|log|document|split|keep|drop|remove|rename|replace|pass|set|cap|limit|bound|escape|sanitize|close"
    r"|release|retry|fail|reject|raise|throw|lower|increase|decrease|reduce|revert|restore|put|store|cache"
    r"|invalidate|compare|sort|hash|encrypt|pin|bump|extract|inline|mock|assert|cover|test|consider|switch|declare|define"
    r"|enable|disable|write|emit|send|route|persist|turn\s+(?:on|off)|make\s+sure|ensure|don't|do\s+not|never|always|avoid|stop"
    r"|go\s+back\s+to|switch\s+back|roll\s+back|listen|bind|serve"
    r"|take\s+(?:it|them|this|that)\s+(?:off|out)|have\s+(?:it|them)\s+[a-z]+)\b",
    re.I,
)
FIX = words(
    r"\b(?:" + FIXED_WORD + r"|changed|updated|added|removed|renamed|moved|implemented|replaced|switched|applied"
    r"|now\s+(?:get|send|store|check|reject|run|use|return|has|have|is|are"
    r"|(?!" + WORSE + r")[a-z]{4,}s\b)"
    r"|(?:is|are)\s+now\s+\w+|\bplus\s+a\s+test|\ba\s+test\s+(?:that|where|asserts)"
    r"|addressed|patched|refactored|wrapped|bumped|lowered|raised|reverted|restored|rewrote|rewritten"
    r"|extracted|dropped|deleted|introduced|converted|made\s+it|now\s+(?:uses?|returns?|checks?|closes?|raises?)"
    r"|pushed|committed|covered"
    # ("Capped `first` at 100", not "is already sanitized by the ORM" nor
    # "should it be capped at 100?": a state, not a change made.)
    r"|(?<!already\s)(?<!be\s)(?<!is\s)(?<!are\s)(?<!was\s)(?<!were\s)(?<!been\s)"
    r"(?:capped|clamped|pinned|bounded|escaped|sanitized|throttled|guarded))\b"
    r"|고쳤|고쳐\s*두|수정했|수정하였|수정\s*완료|반영했|반영하였|반영\s*완료|추가했|추가하였|변경했|변경하였"
    r"|제거했|삭제했|적용했|교체했|옮겼|바꿨|바꾸었|처리했|구현했|해결했|커밋했|되돌렸|원복했|복구했|낮췄|올렸"
    r"|늘렸|줄였|감쌌|분리했|넣었|뺐|보완했|개선했|작성했|갱신했|업데이트했",
    re.I,
)
# Korean notes end a change with its noun: "`test_reuse` 추가", "평문 컬럼 제거함".
FIX_NOUN = re.compile(r"(?:추가|변경|수정|제거|삭제|교체|적용|반영|보완|분리)(?:함|됨|완료)?\s*[.)]?\s*$")
# A fix reported as done (past tense), which a promise in the same clause does not undo.
FIX_PAST = words(r"했습니다|였습니다|었습니다|았습니다|\b(?:fixed|changed|added|removed|updated)\b", re.I)
COMMIT = re.compile(r"\b" + HASH + r"\b")
DECLINE = words(
    r"\bnot\s+(?:adding|doing|implementing|including)\s+(?:it|this|that|them|one|a|an|the)\b|"
    r"\bnot\s+(?:going\s+to\s+)?chang\w*|\bwon't\s+(?:change|fix)|\bwill\s+not\s+(?:change|fix)"
    r"|\bkeep(?:ing)?\s+(?:it|this|that|the|as)\b|\bkeep(?:ing)?\s+`[^`\n]+`\s+(?:as\s+(?:it\s+)?is|as\s+an?|at\s|unchanged)|\bleav(?:e|ing)\s+(?:it|this|that|as)|\bleft\s+(?:it|them|both|this|that|everything)?\s*as\s+(?:it|they)\s+(?:is|are|was|were)|\bleav(?:e|ing)\s+\S+(?:\s+\S+)?\s+(?:alone|as\s+(?:it\s+)?is|unchanged)\b|\brather\s+not"
    r"|\bintentional|\bby\s+design|\bas\s+designed|\bdisagree|\bnot\s+(?:necessary|needed|a\s+bug|an\s+issue|required)"
    r"|\bunnecessary|\bout\s+of\s+scope|\bno\s+need|\bprefer\s+(?:to\s+keep|the\s+current)|\bstays?\b"
    r"|\bas[- ]is\b|\bi\s+don't\s+think|\bisn't\s+(?:an\s+issue|a\s+problem|needed)|\bfine\s+as\s+(?:it\s+)?is"
    r"|\bcorrect\s+as\s+(?:it\s+)?is|\bworks\s+as\s+intended|\bspec\s+(?:intends|says|requires)|\bdeliberate"
    r"|\bstand\s+by|\bpush\s+back|\bdecline|\bnot\s+convinced|\bsee\s+no\s+reason"
    # "On (1) my view hasn't changed: …"
    r"|\b(?:my|our)\s+(?:view|position|opinion|stance|answer)\s+(?:(?:hasn't|has\s+not)\s+|is\s+un|remains\s+un|stays\s+un)changed"
    # "I don't want to duplicate that limit", "I'd still rather keep one source of truth"
    r"|\b(?:don't|do\s+not)\s+want\s+to\b|\b(?:i'd|i\s+would|we'd|we\s+would)\s+(?:still\s+)?rather\b"
    r"|^\s*keeping\b|\bkeep(?:ing)?\s+(?:\w+\s+){0,2}(?:for\s+now|in\s+this\s+pr)\b|\bkeep(?:ing)?\s+(?:it\s+(?:at|to)\s+)?`?\d|\bkeep(?:ing)?\s+(?:fixed|the\s+current|current|as\s+is)|\btrade-?off\b|\bnot\s+going\s+to\s+change"
    r"|\b(?:we're|we\s+are|it's|it\s+is|that's)\s+fine\b|\bfine\s+here|\bacceptable\b|\bgood\s+enough"
    r"|\bno\s+(?:change|fix)\s+needed|\bno\s+(?:further|more)\s+changes\s+(?:from\s+my\s+side|from\s+me|planned|in\s+this\s+pr)\b|\bnot\s+worth|\boverkill|\bpremature"
    r"|(?:그대로|이대로|지금대로|현재대로)\s*(?:두|둡|둘|유지|갑|가겠|가져가)|(?:차단|검증|제한|검사)(?:은|는|을)?\s*두지\s*않겠|유지하겠|유지합니다|유지하는|유지할|변경하지\s*않|수정하지\s*않|바꾸지\s*않"
    # "상수로 두려고 합니다", "현행대로 유지하려고 합니다": kept, by intent.
    r"|(?:두|둘|유지하)려고\s*(?:합니다|해요|하고\s*있습니다)"
    # "현재 수준에서는 문제가 없다고 봅니다"; "…가 누락분을 메우므로 넣지
    # 않았습니다": left out, for a reason; "이번 작업은 포맷 변경에 집중하겠습니다".
    r"|문제(?:가|는)?\s*없다고\s*(?:봅|판단|생각)"
    r"|(?:므로|때문에|라서|니까)[^.;\n]{0,60}?(?:넣|추가하|적용하|반영하|만들)지\s*않았습니다"
    r"|(?:이번|이)\s*(?:작업|PR|pr|변경)(?:은|에서는)\s*[^.;\n]{0,30}?에\s*집중하겠"
    # "확장자 검사로 충분하다고 판단합니다": what is there is enough.
    r"|(?:으로|로|만으로도?)\s*충분하다고\s*(?:판단|생각|봅|봤)"
    r"|고치지\s*않|반영하지\s*않|의도된|의도한|의도적|의도대로|필요하지\s*않|불필요|필요(?:는|가)?\s*없|동의하기\s*어렵"
    r"|동의하지\s*않|문제가\s*되지\s*않|범위\s*밖|범위를\s*벗어|(?:이번|이\s*(?:PR|pr|작업|변경)|이번\s*(?:PR|pr|작업|변경))\s*범위에서\s*(?:빼|제외하)겠|현\s*구조|현재\s*구조|현행|괜찮다고\s*봅|(?:충분|적절|타당)하다고\s*(?:봅|판단|생각)|지\s*않으려고\s*합니다|아니라고\s*(?:봅|판단|생각)|다루는\s*것이\s*맞다고"
    r"|입장(?:에|은|이)?\s*(?:변화|변함)(?:가|이|는|은)?\s*없|(?:이전|앞선|지난|기존)\s*(?:답변|말씀|의견)(?:과|와)\s*같은\s*입장|\bsame\s+position\s+as\s+before\b|과(?:하다|도하다)고\s*(?:판단|봅|생각)|(?:^|\|)\s*유지\s*[.。]|맞다고\s*봅|낫다고\s*봅|스펙(?:상|대로|에\s*따라)|사양(?:상|대로)|설계상|어렵습니다|않겠습니다",
    re.I,
)
# "2번은 … 5GB로 제한되어 있어 해당 상황이 발생하지 않습니다", "That can't
# happen: …": the reviewer's scenario rebutted. A refusal only where the
# clause reports no change (`bot.findings.owner_clause`): "…락을 잡아서 해당
# 상황이 발생하지 않도록 수정했습니다", "so that case can't happen anymore" are fixes.
REBUTS = re.compile(
    r"(?:해당|그런|그러한|이런|이러한)\s*(?:상황|경우|케이스|시나리오)(?:은|는|이|가)?\s*"
    r"(?:(?:발생하지|일어나지|생기지|나오지)\s*않(?:습니다|아요|는다|을\s*(?:겁니다|것입니다))|(?:발생할|일어날|생길)\s*수\s*없)"
    r"|\b(?:that|this|such\s+a)(?:\s+(?:case|situation|scenario|path))?\s+(?:can(?:no|')t|cannot|could(?:n't|\s+not)|will\s+never|never)\s+(?:happen|occur|arise)\b"
    r"|\b(?:that|this)\s+(?:case|situation|scenario)\s+is\s+impossible\b",
    re.I)
# What says the change was made, beside a rebuttal: "이제", "더 이상", "않도록", "anymore".
CHANGED_NOW = re.compile(r"이제|더\s*이상|않도록|않게|(?:수정|변경|반영|적용|고친)\s*(?:후|뒤|이후|다음)|\b(?:now|anymore|any\s+more|no\s+longer)\b", re.I)
PROMISE = words(
    r"\b(?:will|i'll|we'll|going\s+to)\s+(?:fix|address|handle|change|look|do|update|pick|get\s+to|tackle|take\s+care)|\bfollow[- ]up"
    r"|\bnext\s+(?:pr|commit|round|iteration)|\blater\b|\btodo\b|\bafter\s+this\s+(?:pr|merge)"
    r"|다음\s*(?:pr|PR|커밋|단계|라운드)|후속|나중에|추후|차후|별도\s*(?:이슈|PR|pr|작업)|하겠습니다|드리겠습니다|예정",
    re.I,
)
# "Idempotency will come with the middleware PR next sprint", "in a separate
# PR", "다음 스프린트에": put off, unless the clause also reports a change
# ("Switched to `orjson`; this will ship in the next release").
LATER = words(
    r"\bnext\s+(?:sprint|release|milestone)|\bwill\s+(?:come|land|ship|follow)\s+(?:with|in)\b"
    r"|\b(?:in|with)\s+a\s+separate\s+(?:pr|change|ticket|branch)|다음\s*(?:스프린트|릴리스|배포)",
    re.I,
)
# "support asked for it", "as discussed in standup", "기획팀 요청으로": work someone
# else asked for, beside the review.
ASKED_ELSEWHERE = words(
    r"\b(?:support|product|design|finance|ops|legal|marketing|sales|the\s+pm|the\s+team)\s+asked\s+for\s+(?:it|this|that)\b"
    r"|\bas\s+(?:discussed|agreed|requested)\s+(?:in|at)\s+(?:standup|the\s+(?:stand-?up|meeting|sync|planning))\b"
    r"|(?:기획|운영|CS|영업|디자인|마케팅)\s*(?:팀)?(?:의|에서)?\s*요청(?:으로|에\s*따라|하신|한)",
    re.I,
)
# (A severity tag may come first: "[medium] New: …".)
ALSO = words(r"^\s*(?:\[[^\]\n]{1,12}\]\s*)?(?:also|additionally|another|separately|plus)\b|^\s*(?:\[[^\]\n]{1,12}\]\s*)?new\s*(?::|\.(?!\w))|^\s*(?:\[[^\]\n]{1,12}\]\s*)?(?:또한|추가로|그리고\s*새로|별개로|한\s*가지\s*더|새로|(?:그리고\s*)?하나\s*더)|^\s*(?:\[[^\]\n]{1,12}\]\s*)?one\s+more\b"
    r"|하나\s*더|다른\s*(?:이유|원인|에러|오류|예외|문제)|새로운\s*(?:에러|오류|예외|문제|실패)|이번(?:에는|엔)\s*다른"
    # "엔화 플랜에서 새 실패가 있습니다", "There's a new failure in the JPY plan."
    r"|새\s*(?:실패|에러|오류|예외)(?:가|이)?\s*(?:있|생겼|나옵|발생)|\ba\s+new\s+(?:failure|error|exception)\b"
    # "이번엔 테스트 단계에서 실패합니다": this time, another failure (as "this time it").
    r"|^\s*이번(?:에는|엔)\s[^.]{0,40}?(?:실패|오류|에러|예외|깨집)"
    r"|\bone\s+more\s+(?:thing|issue|problem|failure)|\bdifferent\s+(?:error|reason|failure|exception|assertion)"
    r"|\bnew\s+(?:error|failure|exception|problem|issue|point|finding|concern)\b|새\s*(?:지적|문제|이슈|항목|포인트)|\bthis\s+time\s+(?:it|the)", re.I)
# What opens a point of its own at the very start of a clause, even in the
# middle of a paragraph ("…여전히 필요합니다. 그리고 `LOCKOUT_MAX_ATTEMPTS`
# 5회도 많습니다."). Not `ALSO`'s "다른 문제입니다" said in passing, a bare
# "또한" that may join, or "새로 추가되는 …" (newly added).
OPENS_POINT = re.compile(
    r"^\s*(?:another\b|separately\b|one\s+more\b|new\s*(?::|\.(?!\w))|(?:그리고|또|추가로)\s+`[^`\n]{1,60}`[^.\n]{0,20}?(?:도|는|은)\s"
    r"|별개로|한\s*가지\s*더|(?:그리고\s*)?하나\s*더|그리고\s*새로\s*(?:하나|한\s*가지|발견))", re.I)
GENERAL = words(
    r"\b(?:all|both|every|each)\b|\b(?:your|the)\s+(?:review|feedback)\b|\breview\s+(?:points?|comments?|feedback)"
    r"|\b(?:points|comments)\b"
    # ("모든 지적", not "모든 탭의 타이머": every tab, not every point.)
    r"|모든\s*(?:지적|사항|리뷰|코멘트|포인트|항목|피드백|요청|문제|이슈|건|것|점|부분|내용)"
    r"|모두|전부|두\s*가지|세\s*가지|지적(?:하신|해\s*주신)|리뷰|피드백|말씀하신|요청하신",
    re.I,
)
# A table's rule line under its header ("|---|:--:|"), and a header naming the
# column of what is asked for ("requested", "must be", "요청", "변경 후").
# (Possessive: a line of 30,000 spaces must not take seconds.)
TABLE_RULE = re.compile(r"^\s*+\|?\s*+:?-++:?\s*+(?:\|\s*+:?-++:?\s*+)*+\|?\s*+$")
WANTED_COLUMN = re.compile(
    r"\b(?:requested|request|required|needed|must\s+be|should\s+be|wanted|expected|target|proposed"
    r"|recommended|new|fix|ask)\b|요청(?!자)|변경\s*후|권장|목표|기대|수정\s*안|제안|필요|요구|변경\s*값|바꿀\s*값",
    re.I,
)
BULLET = re.compile(r"^\s*(?:[-*•·]|\(?\d{1,2}[.):]|[①-⑩]|F\d{1,3}[:.)])\s+")
HEADING = re.compile(
    r"^\s*#{1,6}\s|^.{0,80}[:：]\s*$"
    # "수정이 필요한 부분입니다.", "확인할 사항은 다음과 같습니다.": a line that
    # introduces the list below it, as a colon does.
    # (Only a few lead words before it: "`x` 설정이 필요한 부분입니다" names
    # what is wrong, a point of its own.)
    r"|^\s*(?:아래는\s*|다음은\s*|몇\s*가지\s*)?(?:(?:수정|보완|개선|확인|검토)(?:이|가)?\s*)?"
    r"(?:필요한|고칠|고쳐야\s*할|수정할|확인할|검토할)\s*(?:부분|사항|점)(?:들)?(?:은|는)?\s*"
    r"(?:다음과\s*같습니다|아래와\s*같습니다|입니다)\.?\s*$"
    # "추가로,", "Also," alone on a line: it leads into the point below.
    r"|^\W*(?:추가로|또한|그리고|also|additionally|in\s+addition|plus)\s*[,.…]?\s*$", re.I)
STATUS_PREFIX = re.compile(
    r"^\s*(?:#{1,6}\s*)?[*_]{0,3}(?:DONE_WITH_CONCERNS|NEEDS_CONTEXT|TASK_DONE|STEP_DONE|BLOCKED|ESCALATE"
    r"|APPROVED|LGTM|DONE)\b[*_]{0,3}\s*[:\-—–]?\s*",
    re.I,
)
SENTENCE = re.compile(r"(?<![eE]\.g\.)(?<![iI]\.e\.)(?<!etc\.)(?<!vs\.)(?<=[.!?。])\s+|(?<=다\.)|(?<=요\.)")
# (A space run is tried from its first space only, and once: a message of
# 30,000 spaces must not take seconds to cut.)
CLAUSE = words(
    r"(?<!\s),?\s++\bbut\b\s+|;\s+|(?<!\s),?\s++\bhowever\b,?\s+|(?<!\s),?\s++\bwhile\b\s+"
    r"|(?<!\s),?\s++\bwhereas\b\s+"
    # The connective stays with its half: "다시 확인했는데" (I checked, and …)
    # is not "확인했습니다" (confirmed).
    r"|(?<=[가-힣]지만|[가-힣]는데),\s*|(?<=[가-힣]고),\s*|(?<=[가-힣]지만|[가-힣]으나)\s+"
    r"|(?<!\s)\s++(?:하지만|다만|그런데|그러나)\s+",
    re.I,
)
# Ordinal selectors: which of the author's findings a clause points at.
# "세 번째 말씀드리지만", "for the third time": how often, not which point.
_NOT_A_POINT = (r"(?!\s*(?:로\s*)?(?:말씀|얘기|이야기|요청|언급|드리|리뷰|검토|라운드|시도|반복|같은))")
_NOT_A_POINT_EN = (r"(?!\s+(?:time|round|attempt|try|review|pass|failure|error|run|job|call|step"
                   r"|build|deploy|push|page|row|line|request|byte|half|load|login|visit"
                   # ("Strip the BOM from the first header": a thing's first, not point 1.)
                   r"|header|column|field|entry|element|character|char|message|chunk|record|key"
                   r"|value|argument|parameter|letter|word|name|file|commit|batch|cell|digit"
                   r"|token|day|week|month|user|customer|match|result|occurrence|instance)s?\b)")
# ("a second refund", "from a second tab": another one, not point 2.)
ORDINALS: list[tuple[re.Pattern[str], int]] = [
    # ("Deduplicate staging first with …", "at first": an order of work, not
    # point 1; but "the first in my list", and "First, then: …" at the start.)
    (re.compile(rf"(?:(?<=\bthe\s)first\b|^\W*first\b|(?<!\bat\s)(?<!\bthe\s)\bfirst\b"
                rf"(?!\s+(?:with|by|before|so|then|in|on|to|of\s+all|off)\b|\s*,\s*(?:so|then|which|because)\b)){_NOT_A_POINT_EN}|첫\s*번째{_NOT_A_POINT}|1번|①|(?:\bpoint|\bitem|#)\s*1\b|^\s*1[.)]|(?<![\w(])\(1\)|^\s*\|\s*1\s*\|", re.I), 1),
    (re.compile(rf"(?<!\ba\s)\bsecond\b{_NOT_A_POINT_EN}|두\s*번째{_NOT_A_POINT}|2번|②|(?:\bpoint|\bitem|#)\s*2\b|^\s*2[.)]|(?<![\w(])\(2\)|^\s*\|\s*2\s*\|", re.I), 2),
    (re.compile(rf"(?<!\ba\s)\bthird\b{_NOT_A_POINT_EN}|세\s*번째{_NOT_A_POINT}|3번|③|(?:\bpoint|\bitem|#)\s*3\b|^\s*3[.)]|(?<![\w(])\(3\)|^\s*\|\s*3\s*\|", re.I), 3),
    (re.compile(rf"(?<!\ba\s)\bfourth\b{_NOT_A_POINT_EN}|네\s*번째{_NOT_A_POINT}|4번|④|(?:\bpoint|\bitem|#)\s*4\b|(?<![\w(])\(4\)|^\s*\|\s*4\s*\|", re.I), 4),
]
REMAINING = words(
    r"\b(?:the\s+other\s+one|the\s+rest|the\s+remaining|remaining\s+one|other\s+point|what'?s\s+left|the\s+one\s+left)\b"
    # (Not the remainder of a sum: "1원 단위 나머지를 버리고", "나머지 배분은".)
    r"|(?<!단위\s)(?<!단위)나머지(?!\s*(?:배분|분배|금액))(?![를을]\s*(?:버리|버려|더하|더해|올림|절사|배분))"
    r"|남은\s*(?:건|것|게|하나|한\s*가지|부분|지적)",
    re.I,
)
# ("3건 반영했습니다": a count in digits, beside what was done to them.)
ALL = words(r"\b(?:both|all|either)\b|(?:두|세|네)\s*(?:가지|개|항목|건|지적)|둘\s*다|모두|전부"
            r"|(?<![\d,.])(?<!중\s)(?<!중)[2-9]\s*(?:건|가지)(?!\s*중)"
            r"(?=\s*(?:모두\s*)?(?:반영|수정|처리|확인|고쳤|해결))", re.I)

# -- selectors, and what a clause says about its point ----------------------
# String literals and number-led values inside a code span.
CODE_VALUE = re.compile(r"\"[^\"]*\"|'[^']*'|(?<![\w.])\d[\w./-]*")
HEADER_SPAN = re.compile(r"([a-z][\w-]*)\s*:\s+\S")
# "Confirmed 1, 2 and 4", "Still disagree on 3": bare point numbers.
NUMBER_LIST = re.compile(r"(?<!,)(?<!,\s)\b[1-9](?:\s*,\s*[1-9])*+\s*,?\s*(?:and|&|및|와|과)\s*[1-9]\b"
                         # "1, 2, 3번", "1·2·3번": a list of point numbers ("2/3번" is
                         # a fraction). (Never from inside a list: one scan, not one per digit.)
                         r"|(?<![\d.,·#])(?<![,·]\s)#?[1-9](?:\s*[,·]\s*#?[1-9])++\s*번(?!\s*째)")
ON_NUMBER = words(
    r"\b(?:on|for|re|about|point|item)\s+#?([1-9])\b(?![.,]\d)"
    # "1 is good.", "2 is still open" (a verdict on a point, not "3 is too low")
    r"|^\s*([1-9])\s+(?:is|are|looks?|remains?)\s+(?:good|fine|ok|done|fixed|resolved|right|still|open|unresolved)\b",
    re.I,
)
# Every ordinal and number selector needs one of these; most clauses have none.
MAYBE_ORDINAL = re.compile(r"\d|first|second|third|fourth|번째|[①-⑩]", re.I)
# "1번 외에", "2번 말고", "other than #1": the points but that one.
BUT_NUMBER = re.compile(r"([1-9])\s*번(?:은|을|는)?\s*(?:외에|외의|말고|빼고|(?:을|를)?\s*제외하고)"
                        r"|\b(?:other\s+than|besides|except(?:\s+for)?)\s+(?:#|point\s+|item\s+)([1-9])\b",
                        re.I)
# "1. **[P1] (was #2)**": a renumbered list names the point by its old number.
WAS_NUMBER = re.compile(r"\(\s*(?:was|formerly|previously|old|기존|이전|원래|구)\s*#?\s*([1-9])\s*번?\s*\)", re.I)
# What may follow "both" / "all" when it means every point: "both look good",
# "all points", "all of them"; not "both paths", "all requests".
ALL_OF = frozenset(
    """points point issues items fixes comments changes findings concerns requests of look looks
    are were is resolved fixed addressed good done confirmed verified two three remain remaining
    still open now""".split()
)
NUMBERED = re.compile(r"^\s*(?:[*_]{1,2})?\(?(\d{1,2})[.):]\s|^\s*\|\s*(\d{1,2})\s*\|")
# Hedges and filler around a restated point: "제 걱정이 지나칠 수도 있겠지만", "I may be overthinking this".
HEDGE = words(
    r"지나칠\s*수도|과할\s*수도|틀릴\s*수도|기우일|제가\s*잘못|\bi\s+(?:may|might)\s+be\s+(?:wrong|overthinking|missing)"
    r"|\boverthinking\b|\bcorrect\s+me\s+if"
    # Courtesy around a request to look again: "번거로우시겠지만", "바쁘시겠지만".
    r"|번거로우시|바쁘시겠|수고스럽|죄송하지만|죄송합니다만|번거롭게\s*해\s*드려|실례지만|양해\s*(?:부탁|바랍)"
    r"|\bsorry\s+to\s+(?:push|insist|bother|be)"
    # Empathy before the point: "I do understand the concern about …".
    r"|\bfair\s+point\s+to\s+(?:raise|bring|take|discuss)"
    r"|\bi\s+(?:do\s+|fully\s+|totally\s+)?(?:understand|appreciate|see)\s+(?:the|your|why)|\bthanks\s+for\s+the\s+(?:context|explanation)"
    r"|말씀하신\s*(?:사정|취지|우려)(?:은|는|도)?\s*이해"
    # "설명해 주신 부분도 잘 이해했습니다", "해석하신 취지도 충분히 공감합니다":
    # the owner's reasons heard, not the point given up.
    r"|(?:설명|답변)(?:해\s*주신|하신|주신)\s*(?:부분|내용|점)?(?:은|는|도)?\s*(?:잘\s*)?(?:이해했|이해합|공감)"
    r"|(?:취지|의도|사정|입장)(?:은|는|도)?\s*(?:충분히\s*)?(?:이해|공감)(?!하지|하기\s*어렵)"
    # Agreement with the work as a whole, before the point that still stands:
    # "전체적인 방향에는 동의합니다", "I agree with the overall approach".
    r"|(?:전체적인|전반적인|큰)\s*(?:방향|구조|접근|설계|틀)(?:에는|에도|에|은|는|도)?\s*(?:동의|공감)"
    r"|\bagree\s+with\s+the\s+overall\s+(?:direction|approach|design|structure)"
    # The reviewer's own plan: "커밋이 올라오면 다시 보겠습니다", "will re-review once pushed".
    r"|다시\s*(?:보겠|확인하겠|검토하겠|리뷰하겠)|\bwill\s+(?:re-?review|take\s+another\s+look|look\s+again|check\s+again)"
    # Thanks for the work, the whole clause: "수정해 주셔서 감사합니다", "Thanks for the quick fix."
    r"|^[^.\n]{0,30}주셔서\s*(?:정말\s*|너무\s*)?(?:감사|고맙|(?:큰\s*|많은\s*)?도움이\s*(?:되었|됐|됩))[^.\n]{0,8}[.!]?$"
    r"|^\W*thanks?(?:\s+you)?(?:\s+for\s+(?:the\s+)?(?:quick\s+)?(?:fix(?:es)?|update|turnaround|changes?|iteration))?[.!]?$"
    # Thanks for other work: "Kind of you to improve the error body",
    # "Appreciate the docstrings" (not "I'd appreciate it if you …", a request).
    # (The whole clause: not "…, though the new log line prints the card number".)
    r"|^\W*(?:(?:that's|that\s+is|it's|it\s+is|very|so)\s+)*kind\s+of\s+you\b(?![^.]*\b(?:though|although|but|however)\b)[^.;]{0,80}[.!]?$"
    r"|^\W*(?:i\s+)?(?:really\s+)?appreciate\s+(?:the|your)\b(?![^.]*\b(?:though|although|but|however)\b)[^.;]{0,80}[.!]?$",
    re.I,
)
# "`common/logging/pii_filter.py` 리뷰 결과입니다.", "Review of `pii_filter.py`:":
# a heading over the points, whatever file it names.
REVIEW_HEADING = words(
    # (A dot inside a name, `pii_filter.py`, ends no sentence.)
    r"^(?:[^.:\n]|[.:](?=\S)){0,80}?(?:리뷰|검토)\s*(?:결과|의견|내용)(?:입니다|는\s*다음과\s*같습니다)[.:]?$"
    r"|^(?:my\s+)?review\s+(?:of|for)\s+(?:[^.:\n]|[.:](?=\S)){1,80}:$", re.I)
ANNOUNCE = words(
    # ("두 가지 모두 …" is about both, not an announcement.)
    r"^(?:다만\s*|그런데\s*)?(?:두|세|네|몇|여러)\s*(?:가지|개|건)(?!\s*(?:모두|다\s|전부))(?:의)?\s*(?:문제|지적|사항|이슈|점)?[가-힣\s]{0,12}[.:]?$"
    r"|^(?:there\s+are\s+|i\s+have\s+|i\s+see\s+)?(?:two|three|four|a\s+few|several|some)\s+(?:more\s+)?"
    r"(?:issues|problems|things|points|concerns|comments|findings)\b[^.]{0,40}[.:]?$"
    r"|^(?:다만\s*|그런데\s*)?(?:문제가|이슈가|걸리는\s*(?:점이|게))\s*(?:하나|한\s*가지|두\s*가지|몇\s*가지)\s*(?:있습니다|있어요|남았습니다)[.:]?$"
    r"|^(?:one|a\s+couple\s+of|two)\s+(?:more\s+)?(?:issue|problem|thing|point)s?(?:\s+left)?[.:]?$"
    # "추가로 보이는 문제입니다.", "그리고 하나 더 있습니다."
    r"|^(?:추가로|또한|그리고)?\s*(?:새로\s*)?(?:보이는|발견한|확인된)\s*(?:문제|이슈|사항)(?:입니다|이\s*있습니다)[.:]?$"
    r"|^(?:그리고|추가로|또)?\s*(?:하나|한\s*가지)\s*더\s*있습니다[.:]?$"
    # "중복 발송 원인으로 보이는 부분입니다." above the bullet that says which part.
    r"|^[가-힣\s]{0,20}?(?:원인|문제|범인)(?:으로|이라고)\s*(?:보이는|의심되는|생각되는)\s*(?:부분|곳|코드|지점|대목)(?:입니다|이\s*있습니다)[.:]?$"
    r"|^here(?:\s+is|'s)\s+what\s+(?:looks|seems)\s+(?:like\s+)?(?:to\s+be\s+)?the\s+cause\b[^.:]{0,40}:?$"
    # "다만 한 가지는 되돌려야 합니다." above the point that says which.
    r"|^(?:다만\s*|그런데\s*|하지만\s*)?(?:한\s*가지|하나)(?:는|가)?\s*(?:더\s*)?"
    r"(?:되돌려야|고쳐야|수정해야|바꿔야)\s*(?:합니다|해요)[.:]?$"
    r"|^(?:but\s+)?one\s+thing\s+(?:has|needs)\s+to\s+(?:be\s+)?(?:reverted|changed|fixed|undone)"
    r"(?:,?\s+though)?[.:]?$"
    # What the reviewer did: "Pulled `7be0d44` and re-ran the CI job."
    r"|^(?:i\s+)?(?:pulled|re-?ran|ran|checked\s+out|rebuilt|built|tested|retested|reproduced|re-?reviewed|reviewed)\b"
    # ("Reviewed the migration and the backfill is not idempotent." says what is wrong.)
    r"(?![^.;:]*\b(?:fail\w*|error\w*|broken|still|crash\w*|wrong|missing|lacks?|has\s+no)\b)"
    # ("… and the warning is not there anymore": the fix seen, no problem.)
    r"(?![^.;:]*\b(?:never|(?:is|are|does|do)\s+not|isn't|aren't|doesn't|don't)\b"
    r"(?![^.;:]*\b(?:anymore|any\s+more|no\s+longer)\b))[^.;:]{0,80}\.?$"
    r"|(?:받아서|받아|내려받아)\s*(?:다시\s*)?(?:돌렸|실행했|빌드했)|다시\s*돌려\s*봤"
    # "값은 다음처럼 조정해 주십시오.", "Please change them as follows:": the table below is the point.
    r"|^[^.\n]{0,24}(?:다음처럼|다음과\s*같이|아래(?:처럼|와\s*같이))[^.\n]{0,24}[.:]?$"
    r"|^[^.\n]{0,40}\b(?:as\s+follows|the\s+following(?:\s+\w+)?)\s*[.:]$"
    # "임베드 관점에서 확인 부탁드립니다.", "비용 관점입니다.": who is speaking.
    r"|^[^.\n]{0,20}관점(?:에서|의)?\s*(?:(?:의견|리뷰|검토)?\s*(?:입니다|드립니다)|(?:확인|검토)\s*부탁드립니다)?[.:]?$"
    # "개인정보 파기 관점에서 두 가지 수정 부탁드립니다.": the list below is what.
    r"|^[^.\n]{0,24}(?:두|세|네|몇|여러)\s*(?:가지|건|개)\s*(?:수정|변경|확인|보완|조치)?\s*(?:부탁드립니다|요청드립니다|부탁합니다|부탁드려요)[.:]?$"
    # "테스트 결과 공유드립니다.", "Sharing the test results:": what follows is the point.
    r"|^[^.\n]{0,30}(?:공유드립니다|공유합니다|공유드려요|(?:결과|내용|위치|예시|로그|수치|측정값)입니다)[.:]?$"
    r"|^\W*(?:sharing|here\s+(?:are|is))\s+(?:the\s+|my\s+)?(?:test\s+|ci\s+)?(?:results?|output|logs?|numbers)\b[^.\n]{0,30}[.:]?$"
    # What the reviewer will do later: "I'll look at the migration once there
    # is one.", "마이그레이션이 올라오면 그때 보겠습니다."
    r"|^\W*(?:i'll|i\s+will)\s+(?:(?:take\s+a\s+)?look|review|check|come\s+back)\b[^.\n]{0,60}[.]?$"
    r"|^[^.\n]{0,60}(?:그때|나중에|이후에|다음\s*(?:라운드|차례|리뷰)에(?:서)?)\s*(?:다시\s*)?(?:보겠습니다|살펴보겠습니다|검토하겠습니다|확인하겠습니다)[.]?$",
    re.I,
)
# "No concerns on the Redis side", "이견 없습니다": nothing asked for.
NO_CONCERN = words(
    r"(?:^|[,;]\s*)(?:i\s+have\s+|there\s+are\s+)?no\s+(?:further\s+|other\s+|more\s+)?(?:[a-z]+\s+)?(?:concerns?|issues?|objections?|comments?|notes|findings?|remarks)\b"
    r"(?![^.;]*\b(?:but|except|however)\b)"
    r"|\bnothing\s+(?:further\s+|else\s+)?(?:to\s+add|from\s+me|to\s+flag)|^\W*nothing\s+(?:further|else)\b"
    r"|\b(?:change|this|it)\s+has\s+no\s+(?:user-?facing\s+|visible\s+)?(?:impact|effect)\s+on\b"
    r"|변경(?:은|도|이)?\s*[^.\n]{0,30}영향(?:이|은|는|도)?\s*없습니다"
    r"|(?:이견|우려|걱정|추가\s*의견|코멘트|추가\s*지적(?:\s*사항)?)(?:은|는|이|가|도)?\s*없|(?:쪽은|쪽에서는|제\s*쪽은)?(?<!\s)\s*+더\s*(?:는\s*)?없습니다|더\s*이상\s*없"
    # "남은 항목을 다시 번호 매깁니다", "renumbering what is left": about the list, not a point.
    r"|번호(?:를)?\s*(?:다시\s*)?매|\brenumber",
    re.I,
)
# "`app-db`는 대상이 아니므로 7일로 줄이는 데 이견 없습니다", "No objection to
# lowering `X` to 7": agreeing with what another asked, whatever it names.
NO_OBJECTION = re.compile(
    r"(?:이견|반대\s*의견)(?:은|는|이|가|도)?\s*없(?:습니다|어요|음)\W*$"
    r"|^\W*(?:i\s+have\s+)?no\s+objections?\s+to\b(?![^.;]*\b(?:but|except|however)\b)", re.I)
# "No findings from me.", "별도 요청은 없습니다": the reviewer's turn asks for
# nothing; what it states is context, not a finding.
NO_FINDINGS = words(
    # (Not "Nothing else from me", "그 외 추가 의견 없습니다": closing a turn that asked.)
    r"^\W*(?:i\s+have\s+|there\s+are\s+)?no\s+(?:findings?|concerns?|issues?|objections?|requests?)"
    r"\s+(?:from\s+me|on\s+my\s+side|here)\b|^\W*nothing\s+(?:from\s+me|to\s+flag)"
    # "I have nothing to add this round" (not "nothing else to add", after requests).
    r"|^\W*i\s+have\s+nothing\s+to\s+add\b|^\W*(?:이번\s*(?:라운드|차례)(?:에는|는)?\s*)?추가할\s*(?:것|내용|의견)(?:이|은)?\s*없습니다"
    r"|^\W*(?:별도\s*|따로\s*|제\s*쪽\s*)?(?:요청|지적\s*사항|지적|의견|이견)(?:은|는|이|도)?\s*(?:따로\s*)?없습니다"
    r"|관점(?:의|에서)?\s*(?:이슈|문제|우려)(?:는|가|도)?\s*없습니다|특이\s*사항(?:은|이|도)?\s*없",
    re.I,
)
# "They do not conflict", "대상이 달라 충돌하지 않습니다", "both can be met":
# no conflict (and, from a reviewer, no point).
NO_CONFLICT = words(
    r"(?:충돌|상충|모순|겹치)(?:하지\s*않|되지\s*않|지\s*않|(?:은|이|도)?\s*없)"
    # ("동시에 만족할 수 있는 값이 없습니다" is no way to meet both.)
    r"|(?:함께|둘\s*다|동시에|모두)\s*(?:만족|충족|반영|맞출|지킬)\S*\s*수\s*(?:가\s*|는\s*)?있(?!는\s*\S+\s*없)"
    # "아래처럼 하면 둘 다 충족됩니다": both are met, as shown.
    r"|(?:둘\s*다|모두|함께)\s*(?:충족|만족)(?:됩|시킵|시켰|합니다|했습)|(?:둘\s*다|모두|함께)\s*(?:반영|충족|만족)\s*가능(?:합니다|해요|하고|하며|함)"
    r"|\b(?:do|does|did)(?:n't|\s+not)\s+(?:conflict|contradict|clash)"
    # ("must not conflict with the login limit" asks for something.)
    r"|(?<!must\s)(?<!should\s)(?<!shall\s)\bnot\s+(?:in\s+)?(?:conflict|contradiction)"
    r"|\bno\s+(?:conflict|contradiction)|\bboth\s+can\s+be\s+(?:met|done|satisfied)|\bcan\s+(?:both\s+be\s+met|satisfy\s+both|do\s+both)"
    r"|\b(?:are|is)\s+compatible\b",
    re.I,
)
# "`e72c915`에서도 여유분이 적용되지 않습니다", "`e72c915` still doesn't …": the
# owner's commit named and found wanting is the fix rejected, not a new point.
FIX_REJECTED = words(
    r"(?<![0-9a-f])" + HASH + r"`?\s*(?:에서도|에서는|에서|로도|로는|에도|도|은|는)"
    r"(?![가-힣])[^.;\n]{0,80}?(?:지\s*않|안\s*됩|안\s*되|못\s*했|그대로|동일|똑같|마찬가지|같습니다)"
    r"|\b" + HASH + r"\b`?\s+(?:still|also|either|doesn't|does\s+not|didn't"
    r"|did\s+not|same)\b|\b(?:in|with|after)\s+`?" + HASH + r"\b`?,?\s+(?:it\s+)?"
    r"(?:still|nothing)\b",
    re.I,
)
# "재실행 중 2회 실패했고 메시지도 동일합니다": it fails as before (whatever
# run counts it gives).
SAME_FAILURE = words(
    r"(?:실패|깨지|깨졌|재현)[^.;\n]{0,20}?(?:메시지|오류|에러|증상)(?:도|가|는)?\s*(?:동일|똑같|같습니다)"
    r"|\bfail(?:s|ed)?\b[^.;\n]{0,30}?\b(?:same|identical)\s+(?:error|message|assertion)",
    re.I,
)
# The fix is there but does not work: "`formatPrice()`는 추가됐지만 …에서는
# 여전히", "plural 키는 생겼는데 …", "the helper was added, but …".
PRESENT_BUT = words(
    r"(?:추가(?:됐|되었)|생겼|들어갔|들어왔|바뀌었|반영(?:됐|되었))(?:지만|는데|으나)"
    r"|\b(?:was|were|has\s+been|have\s+been|is|are)\s+(?:added|there|in\s+place|present|created)\s*,?\s+but\b",
    re.I,
)
# "DoS 문제는 없습니다", "that is not a problem": the reviewer answering the
# owner's argument, not asking for anything.
NO_PROBLEM = words(
    r"(?:문제|이슈|위험)(?:는|가|도)?\s*(?:없습니다|없어|없고|없는)"
    r"|\b(?:is|are|isn't|is\s+not|aren't|are\s+not)\s+(?:not\s+)?(?:a\s+|an\s+)?(?:problem|issue|risk|concern)\b"
    r"|\bno\s+(?:such\s+)?(?:problem|issue|risk)\b",
    re.I,
)
# "브랜치는 아직 `71c0b9e`입니다", "still at `abc1234`": no new commit.
STILL_AT = words(r"아직|여전히|그대로|\bstill\b|\bunchanged\b|\bno\s+new\s+commit|\bsame\s+commit", re.I)
# "Added a `TODO(auth)` comment": a note to do it later is no fix.
TODO = words(r"\b(?:todo|fixme)\b", re.I)
