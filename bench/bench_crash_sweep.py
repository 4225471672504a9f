"""Crash sweep: `tribunal run` SIGKILLed at 100 distinct kill points, then restarted.

Each trial runs the real process in Slack HTTP mode against the fake Web API
(127.0.0.1, Slack's documented rate limits enforced) with
`TRIBUNAL_FAULT=<point>:<n>` (bot/faults.py): it kills itself the n-th time
it reaches the point. The trial plays one long conversation in one channel,
restarting the process without a fault whenever it died (1.15 s after the
kill: a real restart outlasts Slack's one-second pacing window, and the new
process knows nothing of the old one's pacing), and waits until nothing is
left to do. The conversation:

1. `/arbiter roles`, `/arbiter max-rounds 30` (admin), `/arbiter threshold 2`
   (a member: refused);
2. thread 1: a task, a BLOCKED owner, the reviewer -> ESCALATE; a digit out
   of range (a private notice), then `1`;
3. thread 2: the same -> ESCALATE; a click by a member who may not answer (a
   private refusal), then the requester's click on option 1;
4. `/arbiter summon` (the channel's latest room, thread 2) -> ESCALATE; `2`;
5. `/arbiter status`; thread 3: a task, BLOCKED, reviewer -> ESCALATE; `1`.

`--quick` plays only the roles command, thread 1 (without the digit out of
range) and the status command.

Kill points: a first trial without a fault (the census) counts how often the
conversation reaches each point: every acknowledgement (`after_ack`, events,
clicks and commands alike), every message applied (`after_apply`), every
click or command applied (`after_action`) and every post, edit or private
reply around its platform call (`before_post`, `after_post_before_record`,
`after_record`). The kill points are (point, n) for n up to that count, taken
round-robin over the points, the first `--count` of them (100); each is one
trial, and each trial is checked:

- every request the fake Slack got a 200 for (an event, a click, a command) is
  in storage (acknowledged vs stored) and was processed;
- the end state: the four escalations answered as asked (option, digit or
  button, by whom), the settings and bindings the admin gave and not the
  member's, one audit row per change, no unfinished arbitration;
- no post shown twice (the same idempotency key twice in a thread, or more
  confirmations than answers) and every command answered, once; a private
  reply shown twice is counted apart (ephemeral messages cannot be looked up:
  the platform's limit, bot/outbox.py);
- the process crashed exactly once, at its kill point; and no 429.

A request the process did not answer (it died meanwhile) is sent again
unchanged, as Slack retries an event (a user would repeat a command or a
click; the same trigger id makes the repeat a redelivery).

    python -m bench.bench_crash_sweep [--count 100] [--jobs 3] [--quick] [--keep]

In the suite (`python -m bench --only crash`) the figures are rows:
`crash_kill_points`, `crash_acked_lost`, `crash_duplicate_posts`,
`crash_failed_trials`, `crash_private_repeats`, `crash_429`. Nothing here is a
test: the figures are printed, the exit status is 0.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # `tests` is not a package; make tests.fakes importable
    sys.path.insert(0, str(ROOT))

from adapters.slack.transport import metadata_key  # noqa: E402
from bench.harness import Options, Row  # noqa: E402
from tests.fakes.slack_api import SLACK_LIMITS, FakeSlackAPI  # noqa: E402
from tests.slack.conftest import (  # noqa: E402
    SIGNING_SECRET,
    block_action,
    encode_body,
    message_event,
    signed_headers,
    slash_command,
)

POINTS = ("after_ack", "after_apply", "after_action", "before_post",
          "after_post_before_record", "after_record")
POSTING = frozenset({"before_post", "after_post_before_record", "after_record"})
CHANNEL = "C0WATCH"
THREADS = ("1795946400.000100", "1795946500.000100", "1795946600.000100")
CONFIRMATION = "✅ 사용자 결정"
OUT_OF_RANGE = "⚠️ 9번"
NOT_ALLOWED = "⛔"
RESTART_AFTER = 1.15  # seconds after a kill (Slack's pacing window is one second)
STEP_WITHIN = 120.0  # seconds for one step of the conversation
FULL_COUNT, QUICK_COUNT = 100, 12


@dataclass
class Trial:
    point: str | None  # None: the census (no fault)
    nth: int = 0
    crashes: int = 0
    acked: set[str] = field(default_factory=set)  # requests answered 200 (their storage keys)
    acks: int = 0  # 200s received (redeliveries included): the census of `after_ack`
    lost: list[str] = field(default_factory=list)  # acknowledged, not in storage
    unprocessed: int = 0
    duplicates: int = 0  # posts shown twice, confirmations beyond one per answer
    private_repeats: int = 0  # ephemeral replies or notices shown twice
    problems: list[str] = field(default_factory=list)
    rate_limited: Counter[str] = field(default_factory=Counter)
    census: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def label(self) -> str:
        return f"{self.point}:{self.nth}" if self.point else "census"

    @property
    def reached(self) -> bool:
        """The process died at its kill point, once (the census: never)."""
        return self.crashes == (1 if self.point else 0)

    @property
    def ok(self) -> bool:
        return (self.reached and not self.lost and not self.unprocessed
                and not self.duplicates and not self.problems and not self.rate_limited)


class Process:
    """One `tribunal run` on the trial's database."""

    def __init__(self, api: FakeSlackAPI, database: Path, log: Path) -> None:
        self.api, self.database, self.log = api, database, log
        self.port = free_port()
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self, fault: str | None, http: aiohttp.ClientSession) -> None:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("TRIBUNAL_", "SLACK_", "DISCORD_"))
               and "proxy" not in k.lower()}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        env.update({"SLACK_BOT_TOKEN": self.api.bot_token, "SLACK_SIGNING_SECRET": SIGNING_SECRET,
                    "TRIBUNAL_SLACK_MODE": "http", "TRIBUNAL_SLACK_API_URL": self.api.url,
                    "TRIBUNAL_HTTP_PORT": str(self.port), "TRIBUNAL_HTTP_HOST": "127.0.0.1",
                    "TRIBUNAL_DATABASE": str(self.database),
                    "TRIBUNAL_ARBITER_BACKEND": "none"})
        if fault:
            env["TRIBUNAL_FAULT"] = fault
        with self.log.open("ab") as log:
            self.proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bot", "run", cwd=self.database.parent, env=env,
                stdout=asyncio.subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.returncode is not None:
                return  # died at start-up (a kill point in the start's own work)
            try:
                async with http.get(f"http://127.0.0.1:{self.port}/healthz") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.05)
        raise RuntimeError("tribunal run did not become healthy")

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def kill(self) -> None:
        if self.proc is None:
            return
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGKILL)
        await self.proc.wait()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rows(database: Path, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if not database.exists():
        return []
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=5) as db:
            return db.execute(sql, args).fetchall()
    except sqlite3.OperationalError:  # not migrated yet (the first start died early)
        return []


