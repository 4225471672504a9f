"""One voice per thread, through the real Slack adapter against the fake Web API:
a thread whose task is asked in English hears only English from the bot, a
Korean one only Korean, whatever TRIBUNAL_LANGUAGE says; and nobody reads a
raw user id or a UTC time."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from bot.arbiter.language import is_in_language, word_scripts
from tests.fakes.slack_api import FakeSlackAPI
from tests.slack.conftest import make_settings
from tests.slack.slack_world import HUMAN, World

SPEECH = {
    "en": {
        "task": "Please fix the login redirect bug",
        "owner": "STEP_DONE: fixed the redirect in `auth/login.py`, and the tests pass.",
        "reviewer": "The session cookie is lost at line 42 of `auth/login.py`; it needs a fix.",
        "confirmation": "✅ User decision: 1. Go with the owner",
    },
    "ko": {
        "task": "로그인 리다이렉트 버그를 고쳐 주세요",
        "owner": "STEP_DONE: `auth/login.py`의 리다이렉트를 고쳤습니다. 테스트도 통과합니다.",
        "reviewer": "`auth/login.py` 42번째 줄에서 세션 쿠키가 사라집니다. 수정이 필요합니다.",
        "confirmation": "✅ 사용자 결정: 1. 오너 의견대로 진행",
    },
}
_SLACK_MARKUP = re.compile(r"<[^<>]*>")


def _texts(node: Any) -> list[str]:
    """Every piece of text a reader sees in a Slack payload (text and blocks)."""
    if isinstance(node, dict):
        found = [node["text"]] if isinstance(node.get("text"), str) else []
        for key, value in node.items():
            if key != "text" or not isinstance(value, str):
                found += _texts(value)
        return found
    if isinstance(node, list):
        return [t for item in node for t in _texts(item)]
    if isinstance(node, str) and node.startswith("["):
        try:
            return _texts(json.loads(node))  # blocks sent form-encoded as JSON
        except ValueError:
            return []
    return []


def bot_output(api: FakeSlackAPI) -> list[tuple[str, str]]:
    """(where, text) of every post, edit, ephemeral and slash-command reply."""
    out: list[tuple[str, str]] = []
    for method in ("chat.postMessage", "chat.update", "chat.postEphemeral"):
        for call in api.calls_to(method):
            out += [(method, text) for text in _texts(call.args)]
    out += [("response_url", str(r.get("text", ""))) for r in api.responses]
    return out


def in_language(text: str, lang: str) -> bool:
    prose = _SLACK_MARKUP.sub(" ", text)  # mentions and <!date> are rendered by Slack
    if not word_scripts(prose):
        return True  # "…", a bare mention: nothing to read
    if lang == "en":
        return "hangul" not in word_scripts(prose)
    return is_in_language(prose, "ko")


@pytest.mark.parametrize(("setting", "humans"), [("ko", "en"), ("en", "ko"), ("ko", "ko")])
async def test_a_thread_hears_only_its_own_language(
    slack_api: FakeSlackAPI, tmp_path: Path, setting: str, humans: str
) -> None:
    world = await World.create(slack_api, make_settings(slack_api, tmp_path, language=setting))
    try:
        await world.bind_roles()
        slack_api.calls.clear()
        slack_api.responses.clear()
        said = SPEECH[humans]
        thread = await world.human(said["task"])
        await world.argue(thread, rounds=3, owner=said["owner"], reviewer=said["reviewer"])
        verdict_ts, verdict = world.verdict(thread)
        values = world.button_values(verdict)
        assert values and verdict["text"].startswith("ESCALATE")

        world.clock.advance(4 * 3600 + 60)  # past reminder_after: the one reminder
        await world.quiet()
        await world.human("9", thread)  # no such option: told privately
        await world.click(values[0], user="UMALLORY", thread=thread, message_ts=verdict_ts)
        await world.click(values[0], user=HUMAN, thread=thread, message_ts=verdict_ts)
        await world.human("2", thread)  # a late answer: told who decided, and when
        await world.command("status", user=HUMAN)
        await world.command("threshold 99", user="UADMIN")
        await world.harness.settle()

        output = bot_output(slack_api)
        kinds = {where for where, _ in output}
        assert kinds == {"chat.postMessage", "chat.update", "chat.postEphemeral", "response_url"}
        assert len([1 for w, _ in output if w == "chat.postEphemeral"]) >= 3
        wrong = [(where, text) for where, text in output if not in_language(text, humans)]
        assert wrong == []

        posts = [c.args["text"] for c in world.thread_posts(thread)]
        assert said["confirmation"] in posts
        # Who decided and when: a mention and a local time, never an id or UTC.
        decided = json.dumps(world.message(verdict_ts)["blocks"], ensure_ascii=False)
        assert f"<@{HUMAN}>" in decided and "<!date^" in decided
        late = slack_api.calls_to("chat.postEphemeral")[-1].args["text"]
        assert f"<@{HUMAN}>" in late and "<!date^" in late
        for _, text in output:
            visible = _SLACK_MARKUP.sub(" ", text)
            assert HUMAN not in visible and "UTC" not in visible, text
    finally:
        await world.close()
