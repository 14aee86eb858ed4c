"""The public get_answer contract: the one reply object every front end (CLI, HTTP, MCP) serializes.

JSON field names are exactly the contract's. Optional fields that do not apply are omitted from the JSON,
not written as null, so an agent can test for presence (`"degraded" in reply`) instead of for null.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer
from pydantic_core.core_schema import SerializerFunctionWrapHandler

Confidence = Literal["high", "medium", "low"]
Degraded = Literal["no-llm-provider", "synthesis-failed", "index-unavailable"]
Grounding = Literal["symbol_body", "exact_symbol", "extracted"]
RetrievalQuality = Literal["high", "partial", "weak"]

CONFIDENCE_ORDER: tuple[Confidence, ...] = ("low", "medium", "high")


class ContractModel(BaseModel):
    """Base of every contract model: serializes by alias and drops None-valued (absent) fields."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True, extra="forbid")

    @model_serializer(mode="wrap")
    def _omit_absent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data = handler(self)
        return {key: value for key, value in data.items() if value is not None}


class SymbolEvidence(ContractModel):
    """A symbol of one of the top two file pages: what it is, what it says about itself, how it starts."""

    qualname: str
    kind: str
    lines: tuple[int, int]
    signature: str = ""
    docstring: str | None = None
    # "llm": `docstring` was written by the wiki's model (the code has none): orientation, never evidence
    docstring_source: Literal["code", "llm"] | None = None
    excerpt: str | None = None


class RetrievalHit(ContractModel):
    """A wiki hit; the top two file pages also carry their symbols."""

    title: str
    target_path: str
    score: float
    summary: str = ""
    # True when `summary` was written by an LLM (a wiki page's prose): orientation, never evidence of the code
    summary_generated: bool | None = None
    symbols: list[SymbolEvidence] | None = None


class Candidate(ContractModel):
    """Where to look next (navigation, not evidence)."""

    path: str
    lines: tuple[int, int] | None = None
    symbol: str | None = None  # the definition the lines belong to (they never reach past it)


class SymbolBody(ContractModel):
    """The full live body of a symbol the answer names, read from disk with verified line bounds."""

    qualname: str
    kind: str
    path: str
    start_line: int
    end_line: int
    body: str
    changed_since_index: bool | None = None
    # the wiki model's docstring for a symbol whose code has none: labelled, after the code, never evidence
    generated_docstring: str | None = None


class BestGuess(ContractModel):
    file: str
    why_relevant: str
    score: float
    excerpt: str | None = None


class EvidenceText(ContractModel):
    """The evidence shown for one file (what a model would have answered from), best file first."""

    path: str
    text: str


class Episode(ContractModel):
    """A dated fact about this checkout, scoped to a path prefix ("" = the whole repository)."""

    text: str
    scope: str
    recorded_at: str  # ISO-8601 UTC timestamp
    source: Literal["explicit", "auto"] = "explicit"


class Meta(ContractModel):
    timings_ms: dict[str, float] = Field(default_factory=dict)
    cache_hit: bool = False
    hint: str = ""
    repo: str | None = None
    index_state: str | None = None
    commit: str | None = None  # the commit the index describes, when the build recorded one


class AnswerResponse(ContractModel):
    """The one object get_answer returns."""

    answer: str
    citations: list[str] = Field(default_factory=list)
    confidence: Confidence
    degraded: Degraded | None = None
    grounding: Grounding | None = None
    retrieval_quality: RetrievalQuality | None = None
    candidate_files: list[str] = Field(default_factory=list)
    fallback_targets: list[str] = Field(default_factory=list)
    candidates: list[Candidate] | None = None
    retrieval: list[RetrievalHit] | None = None
    symbol_bodies: list[SymbolBody] | None = None
    best_guesses: list[BestGuess] | None = None
    evidence: list[EvidenceText] | None = None  # degraded replies, and include=evidence
    episodes: list[Episode] | None = None
    note: str | None = None
    meta: Meta = Field(default_factory=Meta, alias="_meta")

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def to_json(self, indent: int | None = None) -> str:
        return self.model_dump_json(indent=indent)

    def ranked_files(self) -> list[str]:
        """The file ranking this reply offers: citations, best guesses, candidates, fallbacks, in order."""
        seen: dict[str, None] = {}
        for path in self.citations:
            seen.setdefault(path, None)
        for guess in self.best_guesses or []:
            seen.setdefault(guess.file, None)
        for cand in self.candidates or []:
            seen.setdefault(cand.path, None)
        for path in [*self.candidate_files, *self.fallback_targets]:
            seen.setdefault(path, None)
        return list(seen)