class Driver:
    """Speaks for the people and agents of the channel; keeps the bot running."""

    def __init__(self, trial: Trial, api: FakeSlackAPI, http: aiohttp.ClientSession,
                 workdir: Path) -> None:
        self.trial, self.api, self.http = trial, api, http
        self.database = workdir / f"{trial.label.replace(':', '-')}.db"
        self.log = workdir / f"{trial.label.replace(':', '-')}.log"
        self.proc = Process(api, self.database, self.log)
        self.killed_at = 0.0
        self.commands: list[tuple[str, str]] = []  # (text, response_url token)
        self._ts = 0

    async def open(self) -> None:
        fault = f"{self.trial.point}:{self.trial.nth}" if self.trial.point else None
        await self.proc.start(fault, self.http)

    async def alive(self) -> None:
        """Restart a process that died (without a fault), as an operator's supervisor would."""
        if self.proc.alive:
            return
        await self.proc.kill()
        self.trial.crashes += 1
        self.killed_at = time.monotonic()
        await asyncio.sleep(max(0.0, self.killed_at + RESTART_AFTER - time.monotonic()))
        self.proc = Process(self.api, self.database, self.log)
        await self.proc.start(None, self.http)

    async def close(self) -> None:
        await self.proc.kill()

    async def until(self, check: Callable[[], object], what: str,
                    within: float = STEP_WITHIN) -> bool:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            await self.alive()
            if check():
                return True
            await asyncio.sleep(0.05)
        self.trial.problems.append(f"timed out waiting for {what}")
        return False

    async def post(self, body: dict[str, Any], key: str) -> None:
        """POST one signed request until it is acknowledged (200)."""
        raw, ctype = encode_body(body)
        for _ in range(20):
            await self.alive()
            try:
                async with self.http.post(
                        f"http://127.0.0.1:{self.proc.port}/slack/events", data=raw.encode(),
                        headers=signed_headers(raw, ctype)) as r:
                    if r.status == 200:
                        self.trial.acked.add(key)
                        self.trial.acks += 1
                        return
            except aiohttp.ClientError:
                pass  # died while handling it: sent again, as Slack retries
            await asyncio.sleep(0.1)
        self.trial.problems.append(f"never acknowledged: {key}")

    # -- the people ---------------------------------------------------------------
    def next_ts(self, base: float = 1795947000.0) -> str:
        self._ts += 1
        return f"{base + self._ts:.6f}"

    async def command(self, text: str, user: str) -> None:
        url = self.api.response_url()
        token = url.rsplit("/", 1)[1]
        body = slash_command(text, user=user, response_url=url)
        self.commands.append((text, token))
        await self.post(body, f"command:{body['trigger_id']}")
        await self.until(lambda: bool(self.api.responses_to.get(token)),
                         f"the reply to /arbiter {text}")

    async def say(self, text: str, thread: str, *, who: str = "human",
                  ts: str | None = None) -> str:
        ts = ts or self.next_ts()
        if who == "owner":
            body = message_event(text, user=None, bot_id="BOWNER", subtype="bot_message",
                                 thread_ts=thread, ts=ts)
        elif who == "reviewer":
            body = message_event(text, user="UREVIEWER", bot_id="BREVIEW", thread_ts=thread,
                                 ts=ts)
        else:
            body = message_event(text, user=who if who != "human" else "UALICE",
                                 thread_ts=None if ts == thread else thread, ts=ts)
        self.api.add_message(CHANNEL, body["event"])  # Slack keeps it whatever the bot does
        await self.post(body, f"{CHANNEL}:{ts}")
        return ts

    async def click(self, escalation: int, option: int, user: str, thread: str) -> str:
        value = f"tribunal:esc:{escalation}:{option}"
        found: list[str] = []

        def posted() -> bool:
            for (_, ts), message in self.api.messages.items():
                if any(value == element.get("value") for block in message.get("blocks", [])
                       if block.get("type") == "actions" for element in block["elements"]):
                    found.append(ts)
                    return True
            return False

        if not await self.until(posted, f"the buttons of escalation {escalation}"):
            return ""
        body = block_action(value, user=user, thread_ts=thread, message_ts=found[0],
                            response_url=self.api.response_url())
        key = f"trigger:{body['trigger_id']}"
        await self.post(body, key)
        return key

    # -- waiting on the bot ---------------------------------------------------------
    def escalations(self) -> int:
        return len(rows(self.database, "SELECT id FROM escalations"))

    def answered(self, escalation: int) -> bool:
        return rows(self.database, "SELECT status FROM escalations WHERE id = ?",
                    (escalation,)) == [("answered",)]

    def processed(self, key: str) -> bool:
        return bool(rows(self.database, "SELECT 1 FROM messages WHERE message_id = ?"
                                        " AND processed = 1", (key,))
                    or rows(self.database, "SELECT 1 FROM actions WHERE delivery_id = ?"
                                           " AND processed = 1", (key,)))

    async def deadlock(self, thread: str, number: int) -> None:
        """A task, a BLOCKED owner, the reviewer: escalation `number` (1-based)."""
        await self.say("로그인 버그 고쳐줘", thread, ts=thread)
        await self.say("BLOCKED: DB 접속 정보가 없어 진행할 수 없습니다.", thread, who="owner")
        await self.say("접속 정보 없이도 목(mock)으로 테스트할 수 있습니다.", thread,
                       who="reviewer")
        await self.until(lambda: self.escalations() >= number, f"escalation {number}")

    async def digit(self, text: str, thread: str, escalation: int | None) -> None:
        ts = await self.say(text, thread)
        if escalation is None:
            await self.until(lambda: self.processed(f"{CHANNEL}:{ts}"), f"the digit {text}")
        else:
            await self.until(lambda: self.answered(escalation), f"escalation {escalation}")

    def settled(self) -> bool:
        db = self.database
        return not (rows(db, "SELECT id FROM outbox WHERE status = 'pending'")
                    or rows(db, "SELECT seq FROM messages WHERE processed = 0")
                    or rows(db, "SELECT id FROM actions WHERE processed = 0")
                    or rows(db, "SELECT id FROM arbitrations WHERE status IN"
                                " ('pending', 'running')"))


