"""Where in a ranked file the answer points: the symbol and the line range (get_answer's `candidates`).

Pure. A search span is a chunk: a merged chunk covers several small definitions and names only the first,
so its lines are not the named symbol's. The anchor is a definition instead: one the question names, else
the function holding most of the score of the file's best spans (each span's score shared out among the
functions it overlaps, by how much of it each covers), else a definition named by the question's words; the
lines are the definition's own (a class: only the part the span covers), so a cited range never crosses
into the neighbouring symbol.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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


def anchor(path: str, spans: Sequence[SpanHit], symbols: Sequence[SymbolInfo],
           named: Sequence[SymbolInfo] = (), terms: Sequence[str] = ()) -> Anchor:
    """The anchor of file `path` given its search spans (best first), its symbols, the symbols the question
    names exactly, and the question's content terms."""
    for sym in named:
        if sym.path == path and (sym.kind in FUNCTIONS or sym.kind in CONTAINERS):
            return Anchor(path, sym.qualname, (sym.start_line, sym.end_line))
    if spans:
        best = spans[0]
        start, end = best.start_line, best.end_line
        mass = _function_mass(spans[:SPANS_READ], [s for s in symbols if s.kind in FUNCTIONS])
        if mass:
            # the most span score; on a tie the innermost (a method over its class's other methods)
            sym = max(mass, key=lambda s: (mass[s], s.start_line, -s.end_line))
            return Anchor(path, sym.qualname, (sym.start_line, sym.end_line))
        boxes = [s for s in symbols if s.kind in CONTAINERS and _overlap(s, start, end)]
        if boxes:
            box = max(boxes, key=lambda s: (s.start_line, -s.end_line))
            return Anchor(path, box.qualname, (max(start, box.start_line), min(end, box.end_line)))
        return Anchor(path, "", (start, end))
    wanted = {t.lower() for term in terms for t in (term, term.rsplit(".", 1)[-1])}
    for sym in symbols:
        if (sym.kind in FUNCTIONS or sym.kind in CONTAINERS) and sym.name.lower() in wanted:
            return Anchor(path, sym.qualname, (sym.start_line, sym.end_line))
    return Anchor(path)
