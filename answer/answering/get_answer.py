"""get_answer: retrieve -> enrich -> synthesize -> grade -> respond, written out as one function.

Confidence is graded by checks (answer/answering/grade.py), never taken from the model. Without a provider,
or when
synthesis fails, the reply is the ranked evidence itself (`degraded`), never "high", and never cached as an
answer. `AnswerContext` holds what should stay warm between calls: the open index, the chat model, the cache.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from answer.answering.cache import AnswerCache, cache_key
from answer.answering.calibration import StoredThresholds
from answer.answering.citations import defining_paths, inline_paths
from answer.answering.episodes import EpisodeStore, select_episode
from answer.answering.evidence import (
    EVIDENCE_BUDGET,
    EVIDENCE_BUDGET_WIDE,
    Evidence,
    SymbolInfo,
    indexed_body,
    live_body,
    live_sha,
    retrieve,
)
from answer.answering.grade import (
    GLOBAL_THRESHOLDS,
    answer_mechanisms,
    cap_degraded,
    find_hedge,
    grade_answer,
    start_confidence,
)
from answer.answering.response import (
    AnswerResponse,
    BestGuess,
    Candidate,
    Confidence,
    Episode,
    EvidenceText,
    Grounding,
    Meta,
    RetrievalHit,
    SymbolBody,
)
from answer.answering.synthesize import (
    DEFAULT_ROOM_SHARE,
    PROMPT_VERSION,
    SynthesisFailed,
    evidence_budget_for,
    synthesize,
)
from answer.retrieval.paths import normalize_scope
from sourcebook.claims import CodeFacts, check_claims, copied_share
from sourcebook.config import Config, LLMConfig
from sourcebook.errors import NotFoundError, UsageError

if TYPE_CHECKING:
    from generator.index.store import IndexStore
    from sourcebook.provider import ChatModel

log = logging.getLogger(__name__)

INCLUDE_FLAGS = frozenset({"evidence", "diagnostics"})
# Bump when retrieval, enrichment or grading change what an answer would be: hedged cached answers are then
# re-synthesized (confident ones stay valid until a cited file or the index changes).
ANSWER_PIPELINE_VERSION = "answer-pipeline-4"
RETRIEVAL_SIZE: dict[Confidence, int] = {"high": 2, "medium": 3, "low": 5}
MAX_SYMBOL_BODIES = 3
FALLBACK_TARGETS = 10  # the whole retrieval ranking an agent may walk when the answer is not enough
MAX_BODY_LINES = 300
_UNSET: Any = object()


@dataclass
class AnswerContext:
    """One repository's answer state, kept warm across calls (open index, chat model, cache, episodes)."""

    config: Config
    alias: str | None = None
    store: IndexStore | None = None
    chat: ChatModel | None = _UNSET
    timings: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.cache = AnswerCache(self.config.out_dir, self.config.root)
        self.episodes = EpisodeStore(self.config.out_dir)
        # this repository's calibrated retrieval thresholds (`sourcebook eval --history N --calibrate`)
        self.thresholds = StoredThresholds(self.config.out_dir)

    def index(self) -> IndexStore:
        if self.store is None:
            from generator.index.store import open_index

            self.store = open_index(self.config)
        return self.store

    def chat_model(self) -> ChatModel | None:
        if self.chat is _UNSET:
            self.chat = _chat_for(self.config.llm)
        return self.chat


@functools.lru_cache(maxsize=8)
def _chat_for(llm: LLMConfig) -> ChatModel | None:
    """One chat model (and HTTP client) per provider configuration per process: front ends that build a
    fresh context per request still reuse a warm client. The request timeout and transport retries are the
    configured ones (SOURCEBOOK_LLM_TIMEOUT / SOURCEBOOK_LLM_MAX_RETRIES): a CPU server needs minutes for
    one answer, and a cap chosen for hosted models made every `ask` there end `synthesis-failed`. A provider
    that cannot answer within them still gives a `synthesis-failed` reply (ranked evidence)."""
    from sourcebook.provider import get_chat_model

    return get_chat_model(llm)


