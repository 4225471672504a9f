"""Where a request applies, for contradictions between reviewers: the files
it names (by path as written), routes and key prefixes (`/api/`, `tmp/`),
and environments (staging, production). Two requests for one setting in
different places can both be met. Pure functions of text.
"""

from __future__ import annotations

import re
from functools import lru_cache

from bot.demands import asked, requests
from bot.topics import topic
from bot.wording import CODE, PATH, URL, is_file


@lru_cache(maxsize=8192)  # a point's places are asked for each finding it is compared with
def places(text: str) -> frozenset[str]:
    """The files (by path as written) and routes (`/api/`, `/v1/orders`) a
    request names."""
    out = {"path:" + m.group(1).lower() for m in PATH.finditer(URL.sub(" ", text))
           if is_file(m.group(1))}
    for span in CODE.findall(text):
        # `GET /api/v1/catalog`: the route a method is asked for.
        out.update("code:" + word.lower().rstrip(".,") for word in span.split()
                   if word.startswith("/") and len(word) > 1)
    out.update("env:" + _ENVS[m.group(0).lower().replace(" ", "")] for m in _ENV.finditer(text))
    for anchor in topic(text).anchors:
        kind, _, name = anchor.partition(":")
        if kind == "code" and len(name) > 1 and (name.startswith("/") or name.endswith("/")):
            # A route (`/api/`) or a folder or key prefix (`tmp/`, `invoices/`).
            out.add(anchor)
    return _path_envs(frozenset(out))


def _path_envs(found: frozenset[str]) -> frozenset[str]:
    """With the environments their paths name: `deploy/prod.env`,
    `values-staging.yaml`, `overlays/prod/hpa.yaml`."""
    return found | {"env:" + _ENVS[word] for p in found if p.startswith("path:")
                    for word in re.split(r"[/._-]", p[5:]) if word in _ENVS}


_CONFIG = frozenset("env yaml yml toml ini cfg conf properties json tf tfvars".split())


def request_places(text: str) -> frozenset[str]:
    """Where the point's request applies: the places its asking clauses name,
    else (or beside environments alone) the configuration files of the point."""
    asked_places = places(requests(text))
    if any(not p.startswith("env:") for p in asked_places):
        return asked_places
    # (A request that says where, "in production", is not placed by the file
    # its argument opens on.)
    return asked_places | _config_places(text) | (
        frozenset() if asked_places else _subject_place(text))


# A point that opens on a file: "`sync/worker/consumer.py:97`의 배치 컨슈머는
# …", "`app/api.py:40`: …".
_OPENING_PATH = re.compile(
    r"\s*(?:[-*]\s+|\d+[.)]\s+)?`?([\w./-]+)(?::\d+)?`?(?=[\s:,(]|의|에서|에)")


def _subject_place(text: str) -> frozenset[str]:
    """The file a point opens on is what it is about: the request in it (a
    value for `stop_after_attempt` there) applies in that file, however it
    is worded."""
    m = _OPENING_PATH.match(text)
    if m is None or "/" not in m.group(1) or not is_file(m.group(1)):
        return frozenset()
    return _path_envs(frozenset({"path:" + m.group(1).lower()}))


@lru_cache(maxsize=8192)
def _config_places(text: str) -> frozenset[str]:
    """Where a request that names no place is asked: a configuration file its
    point names ("`deploy/staging.env`의 `CELERY_CONCURRENCY=8`은 과합니다. 2로
    낮춰 주세요"), not the code its argument cites."""
    # (A route the point names before its request is where it is asked; one
    # it cites after, "짧아질수록 `POST /login` 부하가 늘어납니다", is what the
    # change costs.)
    ends = [text.find(clause) + len(clause) for clause in asked(text) if clause in text]
    # (Nor one whose calls or load it measures: "`/auth/login` 호출이 6배
    # 늘었습니다" says what the change cost, wherever it stands.)
    head = _MEASURED.sub(" ", text[:max(ends)] if ends else text)
    return _path_envs(frozenset(p for p in places(text) if p.startswith("path:")
                                and p.rsplit(".", 1)[-1] in _CONFIG)
                      | {p for p in places(head) if not p.startswith(("path:", "env:"))})


