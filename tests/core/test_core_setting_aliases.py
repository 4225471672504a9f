"""Two names the owner says are one setting.

"`SMTP_TIMEOUT`와 `mail.timeout`은 같은 설정입니다", "`MAIL_TIMEOUT_SECONDS`
overrides `mail.timeout`": a value one reviewer asks of one name and another
asks of the other name are values of one setting; when they cannot both hold
the reviewers contradict, even when the owner said it before either asked."""

from __future__ import annotations

from test_core_detection import Sim

from bot.models import Role
from bot.setting_aliases import aliases_said


def test_what_an_owner_says_makes_two_names_one() -> None:
    assert aliases_said(["`SMTP_TIMEOUT`와 `mail.timeout`은 같은 설정입니다."]) == [
        ("smtp_timeout", "timeout")]
    assert aliases_said(["`MAIL_TIMEOUT_SECONDS` overrides `mail.timeout` in production."]) == [
        ("mail_timeout_seconds", "timeout")]
    assert aliases_said(["한도는 `limits.yaml` 의 `upload.max_bytes` 이고, 운영에서는 환경 변수"
                         " `UPLOAD_MAX` 가 이 값을 덮어씁니다."]) == [("max_bytes", "upload_max")]
    assert aliases_said(["`REDIS_EXPIRE = CACHE_TTL`로 묶여 있습니다."]) == [
        ("redis_expire", "cache_ttl")]


def test_two_names_side_by_side_are_not_said_to_be_one() -> None:
    assert aliases_said(["`SMTP_TIMEOUT`와 `SMTP_RETRIES`를 추가했습니다."]) == []
    assert aliases_said(["`SMTP_TIMEOUT` and `IMAP_TIMEOUT` are different settings."]) == []
    assert aliases_said(["> `SMTP_TIMEOUT`와 `mail.timeout`은 같은 설정입니다."]) == []  # a quote


def _room(owner_says: str, second: str) -> Sim:
    sim = Sim(stall_threshold=3)
    sim.say(Role.USER, "메일 발송이 가끔 멈춥니다. SMTP 타임아웃을 설정으로 빼 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`mail/sender.py`에서 `SMTP_TIMEOUT`을 읽도록 했습니다. " + owner_says)
    sim.say(Role.REVIEWER, "대량 발송 때 서버 응답이 느립니다. `SMTP_TIMEOUT`을 60초 이상으로 늘려"
            " 주세요.", author="ops-bot")
    sim.say(Role.REVIEWER, second, author="ux-bot")
    sim.say(Role.OWNER, "두 분 의견을 기다리겠습니다.")
    sim.end()
    return sim


def test_values_asked_of_the_two_names_contradict() -> None:
    sim = _room("참고로 `SMTP_TIMEOUT`과 `mail.timeout`은 같은 설정입니다.",
                "가입 메일이 늦으면 사용자가 떠납니다. `mail.timeout`은 10초 이하로 줄여 주세요.")
    assert [d.after_message for d in sim.contradictions()] == ["m4"]


def test_without_the_owner_saying_so_two_names_are_two_settings() -> None:
    sim = _room("pytest 41 passed.",
                "가입 메일이 늦으면 사용자가 떠납니다. `mail.timeout`은 10초 이하로 줄여 주세요.")
    assert sim.contradictions() == []


def test_values_both_names_can_hold_do_not_contradict() -> None:
    sim = _room("참고로 `SMTP_TIMEOUT`과 `mail.timeout`은 같은 설정입니다.",
                "`mail.timeout`은 120초 이하면 됩니다.")
    assert sim.contradictions() == []
