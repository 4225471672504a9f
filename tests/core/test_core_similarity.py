from bot.similarity import compare, features, similarity

T = 0.5


def test_first_review_is_always_new() -> None:
    assert compare(None, "anything", T).is_new


def test_english_reordered_rephrased_repeat_is_not_new() -> None:
    a = ("`login()` in src/auth.py:42 does not check for a null session. "
         "Also tests/test_auth.py fails.")
    b = ("tests/test_auth.py is still failing, and src/auth.py:42 `login()` "
         "still lacks the null session check.")
    result = compare(a, b, T)
    assert not result.is_new
    assert result.similarity >= T


def test_korean_rephrased_repeat_is_not_new() -> None:
    a = "세션 만료 처리가 잘못되었습니다. 토큰 갱신 로직을 확인해 주세요."
    b = "토큰 갱신 로직을 다시 확인해 주세요. 세션 만료 처리가 여전히 잘못되어 있습니다."
    assert not compare(a, b, T).is_new


def test_korean_politeness_change_is_not_new() -> None:
    a = "현재 구현이 맞다고 생각합니다. 미들웨어에서 이미 null 체크를 합니다."
    b = "앞서 말씀드렸듯이 미들웨어가 null 체크를 이미 하므로 현재 구현이 맞습니다."
    assert not compare(a, b, T).is_new


def test_new_finding_in_new_file_is_new() -> None:
    a = "src/auth.py:42 의 `login()` 에서 세션 null 체크가 빠져 있습니다."
    b = "src/auth.py:42 의 `login()` 에서 세션 null 체크가 빠져 있습니다. src/db.py:10 도 확인하세요."
    result = compare(a, b, T)
    assert result.is_new
    assert "path:src/db.py:10" in result.new_fingerprints


def test_unrelated_feedback_is_new() -> None:
    a = "Please add retries to the HTTP client and log failures."
    b = "The cache invalidation logic is wrong: entries never expire after update."
    assert compare(a, b, T).is_new
    ko_a = "세션 만료 처리가 잘못되었습니다. 토큰 갱신 로직을 확인해 주세요."
    ko_b = "에러 메시지가 사용자에게 영어로 표시됩니다. 한국어 번역을 추가해 주세요."
    assert compare(ko_a, ko_b, T).is_new


def test_fingerprints_cover_paths_identifiers_lines_and_ids() -> None:
    fp = features("See F-12 and #34: `parse_config` in app/config.py line 7, 12번 줄").fingerprints
    assert {"id:f-12", "id:#34", "code:parse_config", "path:app/config.py", "line:7",
            "line:12"} <= fp


def test_similarity_is_symmetric_and_bounded() -> None:
    a, b = features("alpha beta gamma delta"), features("gamma delta epsilon")
    assert similarity(a, b) == similarity(b, a)
    assert 0.0 <= similarity(a, b) <= 1.0
    assert similarity(features(""), features("")) == 1.0


def test_status_words_do_not_make_turns_similar() -> None:
    assert compare("BLOCKED database is down", "BLOCKED need the design doc", T).is_new


def test_threshold_is_a_setting() -> None:
    a = "현재 구현이 맞다고 생각합니다. 미들웨어에서 이미 null 체크를 합니다."
    b = "앞서 말씀드렸듯이 미들웨어가 null 체크를 이미 하므로 현재 구현이 맞습니다."
    assert compare(a, b, 0.99).is_new
    assert not compare(a, b, 0.3).is_new


def test_times_and_ports_are_not_line_numbers() -> None:
    a = "The test run at 10:31 against localhost:8080 still fails: `login()` returns 500."
    b = "The test run at 10:47 against localhost:8080 still fails: `login()` returns 500."
    result = compare(a, b, T)
    assert not result.is_new and result.new_fingerprints == ()
    ko_a = "14:05 실행 로그에서도 `refresh()` 가 여전히 실패합니다."
    ko_b = "14:09 실행 로그에서도 `refresh()` 가 여전히 실패합니다."
    assert not compare(ko_a, ko_b, T).is_new
    assert "line:42" in features("see src/auth.py:42").fingerprints
