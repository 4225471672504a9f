"""LLM backends: the only I/O of the arbiter.

Each backend turns (system, prompt) into text. Resilience lives here, once,
for all of them: a per-call timeout, bounded retries with backoff on timeouts,
429 (honouring Retry-After) and 5xx, and one concurrency limit shared by every
call in the process. The SDKs' own retries are off (`max_retries=0`) so these
are the only ones, and tests can count them.
"""

from __future__ import annotations

import abc
import asyncio
import email.utils
import hashlib
import importlib
import logging
import os
import random
import re
import shlex
import signal
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot import telemetry
from bot.arbiter.base import Backend, BackendUnavailable
from bot.config import Settings

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]

DEFAULT_MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5"}
MAX_OUTPUT_CHARS = 200_000
ANTHROPIC_MAX_TOKENS = 2_048
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


class RetryableError(Exception):
    """A failure worth another attempt; `retry_after` comes from the server."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class CallPolicy:
    timeout: float = 60.0
    retries: int = 2
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 120.0
    sleep: Sleep = field(default=asyncio.sleep)


_LIMITERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)


def shared_limiter(limit: int) -> asyncio.Semaphore:
    """The process-wide semaphore for this limit (one per event loop)."""
    loop = asyncio.get_running_loop()
    per_loop = _LIMITERS.setdefault(loop, {})
    limit = max(1, limit)
    if limit not in per_loop:
        per_loop[limit] = asyncio.Semaphore(limit)
    return per_loop[limit]


_CLIENTS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], Any]] = (
    weakref.WeakKeyDictionary()
)


def _sdk(kind: str) -> Any:
    """The vendor SDK, imported on first use: the two cost about a second and 60 MB
    at start-up, and a bot running another backend never needs them."""
    return importlib.import_module("openai" if kind == "openai" else "anthropic")


def _cached_client(kind: str, base_url: str | None, api_key: str, timeout: float) -> Any:
    """One SDK client per endpoint and loop, reused across arbitrations.

    Building a client costs ~17 ms (an SSL context loads the CA bundle) against
    ~1 ms for a local call; the engine builds an Arbitrator per deadlock, so
    without this cache the set-up would dominate the arbiter's overhead.
    """
    loop = asyncio.get_running_loop()
    per_loop = _CLIENTS.setdefault(loop, {})
    key = (kind, base_url, hashlib.sha256(api_key.encode()).hexdigest(), timeout)
    client = per_loop.get(key)
    if client is None or client.is_closed():
        sdk = _sdk(kind)
        sdk_cls = sdk.AsyncOpenAI if kind == "openai" else sdk.AsyncAnthropic
        client = sdk_cls(api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout)
        per_loop[key] = client
    return client


async def close_clients() -> None:
    """Close the cached SDK clients of the running loop (call at shutdown)."""
    per_loop = _CLIENTS.pop(asyncio.get_running_loop(), {})
    for client in per_loop.values():
        try:
            await client.close()
        except Exception:
            log.debug("closing an SDK client failed", exc_info=True)


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from `retry-after-ms` / `Retry-After` (seconds or HTTP date)."""
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


async def call_with_retries(
    attempt: Callable[[], Awaitable[str]],
    policy: CallPolicy,
    limiter: asyncio.Semaphore,
    what: str,
) -> str:
    """Run `attempt` under the limiter and timeout, retrying what is retryable."""
    last = "no attempt"
    for n in range(policy.retries + 1):
        retry_after: float | None = None
        try:
            async with limiter:
                return await asyncio.wait_for(attempt(), policy.timeout)
        except TimeoutError:
            last = f"timed out after {policy.timeout:g}s"
        except RetryableError as exc:
            last, retry_after = str(exc), exc.retry_after
        log.warning("%s: attempt %d/%d failed: %s", what, n + 1, policy.retries + 1, last)
        if n < policy.retries:
            if retry_after is not None:
                delay = min(retry_after, policy.max_retry_after)
            else:
                delay = min(policy.max_delay, policy.base_delay * 2**n)
                delay *= random.uniform(0.8, 1.2)
            await policy.sleep(delay)
    raise BackendUnavailable(f"{what}: {last} (after {policy.retries + 1} attempts)")


def _classify(exc: Exception, sdk: Any) -> Exception:
    """Map an SDK exception to Retryable (worth another try) or BackendUnavailable."""
    if isinstance(exc, sdk.APITimeoutError):
        return RetryableError("request timed out")
    if isinstance(exc, sdk.APIStatusError):
        code = exc.status_code
        if code == 429:
            telemetry.rate_limited("arbiter")
        if code in (408, 409, 429) or code >= 500:
            return RetryableError(f"HTTP {code}", parse_retry_after(exc.response.headers))
        return BackendUnavailable(f"HTTP {code} (not retried)")
    if isinstance(exc, sdk.APIConnectionError):
        return RetryableError("connection error")
    # Invalid JSON or an unexpected body: a flaky proxy more often than not.
    return RetryableError(f"invalid response ({type(exc).__name__})")


