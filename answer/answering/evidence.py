"""Retrieve and enrich: question -> ranked files, their wiki pages, promoted symbols and the evidence text.

Retrieval is the index's hybrid search (the same file ranking `rank_files` gives), so get_answer and the
evaluation rank files identically. A relational question ("how does X talk to Y?") also runs each side as a
sub-query; files found by both sides get a 2x boost. The top two file pages are enriched with their symbols'
docstrings and source excerpts; symbols the question names are promoted (400-char docstring, 40-line body
excerpt) and put first. Everything shown to the model is cut to one character budget, and the text shown per
path is kept so grading checks the answer against exactly what the model saw.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from answer.answering.anchors import FUNCTIONS, Anchor, anchors_in
from answer.answering.grade import (
    GLOBAL_THRESHOLDS,
    Thresholds,
    content_terms,
    coverage,
    dominance,
    retrieval_quality,
)
from answer.answering.response import SymbolBody, SymbolEvidence
from answer.retrieval.query import identifier_parts
from answer.retrieval.question import parse_query
from generator.analyze.languages import detect_language, spec_for
from generator.index.memos import Memo
from sourcebook.errors import AccessError, NotFoundError
from sourcebook.redaction import is_secret_path
from sourcebook.sql import in_list, prefix_filter

if TYPE_CHECKING:
    from answer.answering.response import RetrievalQuality
    from answer.retrieval.tiers import FileHit, SpanHit
    from generator.index.store import IndexStore

log = logging.getLogger(__name__)

EVIDENCE_BUDGET = 24_000
EVIDENCE_BUDGET_WIDE = 32_000
SEARCH_LIMIT = 20
RELATIONAL_BOOST = 2.0
ENRICHED_FILES = 2
ENRICH_DOC_CHARS = 200
ENRICH_EXCERPT_LINES = 6
ENRICH_MAX_SYMBOLS = 12
PROMOTED_DOC_CHARS = 400
PROMOTED_BODY_LINES = 40
PROMOTED_MAX = 4
SPANS_PER_FILE = 3
SPAN_LINES = 60  # a span is shown whole up to this many lines (the search snippet is shorter)
HEAD_LINES = 30  # a ranked file without a matching span shows its head
EVIDENCE_FILES = 8
ANCHORED = 5  # files get_answer's `candidates` name a symbol and lines in
CANDIDATES = 5  # get_answer's `candidates`: symbols and lines in the top files
# The top file names its best two functions, the next files one each: the gold function of a history set
# (bench/history_bench.py, function-level hit@5) is the top file's runner-up more often than it is in the
# fifth file (tune split 0.513 -> 0.56, report 0.528 -> 0.57; a third in the top file, or a second only
# when its score is near the best's, did no better on the tune split).
TOP_FILE_CANDIDATES = 2
MAX_CACHED_TEXTS = 1000
# C and C++ declare a function in a header and define it elsewhere (a .c or .cpp file, an -inl.h, a method
# out of its class): a prototype names the function but holds none of its code
DECLARING_SUFFIXES = tuple(sorted({*spec_for("c").extensions, *spec_for("cpp").extensions}))
_LINE_COMMENT = re.compile(r"//.*$", re.M)
# Languages whose methods may be declared without a body (an interface's or an abstract class's method, a
# Kotlin `expect fun`, a TypeScript overload or interface signature, a Scala trait's `def`, a Go interface's
# method, a Rust trait's `fn`), a body being braces or `=` (Kotlin's and Scala's expression bodies, C#'s
# `=>`). C and C++ prototypes have their own rule (_defined).
BODILESS_LANGUAGES = frozenset({"java", "kotlin", "csharp", "php", "typescript", "tsx", "scala", "go",
                                "rust"})
# what starts a comment or a string; each is skipped to its end in one scan (a regex of whole strings tried
# again at every quote of an unclosed one, `"a\"a\"…`, was quadratic in a line: minutes for a hostile file)
_SKIPPED = re.compile(r"//|/\*|[\"']")
_STRING_BODY = {q: re.compile(rf"(?:[^{q}\\\n]|\\.)*") for q in "\"'"}
_TYPE_ARGUMENTS = re.compile(r"<[^<>]*>")


@dataclass(frozen=True, slots=True)
class SymbolInfo:
    path: str
    qualname: str
    name: str
    kind: str
    start_line: int
    end_line: int
    signature: str
    docstring: str
    docstring_source: str = "code"  # "llm": written by the wiki's writer, not by the code's authors

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> SymbolInfo:
        return cls(row["path"], row["qualname"], row["name"], row["kind"], int(row["start_line"]),
                   int(row["end_line"]), row.get("signature") or "", row.get("docstring") or "",
                   row.get("docstring_source") or "code")

    @property
    def code_docstring(self) -> str:
        """The docstring when the code's authors wrote it; "" for a generated one (never evidence)."""
        return "" if self.docstring_source == "llm" else self.docstring