@dataclass(frozen=True)
class Answer:
    option: int
    kind: str
    by: str


async def play(d: Driver, quick: bool) -> list[Answer]:
    """The conversation; returns how each escalation must end."""
    t1, t2, t3 = THREADS
    await d.command("roles owner:BOWNER reviewer:<@UREVIEWER|rev>", "UADMIN")
    if quick:
        await d.deadlock(t1, 1)
        await d.digit("1", t1, 1)
        await d.command("status", "UALICE")
        return [Answer(1, "digit", "UALICE")]
    await d.command("max-rounds 30", "UADMIN")
    await d.command("threshold 2", "UMALLORY")  # not an admin: refused
    await d.deadlock(t1, 1)
    await d.digit("9", t1, None)  # out of range: a private notice
    await d.digit("1", t1, 1)
    await d.deadlock(t2, 2)
    refused = await d.click(2, 1, "UMALLORY", t2)  # may not answer: a private refusal
    await d.until(lambda: d.processed(refused), "the refused click applied")
    await d.click(2, 1, "UALICE", t2)
    await d.until(lambda: d.answered(2), "escalation 2")
    await d.command("summon", "UADMIN")  # the channel's latest room: thread 2
    await d.until(lambda: d.escalations() >= 3, "escalation 3 (the summon)")
    await d.digit("2", t2, 3)
    await d.command("status", "UALICE")
    await d.deadlock(t3, 4)
    await d.digit("1", t3, 4)
    return [Answer(1, "digit", "UALICE"), Answer(1, "button", "UALICE"),
            Answer(2, "digit", "UALICE"), Answer(1, "digit", "UALICE")]