def resolve_context(target: Any, repo: str | None) -> AnswerContext:
    """An AnswerContext from what a front end holds: a context, a Config, an IndexStore, a workspace (anything
    with `resolve(repo) -> Config`), or an object carrying `.config` (and optionally `.store`)."""
    if isinstance(repo, str) and repo.strip().lower() == "all":
        raise UsageError("repo='all' is not supported: get_answer answers from one repository at a time")
    if isinstance(target, AnswerContext):
        _check_alias(target, repo)
        return target
    if isinstance(target, Config):
        ctx = AnswerContext(target)
        _check_alias(ctx, repo)
        return ctx
    if hasattr(target, "resolve") and callable(target.resolve) and not isinstance(target, Path):
        config = target.resolve(repo)  # a Workspace validates the alias (unknown -> NotFoundError)
        return AnswerContext(config, alias=repo)
    if hasattr(target, "tables") and hasattr(target, "meta"):  # an open IndexStore
        from sourcebook.config import load_config

        if target.root is None:
            raise UsageError("this index store does not know its repository root; pass a Config instead")
        ctx = AnswerContext(load_config(target.root), store=target)
        _check_alias(ctx, repo)
        return ctx
    config = getattr(target, "config", None)
    if isinstance(config, Config):
        alias, store = getattr(target, "alias", None), getattr(target, "store", None)
        ctx = AnswerContext(config, alias=alias, store=store)
        _check_alias(ctx, repo)
        return ctx
    raise UsageError(
        f"get_answer needs a Config, an AnswerContext, a workspace or an index, got {type(target).__name__}")


def _check_alias(ctx: AnswerContext, repo: str | None) -> None:
    if repo in (None, "", ctx.alias, ctx.config.root.name):
        return
    known = ctx.alias or ctx.config.root.name
    raise NotFoundError(f"unknown repository {repo!r}: this server answers for {known!r}")


def parse_include(include: Iterable[str] | str | None) -> frozenset[str]:
    if include is None:
        return frozenset()
    items = include.split(",") if isinstance(include, str) else list(include)
    flags = frozenset(item.strip().lower() for item in items if item and item.strip())
    unknown = flags - INCLUDE_FLAGS
    if unknown:
        shown = ", ".join(sorted(unknown))
        raise UsageError(f"unknown include flag(s) {shown}: expected evidence, diagnostics")
    return flags


