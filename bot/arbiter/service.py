"""The Arbitrator: context in, validated verdict out; never raises.

Pipeline: guardrail pre-check -> render prompt -> MoA references -> backend ->
parse/validate -> one repair request -> guardrail post-check. Whatever fails,
the room gets a deterministic ESCALATE (fail closed: never PROCEED by default),
so no room is ever left stuck in arbitration.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Sequence

from bot import markup
from bot.arbiter import guardrails
from bot.arbiter.backends import CallPolicy, Sleep, close_backend, make_backend, shared_limiter
from bot.arbiter.base import (
    ArbitrationContext,
    ArbitrationOutcome,
    Backend,
    BackendUnavailable,
)
from bot.arbiter.context import Reference, clip, quote, render_prompt
from bot.arbiter.fallback import deterministic_escalation, summarize_position
from bot.arbiter.language import expected_language
from bot.arbiter.moa import gather_references
from bot.arbiter.verdict import ParsedVerdict, parse_and_validate
from bot.config import MoAModel, Settings
from bot.i18n import trigger_name
from bot.models import Verdict, VerdictKind, VerdictSource
from bot.repair import repair_text
from prompts import arbiter_system_prompt
from prompts.strings import t

log = logging.getLogger(__name__)

_REPAIR_QUOTE_CHARS = 3_000

# Read once per process: the prompt file does not change while the bot runs.
_system_prompt = functools.lru_cache(maxsize=1)(arbiter_system_prompt)


def repair_section(raw: str, problems: Sequence[str]) -> str:
    """The part appended to the prompt for the single repair request."""
    lines = [
        "",
        "## Your previous answer was invalid",
        '<room_data kind="previous_answer">',
        quote(clip(raw.strip() or "(empty)", _REPAIR_QUOTE_CHARS)),
        "</room_data>",
        "What was wrong:",
        *[f"- {p}" for p in problems],
        "Answer again from scratch, fixing every point above and following all the rules.",
    ]
    return "\n".join(lines)


async def _complete(backend: Backend, system: str, prompt: str) -> str:
    """The backend's answer as the core may use it: parsed, quoted back, stored.

    Repaired here, where model output enters the core, so a lone surrogate or a
    NUL in the answer cannot make the verdict's record fail (and the room's
    recovery call the model again and again).
    """
    # The model may echo anything: it never gets to write a mention marker.
    return markup.strip(repair_text(await backend.complete(system, prompt)))


class Arbitrator:
    """One arbitration per `arbitrate()` call; the engine builds it with settings alone.

    `backend`, `sleep`, `limiter`, `moa` and `clock` are for tests and benchmarks.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        backend: Backend | None = None,
        sleep: Sleep | None = None,
        limiter: object | None = None,
        moa: Sequence[MoAModel] | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.settings = settings
        self._backend = backend
        self._sleep = sleep
        self._limiter = limiter
        self._moa = moa
        self._clock = clock

    # -- public ---------------------------------------------------------------

    async def arbitrate(self, ctx: ArbitrationContext) -> ArbitrationOutcome:
        started = self._clock()
        try:
            outcome = await self._arbitrate(ctx)
        except Exception as exc:  # the promise: never raise, never leave the room stuck
            log.error("arbitration failed, escalating: %s", type(exc).__name__, exc_info=True)
            outcome = self._fallback(ctx, t("arbiter_unavailable", self._lang(ctx)))
        outcome.latency_ms = max(0, int((self._clock() - started) * 1000))
        return outcome

    # -- helpers --------------------------------------------------------------

    def _lang(self, ctx: ArbitrationContext) -> str:
        return expected_language(ctx)

    def _backend_name(self) -> str:
        return self._backend.name if self._backend is not None else self.settings.arbiter_backend

    def _escalation(
        self,
        ctx: ArbitrationContext,
        reason: str,
        source: VerdictSource,
        parsed: ParsedVerdict | None = None,
    ) -> Verdict:
        """Deterministic ESCALATE in the expected language, keeping the model's gist.

        When the owner asked the user something, that question is the decision.
        """
        lang = self._lang(ctx)
        local = ctx.model_copy(update={"language": lang})
        if parsed is not None and parsed.kind is not None and parsed.body.strip():
            summary = summarize_position(parsed.body)
            reason += "\n" + t("model_opinion", lang, kind=parsed.kind.value, summary=summary)
        question = guardrails.owner_question(ctx)
        return deterministic_escalation(local, reason=reason, source=source, question=question)

    def _fallback(
        self, ctx: ArbitrationContext, reason: str, **fields: object
    ) -> ArbitrationOutcome:
        verdict = self._escalation(ctx, reason, VerdictSource.FALLBACK)
        fields.setdefault("backend", self._backend_name())
        return ArbitrationOutcome(verdict=verdict, language=self._lang(ctx), **fields)  # type: ignore[arg-type]

    def _limiter_or_shared(self) -> object:
        return self._limiter or shared_limiter(self.settings.arbiter_concurrency)

    def _moa_models(self) -> list[MoAModel]:
        if self._moa is not None:
            return list(self._moa)
        try:
            return list(self.settings.file_config().moa)
        except Exception as exc:  # a broken config file must not block the verdict
            log.warning("MoA configuration unreadable: %s", type(exc).__name__)
            return []

    # -- the pipeline ---------------------------------------------------------

    async def _arbitrate(self, ctx: ArbitrationContext) -> ArbitrationOutcome:
        lang = self._lang(ctx)
        name = self._backend_name()
        if self._backend is None and name == "none":
            verdict = deterministic_escalation(
                ctx.model_copy(update={"language": lang}),
                source=VerdictSource.NONE,
                question=guardrails.owner_question(ctx),
            )
            return ArbitrationOutcome(verdict=verdict, backend="none", language=lang)

        spent = guardrails.budget_exhausted(ctx)
        if spent:
            why = t("guardrail_budget", lang, n=ctx.arbitrations_since_human)
            verdict = self._escalation(ctx, why, VerdictSource.GUARDRAIL)
            return ArbitrationOutcome(
                verdict=verdict, backend=name, overrides=[spent], language=lang
            )

        limiter = self._limiter_or_shared()
        policy = CallPolicy(
            timeout=self.settings.arbiter_timeout, retries=max(0, self.settings.arbiter_retries)
        )
        if self._sleep is not None:
            policy.sleep = self._sleep
        try:
            backend = self._backend or make_backend(self.settings, policy, limiter)  # type: ignore[arg-type]
        except BackendUnavailable as exc:
            log.error("arbiter backend unusable: %s", exc)
            return self._fallback(ctx, t("arbiter_unavailable", lang), problems=[str(exc)])
        assert backend is not None
        try:
            return await self._with_backend(ctx, backend, lang, limiter)
        finally:
            if self._backend is None:
                await close_backend(backend)

    async def _with_backend(
        self, ctx: ArbitrationContext, backend: Backend, lang: str, limiter: object
    ) -> ArbitrationOutcome:
        system = _system_prompt()
        budget = max(1_000, self.settings.arbiter_max_prompt_chars - len(system))
        notes = guardrails.hints(ctx)

        def render(refs: Sequence[Reference] = (), room: int = budget) -> str:
            return render_prompt(
                ctx,
                budget=room,
                language=lang,
                context_turns=self.settings.arbiter_context_turns,
                references=refs,
                notes=notes,
            )

        refs: list[Reference] = []
        models = self._moa_models()
        if models:
            refs = await gather_references(
                models,
                system,
                render(),
                allow_private=self.settings.moa_allow_private,
                limiter=limiter,  # type: ignore[arg-type]
            )
        prompt = render(refs)
        base = {
            "backend": backend.name,
            "model": backend.model,
            "prompt_chars": len(system) + len(prompt),
            "references": [r.name for r in refs],
        }
        try:
            raw = await _complete(backend, system, prompt)
        except BackendUnavailable as exc:
            log.error("arbiter unavailable: %s", exc)
            return self._fallback(ctx, t("arbiter_unavailable", lang), problems=[str(exc)], **base)

        parsed = parse_and_validate(raw, lang, ctx.rulable)
        source = VerdictSource.LLM
        problems = parsed.problems + parsed.soft_problems
        raw_output = raw
        if not parsed.valid:
            fix = repair_section(raw, problems)
            repair_prompt = render(refs, max(500, budget - len(fix))) + fix
            try:
                raw2: str | None = await _complete(backend, system, repair_prompt)
            except BackendUnavailable as exc:
                log.error("arbiter unavailable during repair: %s", exc)
                problems.append(str(exc))
                raw2 = None
            second = (
                parse_and_validate(raw2, lang, ctx.rulable) if raw2 is not None else None
            )
            if raw2 is not None:
                raw_output = f"{raw}\n\n--- repair attempt ---\n{raw2}"
            if second is not None and second.kind is not None and not second.problems:
                parsed, source = second, VerdictSource.REPAIRED
            elif parsed.kind is not None and not parsed.problems:
                pass  # the first answer only had cosmetic flaws: keep it rather than fail
            elif second is None:
                return self._fallback(
                    ctx,
                    t("arbiter_unavailable", lang),
                    raw_output=raw,
                    model_verdict=parsed.kind.value if parsed.kind else None,
                    problems=problems,
                    **base,
                )
            else:
                said = second.kind or parsed.kind
                return ArbitrationOutcome(
                    verdict=self._escalation(
                        ctx, t("arbiter_invalid", lang), VerdictSource.FALLBACK
                    ),
                    raw_output=raw_output,
                    model_verdict=said.value if said else None,
                    overrides=["invalid output after one repair: " + " ".join(second.problems)],
                    problems=[*problems, *second.problems],
                    language=lang,
                    **base,  # type: ignore[arg-type]
                )
        assert parsed.kind is not None

        override = guardrails.check(ctx, parsed.kind)
        if override is not None:
            question = guardrails.owner_question(ctx)
            if question and parsed.kind != VerdictKind.ESCALATE:
                reason = t("guardrail_owner_question", lang, question=question)
            else:
                reason = t("guardrail_repeat_proceed", lang,
                           trigger=trigger_name(ctx.trigger.value, lang))
            verdict = self._escalation(ctx, reason, VerdictSource.GUARDRAIL, parsed)
            return ArbitrationOutcome(
                verdict=verdict,
                raw_output=raw_output,
                model_verdict=parsed.kind.value,
                ruling=parsed.ruling,  # recorded, not applied
                overrides=[override.reason],
                problems=problems,
                language=lang,
                **base,  # type: ignore[arg-type]
            )
        verdict = Verdict(
            kind=parsed.kind, text=parsed.text, options=parsed.options, source=source,
            ruling=parsed.ruling,
        )
        return ArbitrationOutcome(
            verdict=verdict,
            ruling=parsed.ruling,
            raw_output=raw_output,
            model_verdict=parsed.kind.value,
            problems=problems,
            language=lang,
            **base,  # type: ignore[arg-type]
        )