@dataclass(slots=True)
class RankedFile:
    path: str
    score: float
    tiers: tuple[str, ...]
    spans: list[SpanHit] = field(default_factory=list)
    in_both: bool = False  # relational: found by both sides

    @property
    def best_lines(self) -> tuple[int, int] | None:
        return (self.spans[0].start_line, self.spans[0].end_line) if self.spans else None


@dataclass(frozen=True, slots=True)
class PageInfo:
    title: str
    summary: str
    written_by: str = "extracted"  # "llm": the summary is model prose, shown labelled and never as support

    @property
    def generated(self) -> bool:
        return self.written_by == "llm"


@dataclass(slots=True)
class Evidence:
    question: str
    files: list[RankedFile]
    pages: dict[str, PageInfo]
    file_symbols: dict[str, list[SymbolEvidence]]  # the top two files
    promoted: list[SymbolInfo]
    texts: dict[str, str]  # path -> the evidence text shown for it
    text: str  # the whole evidence, within budget
    indexed: dict[str, str]  # path -> sha of the indexed content
    quality: RetrievalQuality
    coverage: float
    exact_symbol: bool
    degraded_search: bool = False
    share: float | None = None  # the learned ranker's probability of the top file (SearchResult.top_share)
    notes: list[str] = field(default_factory=list)
    generated: dict[str, str] = field(default_factory=dict)  # path -> LLM-written prose known for it
    anchors: list[Anchor] = field(default_factory=list)  # the top ANCHORED files: symbol and lines
    candidates: list[Anchor] = field(default_factory=list)  # up to CANDIDATES anchors, best first

    @property
    def support(self) -> dict[str, str]:
        """Per path, the text shown minus its LLM-written lines: what may support a claim."""
        return {path: support_text(text) for path, text in self.texts.items()}

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]

    @property
    def scores(self) -> list[float]:
        return [f.score for f in self.files]


# ---------------------------------------------------------------- pure: ranking

def fuse_relational(main: Sequence[FileHit], side_a: Sequence[FileHit],
                    side_b: Sequence[FileHit]) -> list[tuple[str, float, tuple[str, ...], bool]]:
    """The whole question's ranking, with RELATIONAL_BOOST x for files that both sides found.

    Returns (path, score, tiers, in_both), best first. Only the main ranking's files compete: summing the
    sides' rankings in as well was measured on the development set and lost hit@1 (0.79 -> 0.63 on its
    relational questions), because each side alone is a vaguer query than the question.
    """
    both = {h.path for h in side_a} & {h.path for h in side_b}
    fused = [(h.path, h.score * (RELATIONAL_BOOST if h.path in both else 1.0), h.tiers, h.path in both)
             for h in main]
    fused.sort(key=lambda item: (-item[1], item[0]))
    return fused


def group_spans(files: Iterable[tuple[str, float, tuple[str, ...], bool]],
                hits: Sequence[SpanHit], file_spans: Mapping[str, Sequence[SpanHit]] | None = None
                ) -> list[RankedFile]:
    """Each ranked file with its spans: its own best spans (`file_spans`, from the search that ranked it),
    then any other hit of it (a relational side's)."""
    by_path: dict[str, list[SpanHit]] = {path: list(spans) for path, spans in (file_spans or {}).items()}
    for hit in hits:
        mine = by_path.setdefault(hit.path, [])
        if not any((h.start_line, h.end_line) == (hit.start_line, hit.end_line) for h in mine):
            mine.append(hit)
    return [RankedFile(path, score, tiers, by_path.get(path, []), both) for path, score, tiers, both in files]


def symbol_matches(identifiers: Sequence[str], symbols: Sequence[SymbolInfo]) -> list[SymbolInfo]:
    """Symbols a question names exactly (qualname, a dotted suffix of it, or the bare name)."""
    wanted: dict[str, int] = {}
    for order, ident in enumerate(identifiers):
        for part in identifier_parts(ident):
            wanted.setdefault(part, order)
    found = [s for s in symbols if s.qualname in wanted or s.name in wanted]
    # the question's first identifier first; classes and functions before variables
    kind_rank = {"class": 0, "function": 1, "method": 1}
    found.sort(key=lambda s: (min(wanted.get(s.qualname, 99), wanted.get(s.name, 99)),
                              kind_rank.get(s.kind, 2), s.path, s.start_line))
    return found