def check(d: Driver, answers: list[Answer], quick: bool) -> None:
    """Everything a trial must end with (see the module docstring)."""
    t, db, api = d.trial, d.database, d.api
    stored = {r[0] for r in rows(db, "SELECT message_id FROM messages")}
    stored |= {r[0] for r in rows(db, "SELECT delivery_id FROM actions")}
    t.lost = sorted(t.acked - stored)
    t.unprocessed = len(rows(db, "SELECT seq FROM messages WHERE processed = 0")) + len(
        rows(db, "SELECT id FROM actions WHERE processed = 0"))
    got = rows(db, "SELECT status, answer_option, answer_kind, answered_by FROM escalations"
                   " ORDER BY id")
    want = [("answered", a.option, a.kind, a.by) for a in answers]
    if got != want:
        t.problems.append(f"escalations {got} != {want}")
    if rows(db, "SELECT id FROM arbitrations WHERE status IN ('pending', 'running')"):
        t.problems.append("an arbitration left unfinished")
    settings = dict(rows(db, "SELECT key, value FROM settings WHERE scope = 'channel'"
                             " AND key IN ('max_rounds', 'stall_threshold')"))
    if settings != ({} if quick else {"max_rounds": "30"}):
        t.problems.append(f"settings {settings}")
    bindings = sorted(rows(db, "SELECT role, user_id FROM bindings"))
    if bindings != [("owner", "BOWNER"), ("reviewer", "UREVIEWER")]:
        t.problems.append(f"bindings {bindings}")
    audit = [r[0] for r in rows(db, "SELECT action FROM audit_log ORDER BY id")]
    if audit != (["roles"] if quick else ["roles", "max-rounds", "summon"]):
        t.problems.append(f"audit {audit}")
    # Posts: one outbox row shown once; one confirmation per answer.
    posts = [m for m in api.messages.values()
             if m.get("thread_ts") in THREADS and m.get("user") == api.bot_user_id]
    keys = Counter(k for k in (metadata_key(m) for m in posts) if k)
    confirmations = sum(1 for m in posts if m.get("text", "").startswith(CONFIRMATION))
    t.duplicates = sum(n - 1 for n in keys.values()) + max(0, confirmations - len(answers))
    if confirmations < len(answers):
        t.problems.append(f"{confirmations} confirmations for {len(answers)} answers")
    # Private replies: every command answered (once; a repeat is the platform's limit).
    for text, token in d.commands:
        shown = len(api.responses_to.get(token, []))
        if shown == 0:
            t.problems.append(f"no reply to /arbiter {text}")
        t.private_repeats += max(0, shown - 1)
    if not quick:
        for user, start in (("UALICE", OUT_OF_RANGE), ("UMALLORY", NOT_ALLOWED)):
            shown = sum(1 for c in api.calls_to("chat.postEphemeral")
                        if c.args.get("user") == user and str(c.args.get("text", ""))
                        .startswith(start))
            if shown == 0:
                t.problems.append(f"no private notice {start!r} to {user}")
            t.private_repeats += max(0, shown - 1)
    t.rate_limited = Counter(dict(api.rate_limited_by))
    # What the conversation crossed (the census: a run without a crash).
    sent = len(rows(db, "SELECT id FROM outbox WHERE status = 'sent'"))
    t.census = {
        "after_ack": t.acks,
        "after_apply": len(rows(db, "SELECT seq FROM messages WHERE processed = 1")),
        "after_action": len(rows(db, "SELECT id FROM actions WHERE processed = 1")),
        "before_post": sent, "after_post_before_record": sent, "after_record": sent,
    }


