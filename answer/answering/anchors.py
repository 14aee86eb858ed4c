"""Where in a ranked file the answer points: the symbol and the line range (get_answer's `candidates`).

Pure. A search span is a chunk: a merged chunk covers several small definitions and names only the first,
so its lines are not the named symbol's. The anchor is a definition instead: one the question names (a
named class: its best-matching method, the class when none matches), else
the function whose own lines best match the question's terms (BM25 over the file's functions, the search
spans a tie-breaking bonus), else the function holding most of the score of the file's best spans (each
span's score shared out among the functions it overlaps, by how much of it each covers), else a definition
named by the question's words; the lines are the definition's own (a class: only the part the span covers),
clamped inside it, so a cited range never crosses into the neighbouring symbol. `anchors_in` adds the
functions that match best after the anchor: get_answer names two in its top file. A method declared without
a body (an interface's, an abstract one: its `bodiless`) comes after every function with a body.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Protocol

from answer.retrieval.tiers import SpanHit


class SymbolInfo(Protocol):
    """What an anchor reads of a symbol (evidence.SymbolInfo has it)."""

    @property
    def path(self) -> str: ...
    @property
    def qualname(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...

FUNCTIONS = frozenset({"function", "method"})
CONTAINERS = frozenset({"class", "struct", "interface", "trait", "impl", "enum", "namespace"})
# BM25 over one file's functions. Measured on history sets (bench/history_bench.py, function-level hit@5,
# 28 repositories in 13 languages: tune 0.385 -> 0.511, report 0.409 -> 0.473 over the best span's
# function); a bonus for terms in the function's name lost (6 Python and Go repositories: 0.54 -> 0.52), so
# the name counts as body text only (again on the 1,624-question sets: tune +0.005, report -0.002). A
# function's length is normalised weakly (b 0.75 -> 0.25): a long function holding the question's terms is
# more often the one that answers than a short one holding them once (tune 0.568 -> 0.585, report 0.573 ->
# 0.592; b 0.1-0.25 the same on the tune split, 0.5 half the gain, 1.0 a loss).
BM25_K1 = 1.2
BM25_B = 0.25
SPANS_COUNTED = 3  # the file's best search spans that add to a function's score (1/rank each, by overlap)


@dataclass(frozen=True, slots=True)
class Anchor:
    path: str
    symbol: str = ""  # qualname, "" when no definition answers (module-level code, a file without symbols)
    lines: tuple[int, int] | None = None


def _overlap(sym: SymbolInfo, start: int, end: int) -> int:
    return max(0, min(sym.end_line, end) - max(sym.start_line, start) + 1)


SPANS_READ = 5  # a file's best spans whose scores are shared out among its functions


def _function_mass(spans: Sequence[SpanHit], funcs: Sequence[SymbolInfo]) -> dict[SymbolInfo, float]:
    """Each function's share of the spans' scores: a span gives each function it overlaps the part of its
    score that the overlap is of the span (a one-function span all of it, a merged chunk of five small
    functions a fifth to each). Where one span names several functions, the others decide between them."""
    mass: dict[SymbolInfo, float] = {}
    for span in spans:
        length = max(1, span.end_line - span.start_line + 1)
        for sym in funcs:
            shared = _overlap(sym, span.start_line, span.end_line)
            if shared:
                mass[sym] = mass.get(sym, 0.0) + span.score * shared / length
    return mass


def clamp(sym: SymbolInfo, start: int, end: int) -> tuple[int, int]:
    """`start`-`end` cut to the symbol's own lines (the whole symbol when they do not meet)."""
    if not _overlap(sym, start, end):
        return sym.start_line, sym.end_line
    return max(start, sym.start_line), min(end, sym.end_line)


def _own(path: str, sym: SymbolInfo, start: int | None = None, end: int | None = None) -> Anchor:
    if start is None or end is None:
        return Anchor(path, sym.qualname, (sym.start_line, sym.end_line))
    return Anchor(path, sym.qualname, clamp(sym, start, end))


def best_function(functions: Sequence[SymbolInfo], source: str, query: Sequence[str],
                  spans: Sequence[SpanHit] = ()) -> SymbolInfo | None:
    """The function whose lines in `source` best match the query's index terms (`query`), plus the search
    spans' bonus (rank_functions); None when no function matches a term or a span."""
    ranked = rank_functions(functions, source, query, spans)
    return ranked[0][1] if ranked else None


