"""Evidence -> a cited answer, through the provider layer's ChatModel (Instructor-validated).

The reply model's validator only accepts citations that are paths of the evidence; Instructor re-asks with
the validation error, and when every re-ask fails the provider raises ProviderOutputError. Both that and a
transport failure become `SynthesisFailed`, which the engine turns into a degraded reply.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from sourcebook.errors import ProviderError, SourcebookError

if TYPE_CHECKING:
    from sourcebook.provider import ChatModel

log = logging.getLogger(__name__)

PROMPT_VERSION = "answer-prompt-3"
REPLY_TOKENS = 1024  # room kept for the answer itself
PROMPT_OVERHEAD_CHARS = 1500  # system prompt, question, schema: kept out of the evidence budget
CHARS_PER_TOKEN = 3.0  # same pessimistic rule as the provider layer

SYSTEM_PROMPT = """You answer questions about a code repository for a coding agent.
Use ONLY the evidence given. Every claim must come from it. Name the functions, classes and files involved
exactly as the evidence spells them, and cite files inline as `path` (optionally `path:line`).
`citations` lists the repository paths you relied on; each must be one of the evidence paths.
Lines marked "LLM-written wiki summary" or "LLM-written docstring" are generated prose for orientation:
they may be wrong and are not evidence. State only what the code shows (signatures, defaults, return and
raise statements, calls).
If the evidence does not answer the question, say exactly what it does not show rather than guessing.
Be concise: a few sentences or a short list, ending with a complete sentence."""
CONTINUE_PROMPT = ("Your answer stopped mid-sentence. Give the whole answer again, complete, in a few "
                   "sentences that each end with a full stop.")

_LOCATION_SUFFIX = re.compile(r"(?::\d+(?:[-–]\d+)?|#L\d+(?:-L?\d+)?)$")


class SynthesizedAnswer(BaseModel):
    """What the model must return: an answer with inline citations and the list of cited paths."""

    answer: str = Field(description="The answer, citing files inline as `path` or `path:line`.")
    citations: list[str] = Field(default_factory=list,
                                 description="Repository paths the answer relies on, from the evidence.")

    @field_validator("citations", mode="before")
    @classmethod
    def _plain_paths(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return value
        cleaned: dict[str, None] = {}
        for item in value:
            text = _LOCATION_SUFFIX.sub("", str(item).strip().strip("`").removeprefix("./"))
            if text:
                cleaned.setdefault(text, None)
        return list(cleaned)

    # Set on the per-call subclass `reply_model` builds. Not passed as Instructor `context`: Instructor
    # renders every message as a Jinja template when a context is given, and evidence is code full of `{{ }}`.
    allowed_paths: ClassVar[frozenset[str] | None] = None

    @field_validator("citations")
    @classmethod
    def _from_evidence(cls, value: list[str], info: ValidationInfo) -> list[str]:
        allowed = cls.allowed_paths
        if allowed is None:
            allowed = (info.context or {}).get("allowed_paths")
        if allowed is None:
            return value
        outside = [path for path in value if path not in allowed]
        if outside:
            shown = ", ".join(sorted(allowed)[:20])
            raise ValueError(
                f"citations must be paths from the evidence; not in the evidence: {', '.join(outside)}. "
                f"Cite only these paths: {shown}")
        return value


class SynthesisFailed(SourcebookError):
    """The provider failed, timed out or never produced valid output after re-asks."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True, slots=True)
class Synthesis:
    answer: str
    citations: tuple[str, ...]
    model: str
    truncated: bool = False  # still cut mid-sentence after the one re-ask


def reply_model(allowed_paths: Sequence[str]) -> type[SynthesizedAnswer]:
    """The reply model of one call: SynthesizedAnswer whose citations must be among `allowed_paths`."""

    class EvidenceAnswer(SynthesizedAnswer):
        """An answer about the repository with the evidence paths it cites."""

    EvidenceAnswer.allowed_paths = frozenset(allowed_paths)
    return EvidenceAnswer


# The share of the context window's room a default ask fills: the rest is what include=evidence adds, so
# the wider budget widens what the model sees even when the window, not the budget, is the limit (at the
# default 8,192 tokens both budgets were once capped to the same room)
DEFAULT_ROOM_SHARE = 0.75


def evidence_budget_for(chat: ChatModel, wanted_chars: int, share: float = 1.0) -> int:
    """The evidence budget that still fits `share` of the model's context window left next to the prompt
    and the reply."""
    room_tokens = chat.context_tokens - REPLY_TOKENS
    room_chars = int((int(room_tokens * CHARS_PER_TOKEN) - PROMPT_OVERHEAD_CHARS) * share)
    return max(0, min(wanted_chars, room_chars))


def build_messages(question: str, evidence_text: str) -> list[dict[str, str]]:
    user = f"Question: {question.strip()}\n\nEvidence:\n{evidence_text}\n\nQuestion again: {question.strip()}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def _ask(chat: ChatModel, messages: list[dict[str, str]], allowed_paths: Sequence[str]) -> SynthesizedAnswer:
    try:
        return chat.complete(reply_model(allowed_paths), messages, max_tokens=REPLY_TOKENS, label="answer")
    except ProviderError as exc:
        log.warning("answer synthesis failed: %s", exc)
        raise SynthesisFailed(str(exc)) from exc


def synthesize(chat: ChatModel, question: str, evidence_text: str, allowed_paths: Sequence[str]) -> Synthesis:
    """Ask the model; return its validated answer or raise SynthesisFailed.

    A reply that stops mid-sentence (claims.is_truncated) is asked for once more; the longer complete
    reply wins, and one still cut is returned marked `truncated` (graded never high)."""
    from sourcebook.claims import is_truncated

    messages = build_messages(question, evidence_text)
    reply = _ask(chat, messages, allowed_paths)
    answer = reply.answer.strip()
    if not answer:
        raise SynthesisFailed("the model returned an empty answer")
    truncated = is_truncated(answer)
    if truncated:
        log.info("answer stopped mid-sentence (%d chars): asking once more", len(answer))
        again = [*messages, {"role": "assistant", "content": answer},
                 {"role": "user", "content": CONTINUE_PROMPT}]
        try:
            retry = _ask(chat, again, allowed_paths)
        except SynthesisFailed:
            retry = None
        if retry is not None and retry.answer.strip() and not is_truncated(retry.answer.strip()):
            reply, answer, truncated = retry, retry.answer.strip(), False
    return Synthesis(answer=answer, citations=tuple(reply.citations), model=chat.id, truncated=truncated)