# ---------------------------------------------------------------- pure: text

def excerpt_lines(text: str, start: int, end: int, limit: int) -> str:
    lines = text.split("\n")
    start = max(1, start)
    end = min(len(lines), end, start + limit - 1)
    return "\n".join(lines[start - 1:end])


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


# LLM-written text shown to the model starts its line with this label; grading drops those lines
# (support_text), so generated prose is never what supports a claim.
GENERATED_LABEL = "(LLM-written wiki summary, may be wrong; not evidence)"
GENERATED_DOC_LABEL = "(LLM-written docstring, may be wrong; not evidence)"


def support_text(text: str) -> str:
    """`text` without its LLM-written lines."""
    return "\n".join(line for line in text.split("\n")
                     if GENERATED_LABEL not in line and GENERATED_DOC_LABEL not in line)


def _generated_doc_line(qualname: str, docstring: str, limit: int) -> str:
    return f"{GENERATED_DOC_LABEL} {qualname}: {' '.join(_cut(docstring.strip(), limit).split())}"


def promoted_block(sym: SymbolInfo, source: str) -> str:
    body = excerpt_lines(source, sym.start_line, sym.end_line, PROMOTED_BODY_LINES) if source else ""
    parts = [f"### {sym.path}:{sym.start_line}-{sym.end_line} {sym.kind} {sym.qualname}"]
    if sym.code_docstring:
        parts.append(_cut(sym.code_docstring.strip(), PROMOTED_DOC_CHARS))
    if body:
        parts.append(f"```\n{body}\n```")
    # a generated docstring comes after the code, on one labelled line: a model copies unlabelled prose
    # back as if the code said it
    if sym.docstring_source == "llm" and sym.docstring.strip():
        parts.append(_generated_doc_line(sym.qualname, sym.docstring, PROMOTED_DOC_CHARS))
    return "\n".join(parts)


def lead_line(sym: SymbolInfo) -> str:
    """The line a file's evidence starts with: the symbol that answers, its lines, signature and the first
    line of the docstring its code's authors wrote."""
    line = f"{sym.kind} {sym.qualname} (lines {sym.start_line}-{sym.end_line})"
    if sym.signature:
        line += f": {' '.join(sym.signature.split())}"
    doc = sym.code_docstring.strip()
    if doc:
        line += f" - {_cut(doc.splitlines()[0].strip(), ENRICH_DOC_CHARS)}"
    return line


def file_block(rank: int, ranked: RankedFile, page: PageInfo | None,
               symbols: Sequence[SymbolEvidence], source: str = "", *, lead: SymbolInfo | None = None) -> str:
    """One ranked file's evidence: the answering symbol (`lead`) first, then the page (None: its summary is
    shown elsewhere in the answer), the symbols, the matching spans and, labelled last, generated prose."""
    parts = [f"## [{rank}] {ranked.path}"]
    if is_secret_path(ranked.path):
        # a secrets file by name (.env, credentials.json, secrets.yaml…): its content never goes to a model
        parts.append("(a secrets file by name: its content stays on this machine)")
        return "\n".join(parts)
    if lead is not None and not (symbols and symbols[0].qualname == lead.qualname):
        parts.append(lead_line(lead))  # an enriched file's symbol list starts with it already
    generated_page = page is not None and page.generated and bool(page.summary.strip())
    for sym in symbols:
        line = f"- {sym.kind} {sym.qualname} (lines {sym.lines[0]}-{sym.lines[1]})"
        if sym.signature:
            line += f": {sym.signature}"
        parts.append(line)
        if sym.docstring and sym.docstring_source != "llm":
            parts.append(f"  {sym.docstring}")
        if sym.excerpt:
            parts.append("  ```\n" + "\n".join("  " + x for x in sym.excerpt.split("\n")) + "\n  ```")
    if page is not None and not generated_page:  # what the file is, after what in it answers
        parts.append(f"Page: {page.title} - {_cut(page.summary.strip(), 600)}" if page.summary else
                     f"Page: {page.title}")
    shown = 0
    for span in ranked.spans[:SPANS_PER_FILE]:
        text = excerpt_lines(source, span.start_line, span.end_line, SPAN_LINES) if source else span.snippet
        if text:
            end = min(span.end_line, span.start_line + SPAN_LINES - 1) if source else span.end_line
            parts.append(f"{ranked.path}:{span.start_line}-{end}\n```\n{text}\n```")
            shown += 1
    if not shown and source:
        head = excerpt_lines(source, 1, HEAD_LINES, HEAD_LINES)
        parts.append(f"{ranked.path}:1-{HEAD_LINES}\n```\n{head}\n```")
    for sym in symbols:  # generated docstrings after all the code, labelled
        if sym.docstring and sym.docstring_source == "llm":
            parts.append(_generated_doc_line(sym.qualname, sym.docstring, ENRICH_DOC_CHARS))
    if generated_page and page is not None:  # after the code, on one labelled line
        summary = " ".join(_cut(page.summary.strip(), 600).split())
        parts.append(f"{GENERATED_LABEL} {page.title} - {summary}")
    return "\n".join(parts)


