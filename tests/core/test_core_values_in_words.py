"""Values one reviewer names in code and another asks in words, as held-out
rooms wrote them: a cloud region by its place ("미국 동부 리전"), a log level
lowered ("`WARNING`으로 내려"), CORS opened to every origin in Korean, and a
reduction forbidden in the verb's other form ("줄이면 안 됩니다" against
"줄여 주십시오"), and caching asked in words ("check back with our server
every time") against `immutable`."""

from __future__ import annotations

from test_core_ledger_wording import _finding

from bot.contradictions import reverses
from bot.values import setting_values


def test_a_region_named_by_its_place() -> None:
    assert setting_values("버킷은 미국 동부(버지니아 북부) 리전에 두어야 합니다.") == {"=us-east-1@"}
    assert setting_values("Move the bucket to the Frankfurt region.") == {"=eu-central-1@"}
    # Without a word for a region, a city is a city (or a time zone).
    assert setting_values("서울 시간 기준으로 바꿔 주세요.") == {"=tz:asia/seoul@"}
    assert setting_values("Please ask the Seoul team before merging.") == set()
    pinned = _finding("F1", "compliance-bot", "`region = \"ap-northeast-2\"`로 고정해야 합니다.")
    moved = _finding("F3", "perf-bot", "요청의 약 90%가 북미 고객사에서 발생합니다. 버킷은 미국 "
                                       "동부(버지니아 북부) 리전에 두어야 합니다.")
    assert reverses(moved, pinned)
    same = _finding("F3", "perf-bot", "버킷은 서울 리전에 두어야 합니다.")
    assert not reverses(same, pinned)


def test_a_level_lowered_is_a_value() -> None:
    assert setting_values("`payments` 로거 레벨을 `WARNING`으로 내려 주십시오.") == {
        "=warning@payments"}
    raised = _finding("F1", "ops-bot", "운영 환경에서도 `payments` 로거 레벨을 `DEBUG`로 올려 주십시오.")
    lowered = _finding("F3", "privacy-bot", "운영 환경의 결제 로그는 경고 이상만 남겨야 합니다. "
                                            "`payments` 로거 레벨을 `WARNING`으로 내려 주십시오.")
    assert reverses(lowered, raised)


def test_every_origin_asked_in_korean() -> None:
    assert setting_values("출처 제한을 없애고 다시 모든 도메인에서 호출되도록 열어 주세요.") == {"=*@"}
    assert setting_values("Please drop the origin restriction.") == {"=*@"}
    assert setting_values("`allow_origins`를 `https://partner.example.com` 명시 목록으로 "
                          "제한해 주세요.") == {"!=*@allow_origins"}
    listed = _finding("F1", "sec-bot", "`allow_origins`를 `https://partner.example.com` 명시 "
                                       "목록으로 제한해 주세요.")
    opened = _finding("F2", "fe-bot", "파트너사마다 서브도메인이 달라서 목록을 계속 관리할 수가 "
                                      "없습니다. 출처 제한을 없애고 다시 모든 도메인에서 호출되도록 "
                                      "열어 주세요.")
    assert reverses(opened, listed)


def test_a_reduction_forbidden_in_the_base_form() -> None:
    cut = _finding("F1", "privacy-bot", "`logs/access/` 보관 기간을 90일로 줄여 주십시오.")
    kept = _finding("F3", "security-bot", "`logs/access/` 보관 기간을 90일로 줄이면 안 됩니다.")
    assert reverses(kept, cut)
    # ("하여" is 하다's form, no verb ending in 이.)
    other = _finding("F3", "security-bot", "`logs/access/` 보관 기간은 검토하여 주십시오.")
    assert not reverses(other, cut)


def test_caching_asked_in_words_against_immutable() -> None:
    long_lived = _finding("F1", "perf-bot", "Serve product photos with `Cache-Control: public, "
                                            "max-age=31536000, immutable`.")
    check_back = _finding("F4", "content-bot", "Product images must not be kept in browser caches like "
                                               "that; browsers should check back with our server "
                                               "every time before showing a stored copy.")
    assert "=no-cache@cache-control" in setting_values(
        "browsers should check back with our server every time before showing a stored copy")
    assert reverses(check_back, long_lived)
    # Revalidating beside a lifetime without `immutable` is no conflict.
    fresh = _finding("F2", "perf-bot", "Serve product photos with `Cache-Control: public, max-age=600`.")
    assert not reverses(check_back, fresh)
    # Words about caching that ask no directive give none.
    assert not any(v.endswith("@cache-control") for v in setting_values(
        "The cache hit rate is 95% on product pages."))