def rank_functions(functions: Sequence[SymbolInfo], source: str, query: Sequence[str],
                   spans: Sequence[SpanHit] = ()) -> list[tuple[float, SymbolInfo]]:
    """The functions that match, best first, with their scores: BM25 with the file's functions as the
    documents (a term's occurrences in the lower-cased lines), plus 1/rank of each of the best spans by
    the share of the shorter of the two they share. A function matching no term and no span is left out."""
    if not functions or not source:
        return []
    wanted = list(dict.fromkeys(query))
    if not wanted:
        return []
    # where each line starts: a function's body is a slice of the text, cut once
    offsets = list(accumulate((len(line) + 1 for line in source.split("\n")), initial=0))

    def body(sym: SymbolInfo) -> str:
        start = offsets[min(max(0, sym.start_line - 1), len(offsets) - 1)]
        return source[start:offsets[sym.end_line] if sym.end_line < len(offsets) else len(source)]

    def counted(text: str) -> tuple[int, dict[str, int]]:
        # the length in characters (in proportion to its terms) and each term's occurrences as text: an
        # index term is a lower-cased piece of its word, so this counts every token the term is (and
        # words it is a piece of: measured the same as tokenising, at a third of the time)
        low = text.lower()
        return len(text), {t: n for t in wanted if (n := low.count(t))}

    docs = [counted(body(s)) for s in functions]
    average = sum(length for length, _ in docs) / len(docs) or 1.0
    df = {t: sum(1 for _, found in docs if found.get(t)) for t in wanted}
    scored: list[tuple[tuple[float, int, int], SymbolInfo]] = []
    for sym, (length, doc) in zip(functions, docs, strict=True):
        score = 0.0
        for term in wanted:
            tf = doc.get(term, 0)
            if tf:
                idf = math.log(1 + (len(docs) - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * length / average))
        bonus = 0.0
        for rank, hit in enumerate(spans[:SPANS_COUNTED], start=1):
            shared = _overlap(sym, hit.start_line, hit.end_line)
            if shared:
                shorter = min(sym.end_line - sym.start_line, hit.end_line - hit.start_line) + 1
                bonus = max(bonus, shared / max(1, shorter) / rank)
        score += bonus
        if score > 0:
            # on a tie the innermost (a method over the function around it), then the earlier
            scored.append(((score, sym.start_line, -sym.end_line), sym))
    scored.sort(key=lambda pair: pair[0], reverse=True)
    return [(key[0], sym) for key, sym in scored]


def anchor(path: str, spans: Sequence[SpanHit], symbols: Sequence[SymbolInfo],
           named: Sequence[SymbolInfo] = (), terms: Sequence[str] = (), *, source: str = "",
           query: Sequence[str] = ()) -> Anchor:
    """The anchor of file `path` given its search spans (best first), its symbols, the symbols the question
    names exactly, the question's content terms, the file's text and the question's index terms."""
    return anchors_in(path, spans, symbols, named, terms, source=source, query=query)[0]


def anchors_in(path: str, spans: Sequence[SpanHit], symbols: Sequence[SymbolInfo],
               named: Sequence[SymbolInfo] = (), terms: Sequence[str] = (), *, source: str = "",
               query: Sequence[str] = (), count: int = 1, bodiless: Collection[str] = ()) -> list[Anchor]:
    """Up to `count` anchors of file `path`, best first: its anchor (`anchor`), then the functions that
    match the query best after it (rank_functions), each with its own lines. Never empty. The functions
    `bodiless` names (qualnames: declared without a body, an abstract or interface method) come after
    every function with a body that matches, unless the question names one."""
    functions = [s for s in symbols if s.kind in FUNCTIONS]
    ranked = [sym for _, sym in rank_functions(functions, source, query, spans)] if query else []
    if bodiless:
        # the code a question about a change points at is a body: a declaration of its signature only
        # answers when nothing with a body does
        ranked = sorted(ranked, key=lambda sym: sym.qualname in bodiless)
    first = _first(path, spans, symbols, named=named, terms=terms, functions=functions, ranked=ranked,
                   bodiless=bodiless)
    wanted = max(1, count)
    # the first `wanted` ranked hold the `wanted - 1` after the anchor (it is among them at most once):
    # only those are resolved to their lines
    more = [_own(path, sym) for sym in ranked[:wanted] if sym.qualname != first.symbol]
    return [first, *more][:wanted]


def _member_of(function: SymbolInfo, container: SymbolInfo) -> bool:
    """Whether `function` belongs to `container`: its qualname is under the container's (a method in the
    class body, a Rust `impl` or Go receiver method away from its struct, a C++ method defined out of line)
    or its lines are inside the container's."""
    return (function.qualname.startswith(container.qualname + ".") or
            container.start_line <= function.start_line <= function.end_line <= container.end_line)


def _first(path: str, spans: Sequence[SpanHit], symbols: Sequence[SymbolInfo], *, named: Sequence[SymbolInfo],
           terms: Sequence[str], functions: Sequence[SymbolInfo], ranked: Sequence[SymbolInfo],
           bodiless: Collection[str] = ()) -> Anchor:
    for sym in named:
        if sym.path == path and sym.kind in CONTAINERS:
            member = next((f for f in ranked if _member_of(f, sym)), None)
            return _own(path, member if member is not None else sym)
        if sym.path == path and sym.kind in FUNCTIONS:
            return _own(path, sym)
    if ranked:
        return _own(path, ranked[0])
    if spans:
        best = spans[0]
        start, end = best.start_line, best.end_line
        mass = _function_mass(spans[:SPANS_READ], functions)
        if mass:
            # the most span score, a function with a body before a declaration; on a tie the innermost (a
            # method over its class's other methods)
            sym = max(mass, key=lambda s: (s.qualname not in bodiless, mass[s], s.start_line, -s.end_line))
            return _own(path, sym)
        boxes = [s for s in symbols if s.kind in CONTAINERS and _overlap(s, start, end)]
        if boxes:
            box = max(boxes, key=lambda s: (s.start_line, -s.end_line))
            return _own(path, box, start, end)
        return Anchor(path, "", (start, end))
    wanted = {t.lower() for term in terms for t in (term, term.rsplit(".", 1)[-1])}
    for sym in symbols:
        if (sym.kind in FUNCTIONS or sym.kind in CONTAINERS) and sym.name.lower() in wanted:
            return _own(path, sym)
    return Anchor(path)