def assemble(blocks: Sequence[tuple[str, str]], budget: int) -> tuple[str, dict[str, str]]:
    """Concatenate (path, block) in priority order within `budget` characters; the block that crosses the
    budget is cut, the rest dropped. Returns the text and, per path, the text shown for it."""
    out: list[str] = []
    shown: dict[str, str] = {}
    used = 0
    for path, block in blocks:
        room = budget - used
        if room <= 80:
            break
        piece = block if len(block) + 2 <= room else _cut(block, room - 2)
        out.append(piece)
        used += len(piece) + 2
        shown[path] = (shown.get(path, "") + "\n" + piece).strip()
    return "\n\n".join(out), shown


# ---------------------------------------------------------------- I/O: the index
# An open IndexStore reads every table at one pinned version, so what is read from it never changes: small
# tables (symbols, pages, file hashes) are loaded once per store and file texts memoised per path, in
# `store.memos`, which lives exactly as long as that version does.
_SYMBOLS: Memo[list[SymbolInfo]] = Memo("answer_symbols")
_PAGES: Memo[dict[str, PageInfo]] = Memo("answer_pages")
_SHAS: Memo[dict[str, str]] = Memo("answer_shas")
_TEXTS: Memo[dict[str, str]] = Memo("answer_texts")

def all_symbols(store: IndexStore) -> list[SymbolInfo]:
    cached = store.memos.get(_SYMBOLS)
    if cached is None:
        from answer.retrieval.tiers import symbol_table  # the search layer's per-store symbol rows, shared

        cached = store.memos.put(_SYMBOLS, [SymbolInfo.from_row(r) for r in symbol_table(store)])
    return list(cached)


_SYMBOL_COLUMNS = ["path", "qualname", "name", "kind", "start_line", "end_line", "signature", "docstring",
                   "docstring_source"]


def _some_symbols(store: IndexStore, where: str) -> list[SymbolInfo] | None:
    """The symbols matching `where`, read from LanceDB by a one-shot process (in table order, as a filter
    of `all_symbols` gives them); None when the process holds every symbol anyway."""
    from answer.retrieval.tiers import whole_tables

    if _SYMBOLS in store.memos or whole_tables(store):
        return None
    return [SymbolInfo.from_row(r) for r in store.rows("symbols", _SYMBOL_COLUMNS, where)]


def symbols_of(store: IndexStore, paths: Sequence[str]) -> list[SymbolInfo]:
    wanted = set(paths)
    if not wanted:
        return []
    some = _some_symbols(store, in_list("path", sorted(wanted)))
    return some if some is not None else [s for s in all_symbols(store) if s.path in wanted]


def _named_symbols(store: IndexStore, identifiers: Sequence[str], scope: str | None) -> list[SymbolInfo]:
    names = {part for ident in identifiers for part in identifier_parts(ident) if len(part) >= 2}
    if not names:
        return []
    wanted = sorted(names)
    where = f"({in_list('name', wanted)} OR {in_list('qualname', wanted)})"
    some = _some_symbols(store, f"{where} AND ({prefix_filter('path', scope)})" if scope else where)
    if some is not None:
        return some
    return [s for s in all_symbols(store)
            if (s.name in names or s.qualname in names) and (not scope or s.path.startswith(scope))]


def _pages_of(store: IndexStore, paths: Sequence[str]) -> dict[str, PageInfo]:
    pages = store.memos.get(_PAGES)
    if pages is None:
        rows = store.rows("pages", ["target_path", "kind", "title", "summary", "written_by"])
        pages = store.memos.put(_PAGES, {r["target_path"]: PageInfo(r["title"], r["summary"],
                                                                    r.get("written_by") or "extracted")
                                         for r in rows if r["kind"] == "file"})
    return {path: pages[path] for path in paths if path in pages}