def index_state(store: IndexStore) -> str:
    """What the cache key needs to know about the index: the table versions of its last complete run."""
    versions = store.meta.get("versions", {})
    payload = json.dumps([versions, store.meta.get("updated_at"), store.embedder_id], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


def symbol_pipeline_version(store: IndexStore) -> str:
    """The version of what produced the symbols: the index's record of it when it keeps one, else the running
    parser's (a hash of the extraction code and its queries)."""
    # the index records its parser since the analysis is stored with it ("parser"): no need to hash the
    # extraction code in every cold process
    meta = store.meta
    recorded = meta.get("parser") or meta.get("parser_version") or meta.get("symbol_pipeline")
    if recorded:
        return str(recorded)
    from generator.analyze.factcache import parser_version

    return parser_version()


def pipeline_version(store: IndexStore) -> str:
    return ":".join([ANSWER_PIPELINE_VERSION, PROMPT_VERSION, str(store.meta.get("schema_version")),
                     symbol_pipeline_version(store)])


# ---------------------------------------------------------------- the one entry point

def get_answer(target: Any, question: str, scope: str | None = None, repo: str | None = None,
               include: Iterable[str] | str | None = (), *, use_cache: bool = True) -> AnswerResponse:
    """A cited answer with checked confidence, or ranked evidence when no answer can be synthesized."""
    started = time.perf_counter()
    timings: dict[str, float] = {}
    if not isinstance(question, str) or not question.strip():
        raise UsageError("the question is empty")
    flags = parse_include(include)
    scope = normalize_scope(scope) or None
    ctx = resolve_context(target, repo)
    store = ctx.index()
    chat = ctx.chat_model()
    state = index_state(store)
    thresholds = ctx.thresholds.current()
    # a new calibration may change a cached answer's confidence: it is part of the key
    calibrated = ("" if thresholds == GLOBAL_THRESHOLDS
                  else f"|{thresholds.dominance_high},{thresholds.coverage_high},{thresholds.share_high}")
    key = cache_key(question, scope, ctx.alias or repo, f"{state}|{','.join(sorted(flags))}{calibrated}")
    version = pipeline_version(store)

    if chat is not None and use_cache:
        cached = ctx.cache.get(key, version)
        if cached is not None:
            # episodes are facts recorded independently of the answer: pick again from the current ones
            episode = select_episode(ctx.episodes.all(), cached.citations or cached.fallback_targets,
                                     cached.confidence)
            cached.episodes = [episode] if episode else None
            timings["cache"] = timings["total"] = _ms(started)
            cached.meta = cached.meta.model_copy(update={"cache_hit": True, "timings_ms": timings})
            return cached

    mark = time.perf_counter()
    wide = "evidence" in flags
    wanted = EVIDENCE_BUDGET_WIDE if wide else EVIDENCE_BUDGET
    budget = (evidence_budget_for(chat, wanted, 1.0 if wide else DEFAULT_ROOM_SHARE) if chat is not None
              else wanted)
    evidence = retrieve(store, question, scope, budget, thresholds)
    timings["retrieve"] = _ms(mark)

    mark = time.perf_counter()
    notes = _changed_files(ctx, evidence, [f.path for f in evidence.files[:5]])
    timings["freshness"] = _ms(mark)

    degraded: str | None = None
    synthesized = None
    allowed = evidence.paths + [s.path for s in evidence.promoted]
    if chat is None:
        degraded = "no-llm-provider"
        notes.insert(0, "No LLM provider is configured (set SOURCEBOOK_LLM_BASE_URL and "
                        "SOURCEBOOK_LLM_MODEL): this reply is the ranked evidence, not a synthesized answer.")
    elif not evidence.files:
        degraded = "synthesis-failed"
        notes.insert(0, "Retrieval found nothing to answer from; nothing was sent to the model.")
    else:
        mark = time.perf_counter()
        try:
            synthesized = synthesize(chat, question, evidence.text, allowed)
        except SynthesisFailed as exc:
            degraded = "synthesis-failed"
            notes.insert(0, f"Synthesis failed ({exc.reason}); this reply is the ranked evidence.")
        timings["synthesize"] = _ms(mark)

    mark = time.perf_counter()
    if synthesized is not None:
        # a model that cites inline but leaves the list empty (or short) still cites: the inline paths that
        # are evidence paths join the list; inline paths outside the evidence lower the confidence
        inline = inline_paths(synthesized.answer, allowed)
        citations = list(dict.fromkeys([*synthesized.citations, *inline.cited]))
        attached = False
        if not citations:
            # a small model that cites nothing, not even inline: cite the evidence files defining the
            # functions and classes it names (graded as uncited all the same)
            citations = list(_defining_citations(store, evidence, synthesized.answer, allowed))
            attached = bool(citations)
        support = evidence.support  # generated prose never supports a claim
        claims = check_claims(synthesized.answer, _code_facts(store, evidence, citations, synthesized.answer),
                              [s.qualname for s in evidence.promoted], "\n".join(support.values()))
        grade = grade_answer(question, synthesized.answer, citations, support, evidence.quality,
                             outside=inline.outside, attached=attached, claims=claims,
                             truncated=synthesized.truncated,
                             copied=copied_share(synthesized.answer, evidence.generated.values()),
                             targets_known=bool(evidence.promoted))
        confidence = grade.confidence
        if grade.reasons:
            notes.append("Confidence lowered: " + "; ".join(grade.reasons) + ".")
        answer_text = synthesized.answer
        bodies = _symbol_bodies(ctx, store, evidence, citations, answer_mechanisms(answer_text))
        grounding = _grounding(evidence, citations, bodies)
    else:
        # the contract: with no synthesized answer the packed grounding spans' files still come back as
        # citations (the reply is degraded), so the caller can reason over the spans itself
        citations = [p for p in evidence.paths if evidence.texts.get(p)] if chat is None else []
        confidence = cap_degraded(start_confidence(evidence.quality))
        answer_text = _evidence_summary(evidence)
        bodies = _symbol_bodies(ctx, store, evidence, [s.path for s in evidence.promoted], [
            s.qualname for s in evidence.promoted])
        grounding = None
    if any(b.changed_since_index for b in bodies):
        changed = sorted({b.path for b in bodies if b.changed_since_index})
        notes.append(f"{', '.join(changed)} changed on disk since indexing: symbol bodies are read from the "
                     "live file(s) with re-derived line bounds.")
    timings["grade"] = _ms(mark)

    reply = _respond(ctx, evidence, answer_text=answer_text, citations=citations, confidence=confidence,
                     degraded=degraded, grounding=grounding, bodies=bodies, flags=flags, notes=notes)
    timings["total"] = _ms(started)
    reply.meta = Meta(timings_ms=timings, cache_hit=False, hint=_hint(reply), repo=ctx.alias,
                      index_state=state, commit=store.meta.get("commit") or None)
    if synthesized is not None and use_cache:
        ctx.cache.put(key, reply, version, hedged=find_hedge(answer_text) is not None)
    return reply


# ---------------------------------------------------------------- pieces

def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)


