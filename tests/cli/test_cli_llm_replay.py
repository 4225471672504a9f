"""`tribunal replay --json` with a real LLM backend (a local fake OpenAI server)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from tests.fakes.llm_servers import FakeLLMServer, Scripted

TRANSCRIPT = Path(__file__).parent.parent / "transcripts" / "circular_en.jsonl"
SECRET_VARS = ("SLACK_", "DISCORD_", "TRIBUNAL_", "OPENAI_", "ANTHROPIC_")


async def replay(
    env: dict[str, str], transcript: Path = TRANSCRIPT
) -> tuple[int, list[dict[str, object]], str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(SECRET_VARS)}
    clean.update(env)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "bot", "replay", str(transcript), "--json", env=clean,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 120)
    events = [json.loads(line) for line in out.decode().splitlines() if line.strip()]
    return proc.returncode or 0, events, err.decode()


async def test_replay_with_openai_backend_reports_llm_source(tmp_path: Path) -> None:
    verdict = ("REVISE The reviewer is right: shop/cart.py:88 `total()` rounds before summing.\n"
               "Fix `total()` to sum first, then round once; keep the clock mock out of it.")
    async with FakeLLMServer() as fake:
        fake.reply(verdict)
        code, events, err = await replay({
            "TRIBUNAL_DATABASE": str(tmp_path / "llm.db"),
            "TRIBUNAL_ARBITER_BACKEND": "openai",
            "TRIBUNAL_ARBITER_BASE_URL": fake.openai_base_url,
            "TRIBUNAL_ARBITER_MODEL": "test-model",
            "OPENAI_API_KEY": "sk-test-not-a-real-key",
        })
        prompt = fake.prompt_of(0)
    assert code == 0, err
    assert "sk-test-not-a-real-key" not in err
    kinds = [e["event"] for e in events]
    assert kinds[:2] == ["deadlock", "verdict"]
    assert events[1]["verdict"] == "REVISE" and events[1]["source"] == "llm"
    assert events[1]["options"] == []
    # REVISE starts a new epoch: later digits are plain human messages, not answers.
    assert "escalation_answered" not in kinds
    assert "shop/cart.py:88" in prompt and "no_progress" in prompt


async def test_replay_with_unreachable_backend_falls_back(tmp_path: Path) -> None:
    code, events, err = await replay({
        "TRIBUNAL_DATABASE": str(tmp_path / "down.db"),
        "TRIBUNAL_ARBITER_BACKEND": "openai",
        "TRIBUNAL_ARBITER_BASE_URL": "http://127.0.0.1:9/v1",
        "TRIBUNAL_ARBITER_RETRIES": "0",
        "TRIBUNAL_ARBITER_TIMEOUT": "2",
        "OPENAI_API_KEY": "sk-test",
    })
    assert code == 0, err
    verdict = next(e for e in events if e["event"] == "verdict")
    assert verdict["verdict"] == "ESCALATE" and verdict["source"] == "fallback"
    assert len(verdict["options"]) >= 2  # type: ignore[arg-type]
    assert "escalation_answered" in [e["event"] for e in events]


async def test_replay_contradiction_with_a_ruling(tmp_path: Path) -> None:
    # Two reviewers: sec-bot wants the permission cache TTL at 1 minute (F1),
    # perf-bot raises it to 1 hour (F3). The arbiter upholds F1, retires F3.
    transcript = Path(__file__).parent.parent / "detection" / "corpus" / "multi_03.jsonl"
    verdict = ("REVISE 권한 회수가 즉시 반영되어야 하므로 보안 요구가 우선합니다. "
               "`authz/cache.py`의 `PERMISSION_CACHE_TTL`을 60초로 두십시오.\n"
               "UPHELD: F1\nRETIRED: F3")
    async with FakeLLMServer() as fake:
        fake.reply(verdict)
        code, events, err = await replay({
            "TRIBUNAL_DATABASE": str(tmp_path / "rule.db"),
            "TRIBUNAL_ARBITER_BACKEND": "openai",
            "TRIBUNAL_ARBITER_BASE_URL": fake.openai_base_url,
            "OPENAI_API_KEY": "sk-test",
        }, transcript)
        prompt = fake.prompt_of(0)
    assert code == 0, err
    deadlock, posted = events[0], events[1]
    assert deadlock["event"] == "deadlock" and deadlock["trigger"] == "contradiction"
    assert posted["event"] == "verdict" and posted["ruling"] == {"upheld": "F1", "retired": "F3"}
    assert "RETIRED:" not in str(posted["text"]) and "F3" in str(posted["text"])
    assert 'label="F1" author="sec-bot"' in prompt and 'label="F3" author="perf-bot"' in prompt
    assert "UPHELD: F<n>" in prompt


# -- the optional progress judge (TRIBUNAL_PROGRESS_JUDGE=llm) ---------------------

STUCK = Path(__file__).parent.parent / "detection" / "corpus" / "ko_12.jsonl"


async def judged_replay(tmp_path: Path, fake: FakeLLMServer, **env: str) -> list[dict[str, object]]:
    code, events, err = await replay({
        "TRIBUNAL_DATABASE": str(tmp_path / "judge.db"),
        "TRIBUNAL_ARBITER_BACKEND": "openai",
        "TRIBUNAL_ARBITER_BASE_URL": fake.openai_base_url,
        "OPENAI_API_KEY": "sk-test",
        "TRIBUNAL_PROGRESS_JUDGE": "llm",
        "TRIBUNAL_ARBITER_RETRIES": "0",
        **env,
    }, STUCK)
    assert code == 0, err
    return events


async def test_the_judge_settles_an_uncertain_repeat(tmp_path: Path) -> None:
    # The rules read the reviewer's rewording as the same finding (a deadlock
    # at m7, as labelled); a judge that reads it as a new point changes that.
    async with FakeLLMServer() as fake:
        fake.default = Scripted(text='{"answers": [{"id": "q1", "answer": "new"}]}')
        events = await judged_replay(tmp_path, fake)
        judge_prompts = [fake.prompt_of(i) for i in range(len(fake.requests))]
    assert judge_prompts and '"side": "reviewer"' in judge_prompts[0]
    assert "25초 안에 끝나지 않는 작업은 여전히 유실됩니다" in judge_prompts[0]
    assert not [e for e in events if e["event"] == "deadlock" and e["after_message"] == "m7"]


async def test_garbage_from_the_judge_keeps_the_rules(tmp_path: Path) -> None:
    async with FakeLLMServer() as fake:
        fake.default = Scripted(text="I think it is probably new, maybe.")
        events = await judged_replay(tmp_path, fake)
    deadlocks = [e for e in events if e["event"] == "deadlock"]
    assert deadlocks and deadlocks[0]["after_message"] == "m7"


async def test_a_slow_judge_times_out_and_the_rules_decide(tmp_path: Path) -> None:
    async with FakeLLMServer() as fake:
        fake.default = Scripted(text='{"answers": [{"id": "q1", "answer": "new"}]}', delay=5)
        events = await judged_replay(tmp_path, fake, TRIBUNAL_PROGRESS_JUDGE_TIMEOUT="0.5",
                                     TRIBUNAL_ARBITER_TIMEOUT="0.5")
    deadlocks = [e for e in events if e["event"] == "deadlock"]
    assert deadlocks and deadlocks[0]["after_message"] == "m7"