def _files_of(store: IndexStore, paths: Sequence[str], with_text: Sequence[str]) -> tuple[dict[str, str],
                                                                                         dict[str, str]]:
    """(path -> indexed sha, path -> indexed text for `with_text`)."""
    shas = store.memos.get(_SHAS)
    if shas is None:
        shas = store.memos.put(_SHAS, {r["path"]: r["sha"] for r in store.rows("files", ["path", "sha"])})
    texts = store.memos.setdefault(_TEXTS, {})
    if len(texts) > MAX_CACHED_TEXTS:  # bound the memo on huge repositories; it refills from the hot files
        texts.clear()
    missing = [p for p in with_text if p not in texts and p in shas]
    if missing:
        for r in store.rows("files", ["path", "text"], in_list("path", missing)):
            texts[r["path"]] = r["text"]
    return ({p: shas[p] for p in paths if p in shas},
            {p: texts[p] for p in with_text if p in texts})


def rank_symbols(syms: Sequence[SymbolInfo], terms: Sequence[str],
                 spans: Sequence[SpanHit], lead: SymbolInfo | None = None) -> list[SymbolInfo]:
    """A file's symbols, most relevant first: the one its anchor names (`lead`), named by the question, then
    inside a matching span, then definitions before variables, in file order."""
    wanted = {t.lower() for term in terms for t in (term, term.rsplit(".", 1)[-1])}

    def key(sym: SymbolInfo) -> tuple[bool, bool, bool, bool, int]:
        named = sym.name.lower() in wanted or sym.qualname.lower() in wanted
        in_span = any(h.start_line <= sym.start_line <= h.end_line or
                      sym.start_line <= h.start_line <= sym.end_line for h in spans)
        return (sym != lead, not named, not in_span, sym.kind not in {"class", "function", "method"},
                sym.start_line)

    return sorted(syms, key=key)


def _file_symbols(syms: Sequence[SymbolInfo], source: str) -> list[SymbolEvidence]:
    """A file page's symbols for the evidence: docstring head and the first lines of the source."""
    out = []
    for sym in syms[:ENRICH_MAX_SYMBOLS]:
        excerpt = excerpt_lines(source, sym.start_line, sym.end_line, ENRICH_EXCERPT_LINES) if source else ""
        doc = _cut(" ".join(sym.docstring.split()), ENRICH_DOC_CHARS)
        generated = sym.docstring_source == "llm"
        out.append(SymbolEvidence(
            qualname=sym.qualname, kind=sym.kind, lines=(sym.start_line, sym.end_line),
            signature=sym.signature, docstring=doc or None,
            docstring_source=("llm" if generated else "code") if doc else None,
            excerpt=excerpt or None))
    return out


