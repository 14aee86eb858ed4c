"""Chunks: the spans of a file that search indexes and returns.

Code is cut at AST boundaries that parse already found (FileFacts.symbols): one chunk per function, method
or class body; a class too big for one chunk becomes its header plus its members; small neighbours are
merged; anything still too long is split at blank lines or statement starts. Code between definitions
(imports, constants, module docstrings) becomes chunks of its own. Documentation is cut at its headings.
Everything else is cut into line windows. Pure: FileFacts and decoded text in, chunks out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from generator.analyze.facts import FileFacts, Symbol
from generator.analyze.languages import DOC_LANGUAGES

MAX_LINES = 80  # a chunk longer than this is split
MAX_CHARS = 6000
MIN_LINES = 12  # neighbours shorter than this are merged while the result stays under MAX_LINES
WINDOW_LINES = 60  # files without structure

_BLOCK_KINDS = frozenset({"function", "method", "class", "interface", "struct", "enum", "trait", "impl",
                          "namespace", "module", "macro", "type"})
_CONTAINER_KINDS = frozenset({"class", "interface", "struct", "enum", "trait", "impl", "namespace", "module"})
_MD_HEADING = re.compile(r"^(#{1,6})\s+\S")
_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+<>:._])\1{2,}\s*$")


@dataclass(frozen=True, slots=True)
class Chunk:
    path: str
    start_line: int  # 1-based, inclusive
    end_line: int
    symbol: str  # qualname of the (first) enclosing definition, "" for module-level code
    language: str
    kind: str  # "code" | "doc" | "test" | "config": the file's kind
    text: str
    symbols: tuple[str, ...] = ()  # every definition the chunk covers (merged chunks cover several)

    @property
    def id(self) -> str:
        return f"{self.path}#{self.start_line}-{self.end_line}"


@dataclass(slots=True)
class _Span:
    start: int  # 1-based inclusive
    end: int
    symbols: list[str]


def chunk_file(facts: FileFacts, text: str) -> list[Chunk]:
    """All chunks of one file, in line order, covering every non-blank line exactly once."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not any(line.strip() for line in lines):
        return []
    language = facts.file.language or ""
    blocks = [s for s in facts.symbols if s.kind in _BLOCK_KINDS and s.end_line >= s.start_line]
    if language in DOC_LANGUAGES:
        spans = _doc_spans(facts, lines)
    elif blocks:
        spans = _code_spans(blocks, len(lines), lines)
    else:
        spans = _split_long(_Span(1, len(lines), []), lines, WINDOW_LINES)
    out: list[Chunk] = []
    for span in spans:
        start, end = _trim(span.start, span.end, lines)
        if start > end:
            continue
        body = "\n".join(lines[start - 1:end])
        out.append(Chunk(path=facts.path, start_line=start, end_line=end,
                         symbol=span.symbols[0] if span.symbols else "", language=language,
                         kind=facts.file.kind, text=body[:MAX_CHARS * 2], symbols=tuple(span.symbols)))
    return out


def _trim(start: int, end: int, lines: list[str]) -> tuple[int, int]:
    while start <= end and not lines[start - 1].strip():
        start += 1
    while end >= start and not lines[end - 1].strip():
        end -= 1
    return start, end


def _code_spans(blocks: list[Symbol], n_lines: int, lines: list[str]) -> list[_Span]:
    by_parent: dict[str | None, list[Symbol]] = {}
    qualnames = {s.qualname for s in blocks}
    for sym in sorted(blocks, key=lambda s: (s.start_line, -s.end_line)):
        parent = sym.parent if sym.parent in qualnames else None
        by_parent.setdefault(parent, []).append(sym)
    spans = _cover(1, n_lines, by_parent.get(None, []), by_parent, lines=lines, owner="")
    return _merge_small(spans)


def _cover(start: int, end: int, members: list[Symbol], by_parent: dict[str | None, list[Symbol]], *,
           lines: list[str], owner: str) -> list[_Span]:
    """Spans covering lines start..end: each member's own spans, and the gaps between members."""
    spans: list[_Span] = []
    cursor = start
    for sym in members:
        s_start, s_end = max(sym.start_line, cursor), min(sym.end_line, end)
        if s_start > s_end:
            continue  # overlapping or out-of-range definition: the earlier one already covers it
        s_start = _include_decorators(s_start, cursor, lines)
        if s_start > cursor:
            spans.extend(_split_long(_Span(cursor, s_start - 1, [owner] if owner else []), lines))
        spans.extend(_symbol_spans(sym, s_start, s_end, by_parent, lines))
        cursor = s_end + 1
    if cursor <= end:
        spans.extend(_split_long(_Span(cursor, end, [owner] if owner else []), lines))
    return spans