class _SdkBackend(abc.ABC):
    """What both vendor SDK backends share: one cached client, retries, the limit."""

    name: str = ""
    model: str | None
    placeholder_key = "not-set"  # the SDKs insist on a key even when the server needs none

    def __init__(
        self,
        *,
        model: str | None,
        base_url: str | None,
        api_key: str | None,
        policy: CallPolicy,
        limiter: asyncio.Semaphore,
        label: str | None = None,
    ) -> None:
        self.model = model or DEFAULT_MODELS[self.name]
        self.policy, self.limiter, self.label = policy, limiter, label or self.name
        self._client: Any = _cached_client(
            self.name, base_url, api_key or self.placeholder_key, policy.timeout
        )

    @abc.abstractmethod
    async def _once(self, system: str, prompt: str) -> str:
        """One request in the vendor's own shape."""

    async def complete(self, system: str, prompt: str) -> str:
        return await call_with_retries(
            lambda: self._once(system, prompt), self.policy, self.limiter, self.label
        )

    async def aclose(self) -> None:
        return None  # the client is shared; see close_clients()


class OpenAIBackend(_SdkBackend):
    """Chat Completions through the official SDK; `base_url` reaches any compatible server."""

    name = "openai"
    placeholder_key = "not-needed"  # local servers (Ollama, vLLM) need no key

    async def _once(self, system: str, prompt: str) -> str:
        openai = _sdk("openai")
        try:
            resp = await self._client.chat.completions.create(
                model=self.model,
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": prompt},
                ],
            )
        except Exception as exc:
            openai = _sdk("openai")
            if not isinstance(exc, openai.OpenAIError | ValueError):
                raise
            raise _classify(exc, openai) from exc
        if not resp.choices:
            return ""
        return str(resp.choices[0].message.content or "")[:MAX_OUTPUT_CHARS]


class AnthropicBackend(_SdkBackend):
    """Messages API through the official SDK; base URL overridable (proxy, test server)."""

    name = "anthropic"

    async def _once(self, system: str, prompt: str) -> str:
        anthropic = _sdk("anthropic")
        try:
            resp = await self._client.messages.create(
                model=self.model,
                max_tokens=ANTHROPIC_MAX_TOKENS,
                system=system,
                messages=[{"role": "user", "content": prompt}],
            )
        except Exception as exc:
            anthropic = _sdk("anthropic")
            if not isinstance(exc, anthropic.AnthropicError | ValueError):
                raise
            raise _classify(exc, anthropic) from exc
        parts = [getattr(block, "text", "") for block in resp.content or []]
        return "".join(p for p in parts if isinstance(p, str))[:MAX_OUTPUT_CHARS]


class CommandBackend:
    """A local command (`claude -p`, `codex exec -`): prompt on stdin, verdict on stdout.

    Runs in `workdir` so an agent with read access to the repository can judge
    on code evidence. A timeout kills the whole process group, not just the
    shell, so nothing keeps running after we gave up.
    """

    name: str = "command"
    model: str | None

    def __init__(
        self,
        *,
        command: str,
        workdir: str | None,
        policy: CallPolicy,
        limiter: asyncio.Semaphore,
        model: str | None = None,
    ) -> None:
        self.argv = shlex.split(command)
        if not self.argv:
            raise BackendUnavailable("command backend: empty command line")
        self.workdir = workdir
        self.model = model or os.path.basename(self.argv[0])
        self.policy, self.limiter = policy, limiter

    async def _once(self, system: str, prompt: str) -> str:
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=self.workdir,
                start_new_session=True,
            )
        except OSError as exc:  # missing binary, bad workdir: retrying will not help
            raise BackendUnavailable(f"command backend: cannot start ({exc.strerror})") from exc
        data = f"{system}\n\n{prompt}\n".encode()
        try:
            out, _err = await proc.communicate(data)
        except BaseException:
            _kill_group(proc)
            await proc.wait()
            raise
        if proc.returncode != 0:
            raise RetryableError(f"command exited with status {proc.returncode}")
        # CLIs may colour their output even when piped; colour codes are not prose.
        return _ANSI.sub("", out.decode("utf-8", "replace"))[:MAX_OUTPUT_CHARS]

    async def complete(self, system: str, prompt: str) -> str:
        return await call_with_retries(
            lambda: self._once(system, prompt), self.policy, self.limiter, "command"
        )

    async def aclose(self) -> None:
        return None


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            proc.kill()
        except ProcessLookupError:
            pass


def make_backend(
    settings: Settings, policy: CallPolicy, limiter: asyncio.Semaphore
) -> Backend | None:
    """The configured backend, or None for `none`. Raises BackendUnavailable if misconfigured."""
    kind = settings.arbiter_backend
    if kind == "none":
        return None
    if kind == "command":
        if not settings.arbiter_command:
            raise BackendUnavailable("command backend: TRIBUNAL_ARBITER_COMMAND is not set")
        return CommandBackend(
            command=settings.arbiter_command,
            workdir=settings.arbiter_workdir,
            policy=policy,
            limiter=limiter,
            model=settings.arbiter_model,
        )
    cls = OpenAIBackend if kind == "openai" else AnthropicBackend
    return cls(
        model=settings.arbiter_model,
        base_url=settings.arbiter_base_url,
        api_key=settings.api_key(),
        policy=policy,
        limiter=limiter,
    )


async def close_backend(backend: object) -> None:
    aclose = getattr(backend, "aclose", None)
    if aclose is not None:
        try:
            await aclose()
        except Exception:  # closing must never turn a verdict into a crash
            log.debug("closing backend failed", exc_info=True)