def retrieve(store: IndexStore, question: str, scope: str | None = None,
             budget: int = EVIDENCE_BUDGET, thresholds: Thresholds = GLOBAL_THRESHOLDS) -> Evidence:
    """Search, fuse (relational), enrich and assemble the evidence for `question`; its retrieval quality is
    labelled with `thresholds` (a repository's calibrated ones, or the global ones)."""
    from answer.retrieval.tiers import search_codebase

    parsed = parse_query(question)
    idents = parsed.identifiers
    main = search_codebase(store, question, "hybrid", scope, SEARCH_LIMIT)
    notes = list(main.notes)
    degraded = main.degraded
    hits = list(main.hits)
    sides = parsed.sides
    if sides:
        side_a = search_codebase(store, sides[0], "hybrid", scope, SEARCH_LIMIT)
        side_b = search_codebase(store, sides[1], "hybrid", scope, SEARCH_LIMIT)
        degraded = degraded or side_a.degraded or side_b.degraded
        fused = fuse_relational(main.files, side_a.files, side_b.files)
        share = None  # the whole question's ranking is no model's
        seen = {(h.path, h.start_line) for h in hits}
        hits += [h for h in [*side_a.hits, *side_b.hits] if (h.path, h.start_line) not in seen]
    else:
        fused = [(f.path, f.score, f.tiers, False) for f in main.files]
        share = main.top_share
    files = group_spans(fused, hits, main.file_spans)[:SEARCH_LIMIT]

    promoted = symbol_matches(idents.names, _named_symbols(store, idents.names, scope))[:PROMOTED_MAX]
    top = [f.path for f in files[:ENRICHED_FILES]]
    promoted_paths = [s.path for s in promoted]
    evidence_paths = list(dict.fromkeys([*(f.path for f in files[:EVIDENCE_FILES]), *promoted_paths]))
    shas, sources = _files_of(store, evidence_paths, evidence_paths)
    pages = _pages_of(store, [f.path for f in files[:5]])
    by_path: dict[str, list[SymbolInfo]] = {}
    for sym in symbols_of(store, [f.path for f in files[:ANCHORED]]):  # one read for anchors and enrichment
        by_path.setdefault(sym.path, []).append(sym)
    terms = content_terms(question)
    bodiless = {f.path: bodiless_functions(by_path.get(f.path, []), sources.get(f.path, ""))
                for f in files[:ANCHORED]}
    per_file = [anchors_in(f.path, f.spans, by_path.get(f.path, []), promoted, terms,
                           source=sources.get(f.path, ""), query=parsed.terms,
                           count=(TOP_FILE_CANDIDATES + CANDIDATES) if rank == 0 else 1,
                           bodiless=bodiless[f.path])
                for rank, f in enumerate(files[:ANCHORED])]
    anchors = [found[0] for found in per_file]
    chosen = [a for rank, found in enumerate(per_file)
              for a in found[:TOP_FILE_CANDIDATES if rank == 0 else 1]]
    spare = per_file[0][TOP_FILE_CANDIDATES:] if per_file else []
    named = {(s.path, s.qualname) for s in promoted}
    ordered = with_bodies_first(chosen, spare, bodiless, named)
    candidates = _defined(store, ordered, sources, scope)[:CANDIDATES]
    spans_of = {f.path: f.spans for f in files[:ENRICHED_FILES]}
    leads = _lead_symbols(anchors, by_path)
    file_symbols = {path: _file_symbols(rank_symbols(by_path.get(path, []), terms, spans_of.get(path, []),
                                                     leads.get(path)),
                                        sources.get(path, "")) for path in top}

    blocks: list[tuple[str, str]] = [(s.path, promoted_block(s, sources.get(s.path, ""))) for s in promoted]
    summarized = False
    for rank, ranked in enumerate(files[:EVIDENCE_FILES], start=1):
        # a file's summary says what the file is, not what answers: at most one per answer, the first
        # file's (the others' hits would each repeat "It defines 16 classes…")
        page = pages.get(ranked.path)
        if page is not None and page.summary.strip():
            page = None if summarized else page
            summarized = True
        block = file_block(rank, ranked, page, file_symbols.get(ranked.path, []),
                           sources.get(ranked.path, ""), lead=leads.get(ranked.path))
        blocks.append((ranked.path, block))
    text, shown = assemble(blocks, budget)
    generated = _generated_prose(pages, [*promoted, *(s for path in top for s in by_path.get(path, []))])

    top_text = f"{files[0].path}\n{support_text(shown.get(files[0].path, ''))}" if files else ""
    cover = coverage(terms, top_text)
    exact = bool(files) and any(s.path == files[0].path for s in promoted)
    quality = retrieval_quality([f.score for f in files], cover, exact_symbol=exact, thresholds=thresholds,
                                share=share)
    log.debug("retrieval for %r: %d files, dominance %.2f, share %s, coverage %.2f -> %s", question[:60],
              len(files), dominance([f.score for f in files]), share, cover, quality)
    return Evidence(question=question, files=files, pages=pages, file_symbols=file_symbols, promoted=promoted,
                    texts=shown, text=text, indexed=shas, quality=quality, coverage=cover, exact_symbol=exact,
                    degraded_search=degraded, share=share, notes=notes, generated=generated, anchors=anchors,
                    candidates=candidates)


def with_bodies_first(chosen: Sequence[Anchor], spare: Sequence[Anchor],
                      bodiless: Mapping[str, Collection[str]], named: Collection[tuple[str, str]] = ()
                      ) -> list[Anchor]:
    """The `chosen` candidates with those naming a function declared without a body (`bodiless`: path ->
    qualnames) moved last, each slot they leave taken by the next of the top file's functions with a body
    (`spare`): the code a change touches is an implementation, a declaration shows only its signature. A
    declaration the question names (`named`: path, qualname) keeps its place."""
    declared = [a for a in chosen if a.symbol in bodiless.get(a.path, ()) and (a.path, a.symbol) not in named]
    if not declared:
        return list(chosen)
    more = iter([a for a in spare if a.symbol not in bodiless.get(a.path, ()) and a not in chosen])
    placed = [next(more, None) if a in declared else a for a in chosen]
    return [*(a for a in placed if a is not None), *declared]


def is_declaration(text: str) -> bool:
    """Whether a C or C++ function's own lines `text` only declare it: a prototype ending in `;` with no
    body (`int ini_parse(const char* filename, ini_handler handler, void* user);`)."""
    code = _LINE_COMMENT.sub("", text).strip()
    return bool(code) and code.endswith(";") and "{" not in code


