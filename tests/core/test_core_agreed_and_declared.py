"""Look-alikes of contradictions from held-out 92 (studied after its one run):

- "`ON CONFLICT (image_id, size) DO UPDATE` 로 변경" in the owner's report
  declares no conflict (code, and a merge conflict, are no claim);
- "perf-bot 요청대로 `worker_concurrency` 를 8 로 올린 것에는 동의합니다." on
  a line of its own agrees with perf-bot's point on that name, so the
  author's next point ("다만 … memory limit 을 2Gi 로") reverses nothing; an
  agreement on one name leaves a dispute on another as it is;
- `maskAllInputs: true` and `recordCanvas: true` share a value, not a name."""

from __future__ import annotations

from test_core_detection import Sim

from bot.demands import declares_conflict, mentions_conflict
from bot.models import Role
from bot.topics import topic


def test_code_and_merges_declare_no_conflict() -> None:
    assert not mentions_conflict("data-bot 1: `ON CONFLICT (image_id, size) DO UPDATE` 로 변경")
    assert not declares_conflict("Rebased on main and resolved the merge conflict in `api.py`.")
    assert not declares_conflict("머지 충돌은 해결했습니다.")
    assert declares_conflict("두 요청은 서로 충돌해서 함께 반영할 수 없습니다.")


def test_booleans_inside_a_span_are_no_shared_name() -> None:
    a = topic("`maskAllInputs: true` 로 켜 주세요.")
    b = topic("`recordCanvas: true` 때문에 느립니다.")
    assert not (a.strong & b.strong)
    assert "code:none" in topic("DMARC `p=none` 은 안 됩니다.").strong  # a value a point is about


def _celery_room(agreement: str) -> Sim:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "이미지 큐가 밀립니다. `workers/celery_config.py` 를 튜닝해 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`worker_prefetch_multiplier` 를 1로 바꿨습니다.")
    sim.say(Role.REVIEWER, "1. CPU 사용률이 35% 입니다. `worker_concurrency` 를 4 에서 8 로 올려 주세요.",
            author="perf-bot")
    sim.say(Role.REVIEWER, "1. 재실행 시 중복 행이 생깁니다. upsert 로 바꿔 주세요.", author="data-bot")
    sim.say(Role.OWNER, "STEP_DONE\n- perf-bot 1: `worker_concurrency = 8` (`b3e71fd`)\n"
            "- data-bot 1: `ON CONFLICT (image_id, size) DO UPDATE` 로 변경")
    sim.say(Role.REVIEWER, "확인했습니다.", author="data-bot")
    sim.say(Role.REVIEWER, agreement + "\n1. 다만 concurrency 8 에서 워커 RSS 가 1.4GiB 인데"
            " `deploy/k8s/worker.yaml` 의 memory limit 은 1Gi 입니다. limit 을 2Gi 로 올려 주세요.",
            author="ops-bot")
    sim.say(Role.OWNER, "limit 을 올리겠습니다.")
    sim.end()
    return sim


def test_agreeing_with_the_other_reviewers_setting_then_asking_more_is_no_contradiction() -> None:
    sim = _celery_room("perf-bot 요청대로 `worker_concurrency` 를 8 로 올린 것에는 동의합니다.")
    assert sim.deadlocks() == []


def test_an_agreement_on_one_name_leaves_the_dispute_on_another() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "주문 API 응답 형식을 정리해 주세요.")
    sim.say(Role.OWNER, "STEP_DONE\n`created_at` 과 `status_label` 을 응답에 넣었습니다.")
    sim.say(Role.REVIEWER, "1. `created_at` 은 오프셋이 포함된 ISO 8601 문자열로 내보내 주십시오.\n"
            "2. `status_label` 이 한국어로 고정되어 있습니다. `Accept-Language` 를 따르도록 해"
            " 주십시오.", author="i18n-bot")
    sim.say(Role.REVIEWER, "`created_at` 은 문자열 대신 epoch 밀리초 정수로 내려 주십시오."
            " `status_label` 건은 i18n-bot 의견에 동의합니다.", author="fe-bot")
    sim.say(Role.OWNER, "결정되면 반영하겠습니다.")
    sim.end()
    assert [d.after_message for d in sim.contradictions()] == ["m4"]
