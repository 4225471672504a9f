"""Every user-facing string, Korean first with an English fallback.

`t(key, lang, **fields)` picks the language (anything but `en` gets Korean,
the product's default) and formats the fields.
"""

from __future__ import annotations

from typing import Any

STRINGS: dict[str, dict[str, str]] = {
    "ruling_sentence": {
        "ko": "⚖️ {upheld} 요구({upheld_summary})는 유지되고, {retired} 요구({retired_summary})는 더 이상 적용되지 않습니다.",
        "en": "⚖️ {upheld} ({upheld_summary}) stands; {retired} ({retired_summary}) no longer applies.",
    },
    "findings_none": {
        "ko": "열린 지적: 없음",
        "en": "Open findings: none",
    },
    "findings_header": {
        "ko": "열린 지적 {count}건:",
        "en": "Open findings ({count}):",
    },
    "finding_line": {
        "ko": "• {label} ({author}, 정체 {stall}회): {summary}",
        "en": "• {label} ({author}, stalled {stall}×): {summary}",
    },
    "finding_history": {
        "ko": "    경과: {history}",
        "en": "    history: {history}",
    },
    "progress": {
        "ko": "⚖️ 중재자가 검토 중입니다…",
        "en": "⚖️ The arbiter is reviewing…",
    },
    "confirmation": {
        "ko": "✅ 사용자 결정: {n}. {label}",
        "en": "✅ User decision: {n}. {label}",
    },
    "confirmation_free_text": {
        "ko": "✅ 사용자 결정(자유 입력): {text}",
        "en": "✅ User decision (free text): {text}",
    },
    "decided_note": {
        "ko": "{by}님이 {at}에 결정함",
        "en": "decided by {by} at {at}",
    },
    "answer_out_of_range": {
        "ko": "⚠️ {n}번 선택지는 없습니다. 1부터 {max}까지의 번호로 답해 주세요. (Option {n} does not exist; reply 1-{max}.)",
        "en": "⚠️ There is no option {n}. Reply with a number from 1 to {max}.",
    },
    "answer_not_allowed": {
        "ko": "⛔ 이 결정에 답할 권한이 없습니다. 작업을 요청한 사람, 승인자 또는 관리자만 답할 수 있습니다. (You may not answer this escalation.)",
        "en": "⛔ You may not answer this escalation: only the task's requesters, approvers and admins can.",
    },
    "answer_already": {
        "ko": "ℹ️ 이미 결정되었습니다: {by}님이 {at}에 '{choice}'을(를) 선택했습니다. (Already decided.)",
        "en": "ℹ️ Already decided: {by} chose '{choice}' at {at}.",
    },
    "answer_unknown": {
        "ko": "⚠️ 이 결정 요청은 더 이상 유효하지 않습니다. (This escalation is no longer open.)",
        "en": "⚠️ This escalation is no longer open.",
    },
    "reminder": {
        "ko": "⏰ 아직 결정을 기다리고 있습니다. 위 선택지 중 번호로 답해 주세요.",
        "en": "⏰ Still waiting for your decision. Reply with an option number above.",
    },
    "arbiter_unavailable": {
        "ko": "중재자(LLM)를 사용할 수 없어 사용자 결정이 필요합니다.",
        "en": "The arbiter (LLM) is unavailable, so a human decision is needed.",
    },
    "arbiter_invalid": {
        "ko": "중재자(LLM)의 응답이 두 번 모두 형식에 맞지 않아 사용자 결정이 필요합니다.",
        "en": "The arbiter's (LLM) answer was malformed twice, so a human decision is needed.",
    },
    "guardrail_owner_question": {
        "ko": "이 질문은 사용자만 답할 수 있어 중재자가 대신 판정하지 않았습니다.",
        "en": "Only you can answer this question, so the arbiter did not rule in your place.",
    },
    "guardrail_repeat_proceed": {
        "ko": "이전 중재에서 PROCEED로 판정했지만 같은 문제({trigger})가 사람의 개입 없이 다시 발생했습니다.",
        "en": "An earlier verdict was PROCEED, yet the same issue ({trigger}) came back with no human input since.",
    },
    "guardrail_budget": {
        "ko": "마지막 사용자 메시지 이후 중재가 이미 {n}번 있었지만 교착이 풀리지 않아, 더 이상 자동으로 판정하지 않습니다.",
        "en": "The arbiter already ruled {n} times since the last human message without ending the deadlock, so it will not rule again on its own.",
    },
    "model_opinion": {
        "ko": "참고 — 중재 모델의 원래 판단({kind}): {summary}",
        "en": "For reference — the model's original verdict ({kind}): {summary}",
    },
}


def t(key: str, lang: str = "ko", **fields: Any) -> str:
    entry = STRINGS[key]
    template = entry["en"] if lang == "en" else entry["ko"]
    return template.format(**fields)