def declares_only(text: str) -> bool:
    """Whether a method's own lines `text` (in a BODILESS_LANGUAGES language) declare it without a body:
    outside its comments, strings, parameter lists, attributes and type arguments there is no `{` and no
    `=` (`fun parse(x: String): T`, `abstract void run();`, `run(x: string): void;`). An expression body
    (`fun x() = y`, `int X() => y;`) is a body, and so is any other `=>` left (a TypeScript function type
    returned reads the same): a doubt keeps the method."""
    if text.rstrip().endswith("}"):  # a block closes it (most methods: no need to read them through)
        return False
    code = code_only(text).replace("->", " ")
    depth, top = 0, []
    for ch in code:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif depth == 0:
            top.append(ch)
    outside = "".join(top)
    while (fewer := _TYPE_ARGUMENTS.sub("", outside)) != outside:
        outside = fewer
    return bool(outside.strip()) and "{" not in outside and "=" not in outside


def code_only(text: str) -> str:
    """`text` without its `//` and `/* */` comments and its quoted strings, in one pass: an unclosed comment
    runs to the end, an unclosed string to the end of its line (its newline kept)."""
    out: list[str] = []
    at, end = 0, len(text)
    while (found := _SKIPPED.search(text, at)) is not None:
        out.append(text[at:found.start()])
        opener = found.group()
        if opener == "//":
            stop = text.find("\n", found.end())
            at = end if stop < 0 else stop
        elif opener == "/*":
            stop = text.find("*/", found.end())
            at = end if stop < 0 else stop + 2
        else:  # the body pattern always matches (maybe nothing): one scan from the quote on
            body = _STRING_BODY[opener].match(text, found.end())
            stop = body.end() if body is not None else found.end()
            at = stop + 1 if stop < end and text[stop] == opener else stop
    out.append(text[at:])
    return "".join(out)


def bodiless_functions(symbols: Sequence[SymbolInfo], text: str) -> set[str]:
    """The qualnames of the functions among one file's `symbols` (with its `text`) that declares_only."""
    if not text or detect_language(symbols[0].path if symbols else "") not in BODILESS_LANGUAGES:
        return set()
    lines = text.split("\n")
    return {s.qualname for s in symbols
            if s.kind in FUNCTIONS and 1 <= s.start_line <= s.end_line <= len(lines)
            and declares_only("\n".join(lines[s.start_line - 1:s.end_line]))}


def _bare(qualname: str) -> str:
    """`a.b.write~2` -> `a.b.write`: overloads are numbered in file order, a declaration's and its
    definition's numbers need not agree."""
    return re.sub(r"~\d+$", "", qualname)


def definition_of(declared: Anchor, symbols: Sequence[SymbolInfo], texts: Mapping[str, str]
                  ) -> SymbolInfo | None:
    """The definition, among `symbols` (with their files' `texts`), of the function a declaration anchor
    names: a function with a body in another C or C++ file whose qualname is the declaration's or one
    ending the other (`file_helper.write` defined out of line for `spdlog.details.file_helper.write`); on a
    choice, the one in a file named like the header (os.h: os-inl.h, os.c), then the longest."""
    wanted = _bare(declared.symbol)
    stem = declared.path.rsplit("/", 1)[-1].split(".", 1)[0]
    found = []
    for sym in symbols:
        other = _bare(sym.qualname)
        # a method's qualnames meet on their class (a free function of the same name is another function)
        related = other == wanted or ("." in other and "." in wanted and
                                      (other.endswith("." + wanted) or wanted.endswith("." + other)))
        if sym.path == declared.path or sym.kind not in FUNCTIONS or not related:
            continue
        if not sym.path.endswith(DECLARING_SUFFIXES):
            continue
        body = excerpt_lines(texts.get(sym.path, ""), sym.start_line, sym.end_line, SPAN_LINES)
        if body and "{" in body:
            found.append(sym)
    return max(found, key=lambda s: (s.path.rsplit("/", 1)[-1].startswith(stem), s.end_line - s.start_line,
                                     s.path), default=None)


