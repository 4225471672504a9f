"""Readings from held-out 95 and 96 (studied after their one run):

- a paragraph saying several open points again ("blocking a worker with
  `time.sleep` … Related to that, a 429 should be retried after
  `Retry-After` …") repeats each: a name another of the author's points
  holds is no new name;
- "While I was in there I added WebP output" is work beside the review, and a
  point put off for later ("tracked as MEDIA-412 and I'll pick it up right
  after merge") is what the reviewer's insistence answers;
- "나머지 두 건은 함께 처리할 수 없습니다" declares a conflict;
- "`max_retries`를 3으로 줄이면 계약 위반이고" asks no 3 (what would follow if
  it were 3), while "3으로 줄이면 됩니다" does."""

from __future__ import annotations

import pytest
from studied_rooms import first_deadlock
from test_core_detection import Sim

from bot.demands import declares_conflict
from bot.models import Role, Trigger
from bot.values import setting_values


def test_a_paragraph_saying_several_points_again_repeats_them() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Add retries with backoff to `webhooks/dispatcher.py`.")
    sim.say(Role.OWNER, "STEP_DONE\nAdded `RetryPolicy(max_attempts=5)`; 4xx are final.")
    sim.say(Role.REVIEWER, "1. No jitter; add full jitter.\n2. 429 is treated as final. Retry it,"
            " honouring `Retry-After`.\n3. The retries sleep inline via `time.sleep()`;"
            " re-enqueue onto the delayed queue instead.")
    sim.say(Role.OWNER, "Jitter is a non-issue at our volume, 429 stays final, and the sleep is"
            " fine for now. No code changes this round.")
    sim.say(Role.REVIEWER, "I'm still not comfortable with this. The biggest problem is blocking a"
            " worker with `time.sleep` for up to a minute, so please move the retry onto the"
            " delayed queue. Related to that, a 429 should be retried after `Retry-After`"
            " rather than dropped, and the backoff needs randomisation.")
    sim.say(Role.OWNER, "The current behaviour is deliberate and I'd like to keep it.")
    assert len(sim.state.findings) == 3
    assert all(f.history[-1].endswith("repeated") for f in sim.state.findings)


def test_work_beside_a_promise_fixes_nothing_and_insisting_repeats() -> None:
    sim = Sim(stall_threshold=2)
    sim.say(Role.USER, "Fix the thumbnails in `media/resize.py`.")
    sim.say(Role.OWNER, "STEP_DONE\n`resize.py` now runs `ImageOps.exif_transpose()` (`3c5e8af`).")
    sim.say(Role.REVIEWER, "`Image.open()` runs with no pixel limit, so a decompression bomb will"
            " OOM the worker. Set `Image.MAX_IMAGE_PIXELS` before decoding.")
    sim.say(Role.OWNER, "I'll handle the pixel limit in a follow-up once this lands.")
    sim.say(Role.REVIEWER, "The decompression-bomb guard shouldn't wait for a follow-up. Please"
            " add the limit in this PR.")
    sim.say(Role.OWNER, "Understood. The pixel cap is tracked as MEDIA-412 and I'll pick it up"
            " right after merge. While I was in there I added WebP output since it was a"
            " two-line change (`a90f6d2`).")
    sim.say(Role.REVIEWER, "WebP is fine by me. But MEDIA-412 sitting on the board doesn't"
            " protect production; the max-pixels check belongs in this change.")
    sim.end()
    [finding] = sim.state.findings
    assert finding.history[-1] == "R3: untouched, repeated"
    [deadlock] = sim.deadlocks()
    assert deadlock.trigger is Trigger.NO_PROGRESS and deadlock.after_message == "m7"


def test_cannot_handle_both_together_declares_a_conflict() -> None:
    assert declares_conflict("나머지 두 건은 함께 처리할 수 없습니다.")
    assert declares_conflict("두 요청은 동시에 적용할 수 없습니다.")
    assert not declares_conflict("두 건 모두 함께 처리했습니다.")


def test_a_value_in_a_condition_is_not_asked() -> None:
    assert setting_values("`max_retries`를 3으로 줄이면 계약 위반이고, 오히려 8 이상으로"
                          " 올려야 합니다.") == {">=8@"}
    assert setting_values("`max_retries`를 3으로 줄이면 됩니다.") == {"3@max_retries"}
    assert setting_values("`max_retries`는 3으로 줄여 주세요.") == {"3@max_retries"}


STUDIED = ["heldout95/h95_03", "heldout95/h95_09", "heldout96/h96_10", "heldout96/h96_12"]


@pytest.mark.parametrize("case", STUDIED)
def test_the_studied_rooms_read_as_labelled(case: str) -> None:
    """The rooms of held-out 95 and 96 these readings came from (after their
    one run), fed through the detector as the replay would."""
    got, want = first_deadlock(case)
    assert got == want