async def run_trial(trial: Trial, workdir: Path, quick: bool) -> Trial:
    started = time.monotonic()
    async with FakeSlackAPI(limits=SLACK_LIMITS) as api, aiohttp.ClientSession() as http:
        api.add_user("UADMIN", name="boss", admin=True)
        api.add_user("UALICE", name="alice")
        api.add_user("UMALLORY", name="mallory")
        d = Driver(trial, api, http, workdir)
        try:
            await d.open()
            answers = await play(d, quick)
            await d.until(d.settled, "nothing left to do")
            await asyncio.sleep(0.3)  # a repeat would show by now
            await d.until(d.settled, "nothing left to do")
        finally:
            await d.close()
        check(d, answers, quick)
    trial.seconds = time.monotonic() - started
    return trial


def kill_points(census: dict[str, int], count: int) -> Iterator[tuple[str, int]]:
    """(point, n) round-robin over the points, n up to what the census counted."""
    given = 0
    for n in range(1, max(census.values(), default=0) + 1):
        for point in POINTS:
            if n <= census.get(point, 0) and given < count:
                given += 1
                yield point, n


def describe(t: Trial) -> str:
    flags = [] if t.ok else ["FAILED"]
    if not t.reached:
        flags.append(f"crashes={t.crashes}")
    flags += [f"lost={t.lost}"] if t.lost else []
    flags += [f"unprocessed={t.unprocessed}"] if t.unprocessed else []
    flags += [f"duplicates={t.duplicates}"] if t.duplicates else []
    flags += [f"private_repeats={t.private_repeats}"] if t.private_repeats else []
    flags += [f"429={dict(t.rate_limited)}"] if t.rate_limited else []
    flags += t.problems
    return (f"{t.label:<30} acked={len(t.acked):<3} {t.seconds:5.1f} s "
            f"{' '.join(flags) or 'ok'}")


async def sweep(count: int, jobs: int, quick: bool, keep: bool = False,
                say: Callable[[str], None] = print) -> tuple[Trial, list[Trial]]:
    tmp = tempfile.mkdtemp(prefix="tribunal-sweep-")
    workdir = Path(tmp)
    census = await run_trial(Trial(None), workdir, quick)
    say(describe(census) + f"  reaches {census.census}")
    points = list(kill_points(census.census, count))
    say(f"{sum(census.census.values())} kill points reachable; trying {len(points)}")
    gate = asyncio.Semaphore(jobs)

    async def one(point: str, nth: int) -> Trial:
        async with gate:
            trial = await run_trial(Trial(point, nth), workdir, quick)
            say(describe(trial))
            return trial

    trials = list(await asyncio.gather(*(one(p, n) for p, n in points)))
    if keep:
        say(f"databases and logs kept in {workdir}")
    else:
        import shutil

        shutil.rmtree(workdir, ignore_errors=True)
    return census, trials