_MEASURED = re.compile(r"`[^`\n]{1,80}`\s*(?:의\s*)?(?:호출|요청|부하|트래픽|응답\s*시간)"
                       r"(?:이|가|은|는|량|수)?(?=\s*(?:\d+\s*배|[^.\n]{0,20}?(?:늘었|늘어났|증가|급증)))"
                       r"|`[^`\n]{1,80}`\s+(?:calls|requests|traffic|load|latency)\s+"
                       r"(?:went\s+up|doubled|tripled|increased|grew|rose)\b", re.I)


def _serves(route: str, file: str) -> bool:
    """The file whose path ends in the route's words serves it: `/v1/orders`
    and `api/v1/orders.py` (two words at least: `/static/` names too little)."""
    if not (route.startswith("code:/") and file.startswith("path:")):
        return False
    words = [x for x in route[5:].split("/") if x]
    parts = file[5:].rsplit(".", 1)[0].split("/")
    return len(words) >= 2 and parts[-len(words):] == words


def same_place(a: list[str], b: list[str]) -> bool:
    """Unless both name environments and none in common (staging and
    production), or both name other places and none in common: the same
    route, or the same file, one path being the end of the other (`hpa.yaml`
    and `overlays/prod/hpa.yaml`, not `overlays/staging/hpa.yaml` and
    `overlays/prod/hpa.yaml`); a route and the API contract file describing it
    may be one place."""
    envs_a, envs_b = {x for x in a if x.startswith("env:")}, {x for x in b if x.startswith("env:")}
    if envs_a and envs_b and not envs_a & envs_b:
        return False
    rest_a, rest_b = [x for x in a if x not in envs_a], [x for x in b if x not in envs_b]
    if not (rest_a and rest_b):
        return True
    if any(x == y or (x.startswith("path:") and y.startswith("path:") and (
            x.endswith("/" + y[5:]) or y.endswith("/" + x[5:]))) or _one_route(x, y)
           or _serves(x, y) or _serves(y, x) for x in rest_a for y in rest_b):
        return True
    # None in common: two places, unless one is the contract of the other's
    # route (`openapi.yaml` and `/v2/profile`: the same field, not `gzip` in
    # `nginx/assets.conf` and for `/api/`).
    kinds_differ = not any(any(x.startswith(kind) for x in rest_a)
                           and any(y.startswith(kind) for y in rest_b)
                           for kind in ("path:", "code:"))
    return kinds_differ and any(_CONTRACT.search(x)
                                for x in rest_a + rest_b if x.startswith("path:"))


def _one_route(x: str, y: str) -> bool:
    """`/v2/embed/*` and `/v2/embed` (or `/v2/embed/widget`): a route and the
    routes under it, written as a pattern."""
    if not (x.startswith("code:/") and y.startswith("code:/")):
        return False
    bx, by = x[5:].rstrip("*").rstrip("/"), y[5:].rstrip("*").rstrip("/")
    if bx == by:
        return True
    return (x.endswith("/*") and (by + "/").startswith(bx + "/")) or (
        y.endswith("/*") and (bx + "/").startswith(by + "/"))


# The files that describe an API's routes.
_CONTRACT = re.compile(r"openapi|swagger|\.graphql$|\.proto$|api[-_.]?spec", re.I)


# Environments a request is for ("스테이징만", "`ENV=production`", "in prod").
_ENVS = {"staging": "staging", "stg": "staging", "스테이징": "staging",
         "production": "production", "prod": "production", "프로덕션": "production",
         "운영환경": "production", "운영서버": "production", "운영계": "production",
         "운영설정": "production", "sandbox": "sandbox", "샌드박스": "sandbox",
         # (`settings/local.py`, "로컬에서는": a developer's machine.)
         "local": "local", "로컬": "local"}
_ENV = re.compile(r"(?<![\w/.-])(?:staging|stg|production|prod|sandbox)(?![\w/-]|\.\w)"
                  r"|스테이징|프로덕션|운영\s*환경|운영\s*서버|운영\s*설정|운영계|샌드박스"
                  r"|로컬(?=에서|\s*환경|\s*개발)", re.I)
