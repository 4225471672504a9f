"""Messages that look like real agent turns, for the benchmarks.

Coding agents in review threads write 1-4 KB turns: a status line, file paths
with line numbers, `identifiers`, commit hashes, test counts, bullets, a short
test log in a fence; in Korean (합니다체, English identifiers mixed in) or in
English. Each turn names new files and identifiers, so a conversation made of
them progresses (the detector sees new evidence) unless a caller repeats a turn.
Deterministic for a given `random.Random`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

AREAS = ("auth", "billing", "cache", "i18n", "ci", "migrations", "ratelimit", "logging",
         "search", "upload", "webhooks", "scheduler")
FILES = ("session.py", "tokens.py", "store.py", "client.py", "views.py", "models.py",
         "handlers.py", "retry.py", "schema.py", "worker.py", "config.py", "router.py")
IDENTS = ("refresh_token", "SessionStore.get", "rotate_keys", "InvoiceBuilder", "ttl_seconds",
          "parse_locale", "run_migration", "TokenBucket.take", "log_context", "build_index",
          "UploadChunk", "verify_signature", "Scheduler.tick", "retry_after", "flush_batch",
          "normalize_email", "CacheEntry.expired", "apply_discount", "open_cursor", "emit_event")

KO_OWNER = (
    "{path}의 `{ident}`을(를) 수정했습니다. 만료 시각을 UTC로 비교하도록 바꿨고"
    " 경계값 테스트를 추가했습니다.",
    "리뷰어님이 지적하신 {path} 부분은 `{ident}` 호출 순서를 바꿔서 해결했습니다.",
    "`{ident}`에서 예외를 삼키던 부분을 제거하고, 실패하면 재시도 큐로 보내도록 했습니다.",
    "{path}에 있던 중복 쿼리를 하나로 합쳤습니다. 실행 계획을 확인해 보니 인덱스를 탑니다.",
    "커밋 {sha}에 반영했습니다. `{ident}`의 기본값은 설정 파일에서 읽도록 변경했습니다.",
    "로컬에서 전체 테스트를 다시 돌렸고, 이전에 실패하던 케이스도 통과합니다.",
    "마이그레이션은 되돌릴 수 있게 작성했고, 스테이징 데이터 사본으로 확인했습니다.",
)
KO_REVIEWER = (
    "{path}에서 `{ident}`가 None을 반환하는 경우를 처리하지 않습니다. 수정이 필요합니다.",
    "`{ident}`의 타임아웃이 하드코딩되어 있습니다. 설정값으로 빼 주시기 바랍니다.",
    "{path} 변경으로 기존 호출부가 깨질 수 있습니다. 호환성 테스트를 추가해 주세요.",
    "커밋 {sha}의 로그 메시지에 사용자 이메일이 그대로 남습니다. 마스킹이 필요합니다.",
    "동시성 문제가 있어 보입니다. `{ident}`를 두 요청이 동시에 호출하면 경합이 생깁니다.",
    "테스트가 실제 시계를 사용합니다. 고정된 시계를 주입하는 편이 안정적입니다.",
    "에러 메시지가 한국어와 영어로 섞여 있습니다. 문자열 파일로 옮겨 주시기 바랍니다.",
)
EN_OWNER = (
    "Fixed `{ident}` in {path}: expiry is now compared in UTC and the boundary case has a test.",
    "Addressed the point about {path} by reordering the calls to `{ident}`.",
    "Removed the bare except around `{ident}`; failures now go to the retry queue.",
    "Merged the duplicated query in {path} into one; the plan shows it uses the index.",
    "Pushed {sha}. `{ident}` now reads its default from the config file.",
    "Re-ran the whole suite locally; the case that failed before passes now.",
    "The migration is reversible and I checked it against a copy of staging data.",
)
EN_REVIEWER = (
    "{path}: `{ident}` can return None and the caller does not handle it. Please fix.",
    "The timeout in `{ident}` is hard-coded; please move it to settings.",
    "The change to {path} may break existing callers; please add a compatibility test.",
    "Commit {sha} logs the user's email in clear text; it needs masking.",
    "There is a race: two requests calling `{ident}` at once can both pass the check.",
    "The test uses the real clock; inject a fixed clock to make it stable.",
    "Error messages mix languages; please move them to the strings file.",
)
KO_TASKS = ("로그인 후 세션이 가끔 사라지는 버그를 고쳐 주세요.",
            "결제 영수증 PDF에 할인 금액이 빠져 있습니다. 확인 부탁드립니다.",
            "업로드가 100MB 이상에서 실패합니다. 청크 업로드로 바꿔 주세요.",
            "CI가 30분 넘게 걸립니다. 캐시를 적용해서 줄여 주세요.")
EN_TASKS = ("Please fix the session that sometimes disappears after login.",
            "The receipt PDF misses the discount line; please take a look.",
            "Uploads over 100 MB fail; switch them to chunked uploads.",
            "CI takes over 30 minutes; add caching to bring it down.")


@dataclass
class Writer:
    """Writes turns for one room; every turn cites fresh paths and identifiers."""

    rng: random.Random
    language: str = "ko"

    def _fill(self, template: str) -> str:
        rng = self.rng
        path = f"src/{rng.choice(AREAS)}/{rng.choice(FILES)}:{rng.randint(10, 900)}"
        return template.format(path=path, ident=rng.choice(IDENTS),
                               sha=f"{rng.getrandbits(28):07x}")

    def task(self) -> str:
        return self.rng.choice(KO_TASKS if self.language == "ko" else EN_TASKS)

    def turn(self, role: str, *, size: int | None = None, status: str | None = None) -> str:
        """One agent turn of about `size` bytes of UTF-8 (1,024-4,096 when not given)."""
        rng = self.rng
        target = size if size is not None else rng.randint(1024, 4096)
        ko = self.language == "ko"
        if role == "owner":
            sentences = KO_OWNER if ko else EN_OWNER
            if status is None:
                status = rng.choice(("STEP_DONE", "STEP_DONE", "DONE_WITH_CONCERNS"))
        else:
            sentences = KO_REVIEWER if ko else EN_REVIEWER
        lines = [status] if status else []
        lines.append(self._fill(rng.choice(sentences)))
        n = 0
        while len("\n".join(lines).encode()) < target:
            n += 1
            kind = rng.random()
            if kind < 0.55:
                lines.append(f"{n}. " + self._fill(rng.choice(sentences)))
            elif kind < 0.8:
                lines.append("- " + self._fill(rng.choice(sentences)))
            elif kind < 0.9:
                passed = rng.randint(100, 400)
                lines += ["```", f"$ pytest tests/{rng.choice(AREAS)} -q",
                          f"{passed} passed, {rng.randint(0, 2)} failed in {rng.random() * 9:.2f}s",
                          "```"]
            else:
                lines.append("감사합니다. 추가로 확인할 부분이 있으면 말씀해 주세요." if ko else
                              "Thanks; tell me if anything else needs a look.")
        return "\n".join(lines)


def conversation(rng: random.Random, language: str) -> Iterator[tuple[str, str]]:
    """(role, text) forever: a task, review rounds that progress, approval, next task.

    Each task: the human asks, then 2-3 rounds (the owner's turn sometimes in
    two messages, the reviewer raising new points), then the reviewer approves.
    """
    writer = Writer(rng, language)
    while True:
        yield "user", writer.task()
        rounds = rng.randint(2, 3)
        for i in range(rounds):
            if rng.random() < 0.3:
                yield "owner", writer.turn("owner", size=rng.randint(1024, 2048))
                yield "owner", writer.turn("owner", size=rng.randint(1024, 2048), status="")
            else:
                yield "owner", writer.turn("owner")
            last = i == rounds - 1
            yield "reviewer", writer.turn("reviewer", status="APPROVED" if last else "")
