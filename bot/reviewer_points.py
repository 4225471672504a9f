"""What one reviewer point is beside the task's findings: another point or
the same one again, what an acknowledgement names, which findings a bare
reference points at, the summary a new finding keeps. Pure tests that
`bot.reviewer_turn` asks while it reads a turn.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from bot import wording as w
from bot.demands import requests
from bot.finding import Finding, numbered_finding, test_anchors
from bot.findings import Clause, summary
from bot.topics import Topic, topic


def each_named(named: list[Finding], strong: frozenset[str]) -> bool:
    """Each finding owns a name of the clause the others lack, and the clause
    names nothing besides theirs (a new handler in the same file is new)."""
    theirs = [f.topic().strong for f in named]
    owned = all((mine & strong) - frozenset().union(*(t for t in theirs if t is not mine))
                for mine in theirs)
    return owned and strong <= frozenset().union(*theirs)


def new_error(errors: frozenset[str], finding: Finding) -> bool:
    """The message shows a failing test's output whose errors are none of
    those shown when the finding about that test was raised."""
    return bool(errors and finding.errors and test_anchors(finding)
                and errors.isdisjoint(finding.errors))


def acked_subject(text: str) -> frozenset[str]:
    """What an acknowledgement names besides saying it is done: "검수 반영
    확인했습니다" names 검수; "반영 확인했습니다", "Confirmed." name nothing."""
    # ("스테이징에서 다시 확인했습니다" says where, not what.)
    bare = _WHERE.sub(" ", w.ACK.sub(" ", text))
    return frozenset(t for t in topic(bare).terms if not t.startswith("~") and t not in w.ACK_WORDS)


_WHERE = re.compile(r"\S+(?:에서|에서도|에서는)(?!\S)"
                    r"|\b(?:on|in|at|against|locally|again|다시)\b(?:\s+(?:the\s+)?\S+)?", re.I)


def lone(point_finding: dict[int, Finding], finding: Finding) -> bool:
    """The finding stands for one point of the turn, not several."""
    return sum(1 for f in point_finding.values() if f is finding) == 1


def other_point(t: Topic, finding: Finding, siblings: Iterable[Finding] = ()) -> bool:
    """A new point rather than the finding again: the same file or function with
    a name the finding never had, or another file altogether. A
    clause that names nothing the finding could clash with is judged by terms.
    (A name one of the author's other findings has, `siblings`, is no new
    name: "blocking a worker with `time.sleep` … Related to that, a 429 should
    be retried after `Retry-After`" says two points again in one paragraph.)"""
    known = {a for a in finding.anchors if a.startswith(("path:", "code:"))}
    names = {a for a in t.strong if a.startswith(("path:", "code:"))}
    if names & known:
        theirs = {a for f in siblings if f is not finding for a in f.anchors}
        return bool(names - known - theirs)
    # No name in common, but both name files: another place. (Two functions are
    # often the same point named by its caller and by its helper: terms decide.)
    return any(a.startswith("path:") for a in names) and any(
        a.startswith("path:") for a in known
    )


def names_only(t: Topic, finding: Finding) -> bool:
    """The clause itself names the finding's files or functions and nothing
    else (its line may go on about another point: "…여전히 `'₩' + amount`로
    그리고 있습니다. plural 키는 … `t('checkout.items_count')`에 `count`를
    넘기지 않아")."""
    names = {a for a in t.strong if a.startswith(("path:", "code:"))}
    return bool(names) and names <= set(finding.anchors)


def referenced_findings(
    clause: Clause, open_before: list[Finding], settled: set[str], order: list[Finding]
) -> list[Finding]:
    if clause.labels:
        return [f for f in open_before if f.label in clause.labels]
    if clause.ordinals and not clause.everything:
        # "2번은 여전히": point 2 of the author's list, as `match_targets` counts it.
        picked = [numbered_finding(order, n) for n in clause.ordinals if 0 < n <= len(order)]
        return [f for f in picked if f in open_before]
    if clause.remaining:
        return [f for f in open_before if f.label not in settled]
    # No selector ("as I said last time"): every finding still open.
    return [f for f in open_before if f.label not in settled]


def finding_summary(first: str, point: str) -> str:
    """What a finding asks for, where its point says so ("Set X to the list"),
    rather than its first sentence (often the problem found): the summary names
    the demand in rulings, options and `/arbiter status`. A request that names
    nothing ("1분으로 줄여 주십시오") keeps the sentence that says what it is about."""
    asked = requests(point)
    if asked == point:
        return summary(first)
    if any(a.startswith(("path:", "code:")) for a in topic(asked).anchors):
        return summary(asked)
    if first in asked or len(first) > 100:  # ("…까지만 하고, …": the request holds it)
        return summary(asked if first in asked else first)
    return summary(f"{first} {asked}")