def _changed_files(ctx: AnswerContext, evidence: Evidence, paths: Sequence[str]) -> list[str]:
    """Files of the evidence whose live content differs from the index: a note, and an automatic episode.
    With no checkout there is nothing to differ from: the reply names the indexed commit instead."""
    if not ctx.config.checkout:
        return []
    changed = []
    for path in paths:
        indexed = evidence.indexed.get(path)
        if indexed is None:
            continue
        live = live_sha(ctx.config.root, path)
        if live != indexed:
            changed.append(path)
            what = "was deleted" if live is None else "changed on disk"
            fact = f"{path} {what} after the index was built (indexed sha {indexed[:12]})"
            ctx.episodes.record_auto(fact, path)
    if not changed:
        return []
    return [f"{', '.join(changed)} changed on disk after the index was built: excerpts may be stale; re-run "
            "`sourcebook index`."]


def _indexed_text(store: IndexStore, path: str) -> str | None:
    """A file's text as indexed (what a reader with no checkout reads bodies from), or None."""
    from sourcebook.sql import equals

    rows = store.rows("files", ["text"], equals("path", path), limit=1)
    return (rows[0]["text"] or "") if rows else None


def _evidence_summary(evidence: Evidence) -> str:
    """A degraded reply's `answer`: a few lines naming where to look. The evidence itself goes in the
    reply's `evidence` field (an agent reads the fields; this stays short enough to show a person)."""
    if not evidence.files:
        return "Nothing in the index matched the question."
    lines = ["No answer was synthesized; the best evidence (excerpts in `evidence`):"]
    anchors = {a.path: a for a in evidence.anchors}
    for rank, ranked in enumerate(evidence.files[:5], start=1):
        page = evidence.pages.get(ranked.path)
        found = anchors.get(ranked.path)
        lines_ = found.lines if found else ranked.best_lines
        where = f"{ranked.path}:{lines_[0]}-{lines_[1]}" if lines_ else ranked.path
        # the matched symbol leads; the file's summary only where no symbol answers
        if found and found.symbol:
            about = f" {found.symbol}"
        else:
            summary = page.summary.strip() if page else ""
            about = f" - {summary.splitlines()[0][:160]}" if summary else ""
        lines.append(f"{rank}. {where}{about}")
    return "\n".join(lines)