@dataclass
class Figures:
    asked: int
    reached: int
    acked: int
    stored: int
    lost: int
    duplicates: int
    duplicates_posting: int
    posting_trials: int
    failed: int
    private_repeats: int
    rate_limited: Counter[str]
    unreached: list[str]
    seconds: float


def figures(census: Trial, trials: list[Trial], asked: int, seconds: float) -> Figures:
    posting = [t for t in trials if t.point in POSTING]
    limited: Counter[str] = Counter()
    for t in [census, *trials]:
        limited.update(t.rate_limited)
    return Figures(
        asked=asked,
        reached=sum(1 for t in trials if t.reached),
        acked=sum(len(t.acked) for t in trials),
        stored=sum(len(t.acked) - len(t.lost) for t in trials),
        lost=sum(len(t.lost) for t in trials),
        duplicates=sum(t.duplicates for t in trials),
        duplicates_posting=sum(t.duplicates for t in posting),
        posting_trials=len(posting),
        failed=sum(1 for t in [census, *trials] if not t.ok),
        private_repeats=sum(t.private_repeats for t in trials),
        rate_limited=limited,
        unreached=[t.label for t in trials if not t.reached],
        seconds=seconds,
    )


def summary(f: Figures) -> str:
    return "\n".join([
        f"kill points: {f.reached} of {f.asked} reached and checked"
        + (f" (not reached: {', '.join(f.unreached)})" if f.unreached else "")
        + f", {f.seconds:.0f} s",
        f"events acknowledged: {f.acked}, stored: {f.stored}, lost: {f.lost}",
        f"duplicate posts: {f.duplicates} ({f.duplicates_posting} after the"
        f" {f.posting_trials} crashes during posting)",
        f"private replies shown twice (ephemeral, cannot be looked up): {f.private_repeats}",
        f"429s: {dict(f.rate_limited) or 0}",
        f"trials failing a check: {f.failed}",
    ])


async def run(options: Options) -> list[Row]:
    """The suite's rows (`python -m bench --only crash`)."""
    from bench.suite import row

    count = QUICK_COUNT if options.quick else FULL_COUNT
    started = time.monotonic()
    census, trials = await sweep(count, 3, options.quick,
                                 say=print if options.verbose else (lambda _: None))
    f = figures(census, trials, count, time.monotonic() - started)
    scenario = "the short conversation (--quick)" if options.quick else "the long conversation"
    return [
        row("crash_kill_points", f.reached, baseline=f.asked,
            note=f"distinct kill points reached through TRIBUNAL_FAULT in {scenario}, each"
                 f" checked ({sum(census.census.values())} reachable:"
                 f" {census.census}); {f.seconds:.0f} s"),
        row("crash_acked_lost", f.lost,
            note=f"{f.acked} requests acknowledged (events, clicks, slash commands), {f.stored}"
                 " stored across the kill points"),
        row("crash_duplicate_posts", f.duplicates,
            note=f"{f.duplicates_posting} after the {f.posting_trials} crashes during posting"
                 " (same idempotency key twice, or confirmations beyond one per answer)"),
        row("crash_failed_trials", f.failed,
            note="trials (census included) whose end state was wrong: unfinished, lost or"
                 " unprocessed events, wrong answers, settings or audit, a command unanswered,"
                 " or a kill point not reached"),
        row("crash_private_repeats", f.private_repeats,
            note="ephemeral replies and notices shown twice after a crash between the"
                 " platform call and its record: Slack keeps no trace of them to look up"),
        row("crash_429", sum(f.rate_limited.values()),
            note=f"429s by method: {dict(f.rate_limited) or 'none'} (restarts wait"
                 f" {RESTART_AFTER} s)"),
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--count", type=int, default=None,
                        help=f"kill points to try (default {FULL_COUNT}, --quick {QUICK_COUNT})")
    parser.add_argument("--jobs", type=int, default=3, help="trials at once")
    parser.add_argument("--quick", action="store_true", help="the short conversation")
    parser.add_argument("--keep", action="store_true", help="keep the databases and logs")
    args = parser.parse_args(argv)
    count = args.count or (QUICK_COUNT if args.quick else FULL_COUNT)
    started = time.monotonic()
    census, trials = asyncio.run(sweep(count, max(1, args.jobs), args.quick, args.keep))
    print()
    print(summary(figures(census, trials, count, time.monotonic() - started)))


if __name__ == "__main__":
    main()
