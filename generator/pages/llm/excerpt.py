"""Fit source text into a prompt budget: excerpts around the most important symbols, or parts to summarise.

Pure functions over lines. Budgets are in characters (see sourcebook.provider.CHARS_PER_TOKEN). An excerpt
keeps the file's head (imports, module docstring) and then, in order of importance, the first lines of each
symbol (signature, docstring, start of body), then whole bodies while room remains; gaps are marked "...".
A file too big even for a useful excerpt is split into parts along top-level symbol boundaries.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

HEAD_LINES = 25
FIRST_LINES = 30  # of each symbol, in the first pass
MAX_LINE_CHARS = 300  # minified lines are cut: one line must not eat the budget
GAP = "..."


@dataclass(frozen=True, slots=True)
class Part:
    start_line: int  # 1-based inclusive
    end_line: int
    text: str


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " ..."


def excerpt(source: str, regions: Sequence[tuple[int, int]], budget_chars: int) -> tuple[str, bool]:
    """`source` if it fits `budget_chars`; else an excerpt around `regions` (1-based line ranges, most
    important first). Returns (text, truncated)."""
    if len(source) <= budget_chars:
        return source, False
    lines = [_clip(line) for line in source.split("\n")]
    chosen: set[int] = set()  # 0-based line numbers
    used = 0

    def take(first: int, last: int) -> bool:
        """Add lines first..last (0-based, inclusive) while they fit; False once the budget is spent."""
        nonlocal used
        for i in range(max(first, 0), min(last, len(lines) - 1) + 1):
            if i in chosen:
                continue
            cost = len(lines[i]) + 1 + len(GAP) + 1  # a line may open a gap marker too
            if used + cost > budget_chars:
                return False
            chosen.add(i)
            used += cost
        return True

    take(0, HEAD_LINES - 1)
    for start, end in regions:
        take(start - 1, min(end, start + FIRST_LINES - 1) - 1)
    for start, end in regions:
        if not take(start - 1, end - 1):
            break
    out: list[str] = []
    previous = -1
    for i in sorted(chosen):
        if i != previous + 1:
            out.append(GAP)
        out.append(lines[i])
        previous = i
    if previous != len(lines) - 1:
        out.append(GAP)
    return "\n".join(out), True


def coverage(text: str, source: str) -> float:
    """Share of the source's lines an excerpt kept."""
    total = source.count("\n") + 1
    kept = sum(1 for line in text.split("\n") if line != GAP)
    return min(1.0, kept / total) if total else 1.0


def split_parts(source: str, boundaries: Sequence[tuple[int, int]], budget_chars: int) -> list[Part]:
    """Consecutive parts of at most `budget_chars`, cut between top-level symbols where possible.

    `boundaries` are the 1-based line ranges of top-level symbols in any order; a symbol longer than the
    budget is cut into line windows.
    """
    lines = [_clip(line) for line in source.split("\n")]
    starts = sorted({s for s, _ in boundaries if 1 < s <= len(lines)})
    cut_points = set(starts)
    parts: list[Part] = []
    current: list[str] = []
    size = 0
    first = 1
    for number, line in enumerate(lines, start=1):
        cost = len(line) + 1
        at_boundary = number in cut_points
        if current and (size + cost > budget_chars or (at_boundary and size > budget_chars * 0.6)):
            parts.append(Part(first, number - 1, "\n".join(current)))
            current, size, first = [], 0, number
        current.append(line)
        size += cost
    if current:
        parts.append(Part(first, len(lines), "\n".join(current)))
    return parts


def pick_parts(parts: Sequence[Part], regions: Sequence[tuple[int, int]], limit: int) -> list[Part]:
    """At most `limit` parts: those holding the most important regions (earlier regions weigh more),
    returned in file order."""
    if len(parts) <= limit:
        return list(parts)
    score = [0.0] * len(parts)
    for rank, (start, _end) in enumerate(regions):
        for i, part in enumerate(parts):
            if part.start_line <= start <= part.end_line:
                score[i] += 1.0 / (1 + rank)
                break
    score[0] += 0.5  # the head: imports and the module docstring say what the file is about
    best = sorted(range(len(parts)), key=lambda i: (-score[i], i))[:limit]
    return [parts[i] for i in sorted(best)]


def fit_lines(items: Sequence[str], budget_chars: int) -> tuple[list[str], int]:
    """The leading items that fit `budget_chars` (one line each), and how many were left out."""
    kept: list[str] = []
    used = 0
    for item in items:
        cost = len(item) + 3
        if used + cost > budget_chars:
            break
        kept.append(item)
        used += cost
    return kept, len(items) - len(kept)


def shorten(text: str, budget_chars: int) -> tuple[str, bool]:
    """`text` cut at a paragraph (or line) boundary to fit `budget_chars`."""
    if len(text) <= budget_chars:
        return text, False
    cut = text[:budget_chars]
    for sep in ("\n\n", "\n", " "):
        at = cut.rfind(sep)
        if at > budget_chars // 2:
            return cut[:at].rstrip() + "\n" + GAP, True
    return cut + GAP, True
