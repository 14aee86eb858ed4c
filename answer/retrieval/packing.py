"""get_context packing: the most relevant code for a query or explicit targets, inside a token budget.

Pure: candidates in, packed spans out. The caller (answer/serving/tools.py) finds the seed spans (search
hits or the
targets the agent named), the symbols they call and their callers (the reference graph), and a function that
reads a line range; this module decides order, de-duplication and what fits.

Counting rule (documented, and the only one used): a span costs `ceil(len(text) / 4)` tokens, where `text`
is exactly the `text` field returned for it (the source lines joined with "\\n", no header). The sum of the
costs of the returned spans never exceeds `budget_tokens`. Four characters per token is the usual estimate
for code with BPE tokenizers; we cannot ship a real tokenizer offline (tiktoken downloads its tables).

Order of priority: seeds by score (the top match first), then the definitions the seeds call, then the
seeds' key callers (at most MAX_CALLERS per seed, best-ranked first). Greedy: a candidate that does not fit
is skipped and smaller ones after it may still fit. The first seed is always included: if it alone is larger
than the budget it is cut to whole lines (or, if a single line is too long, to characters) and marked
`truncated`, so a query that matched anything never comes back empty. Explicit targets (files, ranges,
symbols the agent named) that overflow are likewise cut to the remaining budget when at least
MIN_TRUNCATED_TOKENS are left, rather than dropped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from sourcebook.errors import UsageError

CHARS_PER_TOKEN = 4
DEFAULT_BUDGET_TOKENS = 4000
MAX_BUDGET_TOKENS = 200_000
MAX_CALLEES = 6  # per seed
MAX_CALLERS = 3  # per seed
MIN_TRUNCATED_TOKENS = 32  # a named target is cut to fit only if at least this much budget is left

Reason = Literal["match", "target", "callee", "caller"]
SymbolKey = tuple[str, str]  # (path, qualname)


def count_tokens(text: str) -> int:
    """The one counting rule: ceil(characters / 4)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A span that may go into the context. Lines are 1-based and inclusive."""

    path: str
    start_line: int
    end_line: int
    reason: Reason
    score: float = 0.0
    symbol: str = ""  # qualname, "" for a plain line range
    via: str = ""  # for callee/caller: the seed symbol that led here


@dataclass(frozen=True, slots=True)
class PackedSpan:
    path: str
    start_line: int
    end_line: int
    reason: Reason
    score: float
    symbol: str
    via: str
    text: str
    tokens: int
    truncated: bool = False


@dataclass(frozen=True, slots=True)
class Packed:
    spans: list[PackedSpan]
    budget_tokens: int
    used_tokens: int
    skipped: int  # candidates that did not fit
    counting_rule: str = "tokens = ceil(len(text) / 4) per span; sum <= budget_tokens"


# ---------------------------------------------------------------- targets


@dataclass(frozen=True, slots=True)
class Target:
    """What the agent named: a file, a line range of a file, or a symbol name."""

    kind: Literal["file", "range", "symbol"]
    value: str  # path or symbol name
    start_line: int = 0
    end_line: int = 0


_RANGE = re.compile(r"^(?P<path>.+?):(?P<start>\d+)(?:-(?P<end>\d+))?$")
_IDENT = re.compile(r"^[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$][\w$]*)*$")


def parse_target(text: str, is_path: Callable[[str], bool]) -> Target:
    """Classify one target string. `is_path` says whether a string names an indexed file.

    "src/app.py:10-40" and "src/app.py:12" are ranges; an indexed path is a file; an identifier
    (dotted or not: "Flask.route", "flask.app.Flask") is a symbol; anything else is refused.
    """
    raw = text.strip()
    if not raw:
        raise UsageError("empty target")
    match = _RANGE.match(raw)
    if match:
        start = int(match["start"])
        end = int(match["end"] or start)
        if start < 1 or end < start:
            raise UsageError(f"{raw!r}: line range must be START-END with 1 <= START <= END")
        return Target("range", match["path"], start, end)
    if is_path(raw):
        return Target("file", raw)
    if _IDENT.match(raw):
        return Target("symbol", raw)
    if "/" in raw or "." in raw:
        return Target("file", raw)  # a path that is not indexed: the caller reports it as not found
    raise UsageError(f"{raw!r}: not a path, path:START-END or symbol name")


# ---------------------------------------------------------------- expansion


def expand(seeds: Sequence[Candidate], calls: Mapping[SymbolKey, Sequence[SymbolKey]],
           callers: Mapping[SymbolKey, Sequence[SymbolKey]],
           locate: Callable[[SymbolKey], tuple[int, int] | None],
           rank: Mapping[SymbolKey, float] | None = None) -> list[Candidate]:
    """Seeds, then what they call, then their key callers: the priority order `pack` consumes.

    `locate` gives a symbol's (start_line, end_line) or None when it is unknown. `rank` (e.g. the graph's
    symbol_rank) orders callers; the most important callers explain a function best.
    """
    rank = rank or {}
    ordered = sorted(seeds, key=lambda c: -c.score) if seeds and seeds[0].reason == "match" else list(seeds)
    callees: list[Candidate] = []
    key_callers: list[Candidate] = []
    for seed in ordered:
        if not seed.symbol:
            continue
        key = (seed.path, seed.symbol)
        for target in list(calls.get(key, ()))[:MAX_CALLEES]:
            lines = locate(target)
            if lines:
                callees.append(Candidate(target[0], lines[0], lines[1], "callee", seed.score,
                                         target[1], via=seed.symbol))
        callers_ranked = sorted(callers.get(key, ()), key=lambda k: -rank.get(k, 0.0))
        for source in callers_ranked[:MAX_CALLERS]:
            lines = locate(source)
            if lines:
                key_callers.append(Candidate(source[0], lines[0], lines[1], "caller", seed.score,
                                             source[1], via=seed.symbol))
    return [*ordered, *callees, *key_callers]


# ---------------------------------------------------------------- packing


def _uncovered(spans: Iterable[PackedSpan], cand: Candidate) -> Candidate | None:
    """The candidate minus lines already packed at its edges; None when nothing new is left.

    A packed span strictly inside the candidate leaves it whole (cutting it in two would lose its head).
    """
    start, end = cand.start_line, cand.end_line
    same_file = [s for s in spans if s.path == cand.path]
    changed = True
    while changed:  # trimming at one edge can expose an overlap with a span seen earlier
        changed = False
        for s in same_file:
            if s.end_line < start or s.start_line > end:
                continue
            if s.start_line <= start and end <= s.end_line:
                return None
            if s.start_line <= start:
                start, changed = s.end_line + 1, True
            elif end <= s.end_line:
                end, changed = s.start_line - 1, True
    if start > end:  # cannot happen (each trim keeps one new line), kept as a guard
        return None
    return cand if (start, end) == (cand.start_line, cand.end_line) else replace(cand, start_line=start,
                                                                                  end_line=end)


def _truncate(text: str, start_line: int, budget: int) -> tuple[str, int]:
    """Cut `text` to at most `budget` tokens: whole lines first, characters if one line is too long.

    Returns (text, last line number kept).
    """
    limit = budget * CHARS_PER_TOKEN
    lines = text.split("\n")
    kept: list[str] = []
    size = 0
    for line in lines:
        extra = len(line) + (1 if kept else 0)
        if size + extra > limit:
            break
        kept.append(line)
        size += extra
    if not kept:
        return lines[0][:limit], start_line
    return "\n".join(kept), start_line + len(kept) - 1


def pack(candidates: Sequence[Candidate], read: Callable[[str, int, int], str | None],
         budget_tokens: int) -> Packed:
    """Greedily fill `budget_tokens` with candidates in the given priority order.

    `read(path, start, end)` returns the text of those lines (None if unreadable: the candidate is skipped).
    Duplicates and spans already contained in a packed span are dropped; a span overlapping a packed one
    at an edge is trimmed to its new lines, so no line is paid for twice.
    """
    if budget_tokens < 1:
        raise UsageError("budget_tokens must be at least 1")
    budget_tokens = min(budget_tokens, MAX_BUDGET_TOKENS)
    packed: list[PackedSpan] = []
    used = 0
    skipped = 0
    for original in candidates:
        cand = _uncovered(packed, original)
        if cand is None:
            continue
        text = read(cand.path, cand.start_line, cand.end_line)
        if text is None:
            continue
        cost = count_tokens(text)
        span = PackedSpan(cand.path, cand.start_line, cand.end_line, cand.reason, cand.score, cand.symbol,
                          cand.via, text, cost)
        if used + cost <= budget_tokens:
            packed.append(span)
            used += cost
        elif not packed or (cand.reason == "target" and budget_tokens - used >= MIN_TRUNCATED_TOKENS):
            # The top (first readable) match alone overflows: keep its head rather than return nothing.
            # A target the agent named explicitly is likewise cut to what is left rather than dropped.
            cut, last = _truncate(text, cand.start_line, budget_tokens - used)
            span = replace(span, text=cut, end_line=last, tokens=count_tokens(cut), truncated=True)
            packed.append(span)
            used += span.tokens
        else:
            skipped += 1
    return Packed(spans=packed, budget_tokens=budget_tokens, used_tokens=used, skipped=skipped)