def _symbol_bodies(ctx: AnswerContext, store: IndexStore, evidence: Evidence, paths: Sequence[str],
                   names: Sequence[str]) -> list[SymbolBody]:
    """Live bodies of the functions/methods/classes `names` mentions, defined in `paths`."""
    if not names or not paths:
        return []
    from answer.answering.evidence import symbols_of

    wanted = {n for name in names for n in (name, name.rsplit(".", 1)[-1])}
    known = [*evidence.promoted, *symbols_of(store, list(dict.fromkeys(paths)))]
    picked: dict[tuple[str, str], SymbolInfo] = {}
    for sym in known:
        if sym.kind in {"function", "method", "class"} and (sym.qualname in wanted or sym.name in wanted):
            picked.setdefault((sym.path, sym.qualname), sym)
    bodies = []
    for sym in list(picked.values())[:MAX_SYMBOL_BODIES]:
        if ctx.config.checkout:
            body = live_body(ctx.config.root, sym, evidence.indexed.get(sym.path))
        else:
            body = indexed_body(sym, _indexed_text(store, sym.path))
        if body is None:
            continue
        lines = body.body.split("\n")
        if len(lines) > MAX_BODY_LINES:
            body = body.model_copy(update={"body": "\n".join(lines[:MAX_BODY_LINES]) + "\n…"})
        if sym.docstring_source == "llm" and sym.docstring.strip():
            body = body.model_copy(update={"generated_docstring": sym.docstring.strip()})
        bodies.append(body)
    return bodies


MAX_FACT_SYMBOLS = 12


def _code_facts(store: IndexStore, evidence: Evidence, citations: Sequence[str],
                answer: str) -> list[CodeFacts]:
    """The code's facts for the symbols the question targets and the answer names (in the evidence and the
    cited files), read from the indexed text: what the answer's claims are checked against."""
    from answer.answering.evidence import symbols_of

    named = {n for name in answer_mechanisms(answer) for n in (name, name.rsplit(".", 1)[-1])}
    paths = list(dict.fromkeys([*citations, *evidence.paths[:5]]))
    picked: dict[tuple[str, str], SymbolInfo] = {(s.path, s.qualname): s for s in evidence.promoted}
    for sym in symbols_of(store, paths):
        if sym.kind in {"function", "method", "class"} and (sym.qualname in named or sym.name in named):
            picked.setdefault((sym.path, sym.qualname), sym)
    facts = []
    for sym in list(picked.values())[:MAX_FACT_SYMBOLS]:
        body = indexed_body(sym, _indexed_text(store, sym.path))
        if body is not None:
            facts.append(CodeFacts(sym.qualname, sym.name, sym.signature, body.body))
    return facts


def _defining_citations(store: IndexStore, evidence: Evidence, answer: str,
                        allowed: Sequence[str]) -> tuple[str, ...]:
    """Evidence paths defining the code names `answer` uses (see citations.defining_paths)."""
    from answer.answering.evidence import symbols_of

    names = answer_mechanisms(answer)
    if not names:
        return ()
    definitions: dict[str, list[str]] = {path: [] for path in allowed}
    for sym in [*evidence.promoted, *symbols_of(store, list(allowed))]:
        if sym.path in definitions:
            definitions[sym.path].append(sym.qualname)
    texts = {path: evidence.texts.get(path, "") for path in allowed}
    return defining_paths(names, definitions, texts)


def _grounding(evidence: Evidence, citations: Sequence[str], bodies: Sequence[SymbolBody]) -> Grounding:
    cited = set(citations)
    if bodies and any(b.path in cited for b in bodies):
        return "symbol_body"
    if evidence.exact_symbol or any(s.path in cited for s in evidence.promoted):
        return "exact_symbol"
    return "extracted"


