"""Mixture of agents: reference opinions from other models, queried in parallel.

References are advice: each has its own timeout, failures are dropped
silently (logged), and no retries are spent on them. Endpoints are resolved
first and refused when they point into a private, loopback or link-local
network unless `moa_allow_private` is set, so a config file cannot turn the
bot into a probe of the internal network.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import os
import socket
from collections.abc import Sequence
from urllib.parse import urlsplit

from bot.arbiter.backends import AnthropicBackend, CallPolicy, OpenAIBackend, close_backend
from bot.arbiter.context import Reference
from bot.config import MoAModel
from bot.repair import repair_text

log = logging.getLogger(__name__)


class EndpointRefused(Exception):
    """A reference endpoint that may not be called."""


def _is_internal(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_reserved
        or ip.is_multicast
        or ip.is_unspecified
    )


async def check_endpoint(base_url: str | None, *, allow_private: bool) -> None:
    """Raise EndpointRefused unless every address of the host is public (or allowed)."""
    if base_url is None or allow_private:
        return  # vendor default endpoint, or explicitly allowed
    parts = urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EndpointRefused(f"unsupported reference URL scheme: {parts.scheme!r}")
    host = parts.hostname
    try:
        addresses = [ipaddress.ip_address(host)]
    except ValueError:
        loop = asyncio.get_running_loop()
        try:
            infos = await loop.getaddrinfo(host, parts.port or 443, type=socket.SOCK_STREAM)
        except OSError as exc:
            raise EndpointRefused(f"cannot resolve {host}") from exc
        addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    if not addresses or any(_is_internal(ip) for ip in addresses):
        raise EndpointRefused(f"{host} resolves to a private/loopback/link-local address")


def _key_for(ref: MoAModel) -> str | None:
    """The reference's key: its own variable, or the vendor's for the vendor's endpoint.

    The vendor key is never sent to a custom `base_url`: that would hand an
    OpenAI/Anthropic key to whoever runs that server.
    """
    if ref.api_key_env:
        return os.environ.get(ref.api_key_env)
    if ref.base_url is None:
        return os.environ.get("OPENAI_API_KEY" if ref.backend == "openai" else "ANTHROPIC_API_KEY")
    return None


async def _one(
    ref: MoAModel,
    system: str,
    prompt: str,
    *,
    allow_private: bool,
    limiter: asyncio.Semaphore,
) -> Reference | None:
    try:
        await check_endpoint(ref.base_url, allow_private=allow_private)
    except EndpointRefused as exc:
        log.warning("MoA reference %s refused: %s", ref.name, exc)
        return None
    policy = CallPolicy(timeout=ref.timeout, retries=0)
    key = _key_for(ref)
    cls = OpenAIBackend if ref.backend == "openai" else AnthropicBackend
    backend = cls(
        model=ref.model,
        base_url=ref.base_url,
        api_key=key,
        policy=policy,
        limiter=limiter,
        label=f"moa:{ref.name}",
    )
    try:
        text = await backend.complete(system, prompt)
    except Exception as exc:  # a reference never blocks the verdict
        log.warning("MoA reference %s dropped: %s", ref.name, type(exc).__name__)
        return None
    finally:
        await close_backend(backend)
    text = repair_text(text)  # model output enters the core here, like the main answer
    if not text.strip():
        return None
    return Reference(name=ref.name, text=text)


async def gather_references(
    refs: Sequence[MoAModel],
    system: str,
    prompt: str,
    *,
    allow_private: bool,
    limiter: asyncio.Semaphore,
) -> list[Reference]:
    """Successful opinions, in configuration order."""
    if not refs:
        return []
    results = await asyncio.gather(
        *(_one(ref, system, prompt, allow_private=allow_private, limiter=limiter) for ref in refs),
        return_exceptions=True,
    )
    return [r for r in results if isinstance(r, Reference)]