def _include_decorators(start: int, floor: int, lines: list[str]) -> int:
    """Move a definition's start up over decorators and comments directly above it."""
    line = start - 1
    while line >= floor:
        text = lines[line - 1].strip()
        if text.startswith(("@", "#", "//", "/*", "*", "///")) and text:
            line -= 1
            continue
        break
    return line + 1


def _symbol_spans(sym: Symbol, start: int, end: int, by_parent: dict[str | None, list[Symbol]],
                  lines: list[str]) -> list[_Span]:
    length = end - start + 1
    children = by_parent.get(sym.qualname, [])
    if length <= MAX_LINES and _chars(start, end, lines) <= MAX_CHARS:
        return [_Span(start, end, [sym.qualname])]
    if children and sym.kind in _CONTAINER_KINDS:
        return _merge_small(_cover(start, end, children, by_parent, lines=lines, owner=sym.qualname))
    return _split_long(_Span(start, end, [sym.qualname]), lines)


def _chars(start: int, end: int, lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines[start - 1:end])


def _split_long(span: _Span, lines: list[str], limit: int = MAX_LINES) -> list[_Span]:
    """Cut a span longer than `limit` lines at the best boundary near the limit, repeatedly."""
    out: list[_Span] = []
    start = span.start
    while span.end - start + 1 > limit or _chars(start, span.end, lines) > MAX_CHARS:
        cut = _best_cut(start, min(span.end, start + limit - 1), lines)
        out.append(_Span(start, cut, list(span.symbols)))
        start = cut + 1
    if start <= span.end:
        out.append(_Span(start, span.end, list(span.symbols)))
    return out


def _best_cut(start: int, hard_end: int, lines: list[str]) -> int:
    """The last line of the chunk starting at `start`: a blank line or the line before a shallow
    statement in the second half of the window, else the hard end."""
    lo = start + (hard_end - start) // 2
    best, best_indent = hard_end, 10**6
    for line_no in range(hard_end, lo, -1):
        nxt = lines[line_no] if line_no < len(lines) else ""
        if not nxt.strip():
            continue
        indent = len(nxt) - len(nxt.lstrip())
        prev_blank = not lines[line_no - 1].strip()
        score = indent - (1 if prev_blank else 0)
        if score < best_indent:
            best, best_indent = line_no, score
    while _chars(start, best, lines) > MAX_CHARS and best > start:
        best = start + (best - start) // 2  # strictly smaller until it reaches start: always terminates
    return best


def _merge_small(spans: list[_Span]) -> list[_Span]:
    out: list[_Span] = []
    for span in spans:
        if out:
            prev = out[-1]
            small = (prev.end - prev.start + 1) < MIN_LINES or (span.end - span.start + 1) < MIN_LINES
            if small and span.end - prev.start + 1 <= MAX_LINES and span.start == prev.end + 1:
                prev.end = span.end
                prev.symbols.extend(s for s in span.symbols if s not in prev.symbols)
                continue
        out.append(_Span(span.start, span.end, list(span.symbols)))
    return out


def _doc_spans(facts: FileFacts, lines: list[str]) -> list[_Span]:
    heads = sorted({(h.line, h.text) for h in facts.headings if 1 <= h.line <= len(lines)})
    if not heads:
        heads = _find_headings(lines)
    starts = [(line, text) for line, text in heads]
    if not starts or starts[0][0] != 1:
        starts.insert(0, (1, facts.title or ""))
    spans: list[_Span] = []
    for i, (line, title) in enumerate(starts):
        end = starts[i + 1][0] - 1 if i + 1 < len(starts) else len(lines)
        if end >= line:
            spans.extend(_split_long(_Span(line, end, [title] if title else []), lines, WINDOW_LINES))
    return _merge_small(spans)


def _find_headings(lines: list[str]) -> list[tuple[int, str]]:
    """Markdown `#` headings and RST underlined titles, for when parse gave none."""
    found: list[tuple[int, str]] = []
    in_fence = False
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if _MD_HEADING.match(line):
            found.append((i + 1, line.lstrip("#").strip()))
        elif (i > 0 and _RST_UNDERLINE.match(line) and lines[i - 1].strip()
              and not _RST_UNDERLINE.match(lines[i - 1]) and len(line.strip()) >= len(lines[i - 1].strip())):
            line_no = i  # the title line (1-based i) ; an overline above it belongs to the same heading
            if i >= 2 and _RST_UNDERLINE.match(lines[i - 2]):
                line_no = i - 1
            found.append((line_no, lines[i - 1].strip()))
    return found