def _why(evidence: Evidence, rank: int) -> str:
    ranked = evidence.files[rank]
    reasons = [f"rank {rank + 1} by {'+'.join(ranked.tiers) or 'search'}"]
    if ranked.in_both:
        reasons.append("found by both sides of the question")
    defined = [s.qualname for s in evidence.promoted if s.path == ranked.path]
    if defined:
        reasons.append(f"defines {', '.join(defined)}")
    found = next((a for a in evidence.anchors if a.path == ranked.path and a.symbol), None)
    if found is not None and found.lines:
        # the symbol that answers, not the file's summary (every guess would repeat "It defines 16 classes…")
        reasons.append(f"best match {found.symbol} (lines {found.lines[0]}-{found.lines[1]})")
        return "; ".join(reasons)
    page = evidence.pages.get(ranked.path)
    if page and page.summary.strip():
        reasons.append(page.summary.strip().splitlines()[0][:160])
    return "; ".join(reasons)


def _respond(ctx: AnswerContext, evidence: Evidence, *, answer_text: str, citations: list[str],
             confidence: Confidence, degraded: str | None, grounding: Grounding | None,
             bodies: list[SymbolBody], flags: frozenset[str], notes: list[str]) -> AnswerResponse:
    ranked = evidence.paths
    cited = set(citations)
    size = 5 if "evidence" in flags else RETRIEVAL_SIZE[confidence]
    retrieval = []
    for ranked_file in evidence.files[:size]:
        page = evidence.pages.get(ranked_file.path)
        retrieval.append(RetrievalHit(
            title=page.title if page else ranked_file.path, target_path=ranked_file.path,
            score=round(ranked_file.score, 6), summary=page.summary if page else "",
            summary_generated=True if page is not None and page.generated else None,
            symbols=evidence.file_symbols.get(ranked_file.path) or None))
    candidates = [Candidate(path=a.path, lines=a.lines, symbol=a.symbol or None) for a in evidence.candidates]
    best_guesses = None
    if confidence == "low" and evidence.files:
        best_guesses = [
            BestGuess(file=f.path, why_relevant=_why(evidence, i), score=round(f.score, 6),
                      excerpt=(f.spans[0].snippet[:400] if f.spans and f.spans[0].snippet else None))
            for i, f in enumerate(evidence.files[:5])]
    answer_files = citations or ranked[:5]
    episode: Episode | None = select_episode(ctx.episodes.all(), answer_files, confidence)
    if evidence.degraded_search:
        notes.append("Retrieval was degraded (" + "; ".join(evidence.notes) + ").")
    return AnswerResponse(
        answer=answer_text,
        citations=citations,
        confidence=confidence,
        degraded=degraded,  # type: ignore[arg-type]
        grounding=grounding,
        retrieval_quality=evidence.quality if "diagnostics" in flags else None,
        candidate_files=[p for p in ranked if p not in cited][: 3 if confidence == "high" else 5],
        fallback_targets=ranked[:FALLBACK_TARGETS],
        candidates=candidates or None,
        retrieval=retrieval or None,
        symbol_bodies=bodies or None,
        best_guesses=best_guesses,
        evidence=[EvidenceText(path=p, text=evidence.texts[p]) for p in ranked if evidence.texts.get(p)]
        if degraded or "evidence" in flags else None,
        episodes=[episode] if episode else None,
        note=" ".join(notes) if notes else None,
    )


def _hint(reply: AnswerResponse) -> str:
    if reply.degraded == "no-llm-provider":
        return ("No synthesized answer: read the top candidates with get_context(targets=fallback_targets), "
                "or configure an LLM provider for cited answers.")
    if reply.degraded:
        return "Synthesis failed: verify fallback_targets with get_context, or retry get_answer later."
    if reply.confidence == "high":
        return "Grounded answer: act on it; open the cited lines with get_context only to edit them."
    if reply.confidence == "medium":
        return "Verify the answer with get_context on the citations and candidate_files before relying on it."
    return ("Low confidence: treat best_guesses as leads; narrow with search_codebase or get_context on "
            "fallback_targets, or rephrase with exact identifiers.")