def _defined(store: IndexStore, candidates: Sequence[Anchor], sources: Mapping[str, str], scope: str | None
             ) -> list[Anchor]:
    """`candidates` with each C or C++ prototype replaced by its definition where the index holds one (the
    code that answers is there, not in the header), each candidate once."""
    declared = {a for a in candidates if a.symbol and a.lines and a.path.endswith(DECLARING_SUFFIXES)
                and is_declaration(excerpt_lines(sources.get(a.path, ""), *a.lines, SPAN_LINES))}
    if not declared:
        return list(candidates)
    names = sorted({_bare(a.symbol).rsplit(".", 1)[-1] for a in declared})
    some = _some_symbols(store, in_list("name", names))
    symbols = some if some is not None else [s for s in all_symbols(store) if s.name in names]
    if scope:
        symbols = [s for s in symbols if s.path.startswith(scope)]
    _, texts = _files_of(store, [], sorted({s.path for s in symbols if s.kind in FUNCTIONS}))
    out: dict[tuple[str, str], Anchor] = {}
    for given in candidates:
        found = definition_of(given, symbols, texts) if given in declared else None
        a = given if found is None else Anchor(found.path, found.qualname, (found.start_line, found.end_line))
        out.setdefault((a.path, a.symbol), a)
    return list(out.values())


def _lead_symbols(anchors: Sequence[Anchor], by_path: dict[str, list[SymbolInfo]]) -> dict[str, SymbolInfo]:
    """Per anchored path, the symbol its anchor names."""
    out: dict[str, SymbolInfo] = {}
    for a in anchors:
        for sym in by_path.get(a.path, []):
            if a.symbol and sym.qualname == a.symbol:
                out[a.path] = sym
                break
    return out


def _generated_prose(pages: dict[str, PageInfo], symbols: Iterable[SymbolInfo]) -> dict[str, str]:
    """Per path, the LLM-written prose about it (page summary, generated docstrings): what an answer must
    not merely repeat."""
    out: dict[str, list[str]] = {}
    for path, page in pages.items():
        if page.generated and page.summary.strip():
            out.setdefault(path, []).append(page.summary)
    for sym in symbols:
        if sym.docstring_source == "llm" and sym.docstring.strip():
            out.setdefault(sym.path, []).append(sym.docstring)
    return {path: "\n".join(dict.fromkeys(texts)) for path, texts in out.items()}


# ---------------------------------------------------------------- I/O: live bodies

def live_sha(root: Path, path: str) -> str | None:
    from generator.analyze.scan import read_source

    try:
        return hashlib.sha256(read_source(root, path)).hexdigest()
    except (NotFoundError, AccessError, OSError):
        return None


def _bounds_hold(lines: list[str], sym: SymbolInfo) -> bool:
    """The indexed span still starts at the definition: its name appears in the first lines (decorators)."""
    if sym.end_line > len(lines) or sym.start_line < 1:
        return False
    head = "\n".join(lines[sym.start_line - 1: min(sym.end_line, sym.start_line + 5)])
    return sym.name in head


def live_body(root: Path, sym: SymbolInfo, indexed_sha: str | None) -> SymbolBody | None:
    """The symbol's full body from disk. When the file changed since indexing, the bounds are re-derived by
    parsing the live file; `changed_since_index` says so. None when the symbol is gone."""
    from generator.analyze.scan import decode, read_source

    try:
        raw = read_source(root, sym.path)
    except (NotFoundError, AccessError, OSError):
        return None
    changed = indexed_sha is not None and hashlib.sha256(raw).hexdigest() != indexed_sha
    lines = decode(raw).split("\n")
    start, end = sym.start_line, sym.end_line
    if changed or not _bounds_hold(lines, sym):
        relocated = _reparse_bounds(sym, raw)
        if relocated is None:
            return None
        start, end = relocated
    return SymbolBody(qualname=sym.qualname, kind=sym.kind, path=sym.path, start_line=start, end_line=end,
                      body="\n".join(lines[start - 1:end]), changed_since_index=True if changed else None)


def indexed_body(sym: SymbolInfo, text: str | None) -> SymbolBody | None:
    """The symbol's full body from its file's indexed text (no checkout on this machine): the indexed bounds
    describe exactly this text, so nothing is re-derived. None when the text or the span is missing."""
    if text is None:
        return None
    lines = text.split("\n")
    if not 1 <= sym.start_line <= sym.end_line <= len(lines):
        return None
    return SymbolBody(qualname=sym.qualname, kind=sym.kind, path=sym.path, start_line=sym.start_line,
                      end_line=sym.end_line, body="\n".join(lines[sym.start_line - 1:sym.end_line]))


def _reparse_bounds(sym: SymbolInfo, raw: bytes) -> tuple[int, int] | None:
    from generator.analyze.facts import SourceFile
    from generator.analyze.languages import detect_language
    from generator.analyze.parse import extract

    source = SourceFile(path=sym.path, language=detect_language(sym.path), size=len(raw),
                        sha=hashlib.sha256(raw).hexdigest())
    for fresh in extract(source, raw).symbols:
        if fresh.qualname == sym.qualname:
            return fresh.start_line, fresh.end_line
    return None
