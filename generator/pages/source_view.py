"""A symbol's source as the collapsible "Source" block of its section: highlighted, with line numbers.

A file is highlighted once (Pygments emits each line as balanced HTML, so a line range is a slice of the
list); a class shows its own lines up to its first member that has a section of its own, so a page carries
each line of code at most once. Every token is escaped by Pygments: code from the repository stays text.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any

MAX_LINES = 120  # per block; the rest is counted and, with source links, one click away
# Source HTML per page. A page carries every public symbol's source; on huge or generated files (minified
# JavaScript, 5,000-line modules) that alone made pages of over a megabyte on the 12k-file bench tree. Past
# this, a section says its source was left out instead (the forge link, when known, still shows it).
PAGE_SOURCE_BUDGET = 300_000
# Languages whose Pygments lexer is in its initial state at the first line of any statement the parser bounds
# (no enclosing markup, no heredoc or template open across a definition): a symbol's lines lexed alone are
# highlighted exactly as in the whole file (tests/unit/test_source_view.py checks it on real code).
SPAN_LEXED = frozenset({"python"})


@cache
def lexer(language: str) -> Any:
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return get_lexer_by_name(language, stripnl=False, ensurenl=False, stripall=False)
    except ClassNotFound:
        return None


# Names, whitespace, punctuation and operators are left in the code's own colour: they are most of the tokens,
# and every tag costs Markdown's and the search indexer's HTML parsers time on every build (a span per name
# made the flask site's mkdocs run much slower). Keywords, strings, comments, definitions keep their colour.
PLAIN_CLASSES = frozenset({"n", "w", "p", "o"})


@cache
def formatter() -> Any:
    from pygments.formatters import HtmlFormatter

    class PlainNamesFormatter(HtmlFormatter):
        """HtmlFormatter that emits no span for the PLAIN_CLASSES: their text is written as Pygments writes
        a classless token (escaped, adjacent ones joined). Stripping those spans from its output afterwards
        was a Python call per name, a tenth of a file page's CPU."""

        def _get_css_classes(self, ttype: Any) -> str:
            classes: str = super()._get_css_classes(ttype)
            return "" if classes in PLAIN_CLASSES else classes

    # one formatter for every block (signatures and source): pymdownx builds one (and its stylesheet) per
    # block, which was a quarter of mkdocs' time on signature-heavy pages
    return PlainNamesFormatter(nowrap=True)


def highlighted(code: str, language: str) -> str:
    """`code` as highlighted HTML (every token escaped by Pygments), names, whitespace, punctuation and
    operators left plain; escaped text when no lexer knows the language."""
    found = lexer(language) if language else None
    if found is None:
        return html.escape(code, quote=False)
    import pygments

    return str(pygments.highlight(code, found, formatter()))


def highlighted_lines(text: str, language: str, spans: Iterable[tuple[int, int]] | None = None) -> list[str]:
    """The file's lines as HTML, one entry per source line (1-based line n is entry n-1).

    `spans`: the only line ranges (1-based, inclusive) a page shows, each from a statement's first line to a
    statement's last (a symbol's own lines, as the parser bounds them). For a language whose lexer starts each
    statement in its initial state (SPAN_LEXED), only those lines are lexed and the rest are escaped text:
    most of a file page's CPU was Pygments lexing private code and module bodies no page shows."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if not language or lexer(language) is None:
        return [html.escape(line, quote=False) for line in lines]
    if spans is None or language not in SPAN_LEXED:
        return _lexed(lines, language)
    out = [html.escape(line, quote=False) for line in lines]
    for start, end in merged_spans(spans, len(lines)):
        out[start - 1:end] = _lexed(lines[start - 1:end], language)
    return out


def _lexed(lines: list[str], language: str) -> list[str]:
    out = highlighted("\n".join(lines), language).split("\n")
    if len(out) < len(lines):  # a lexer that dropped trailing lines: pad rather than shift numbers
        out += [""] * (len(lines) - len(out))
    return out[: len(lines)]


def merged_spans(spans: Iterable[tuple[int, int]], count: int) -> list[tuple[int, int]]:
    """`spans` clipped to lines 1..count, sorted, nested and overlapping ones made one (each line is lexed
    once, and a span inside another is lexed with its context)."""
    out: list[tuple[int, int]] = []
    for start, end in sorted((max(1, a), min(b, count)) for a, b in spans):
        if end < start:
            continue
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def source_left_out(start: int, end: int, *, more_url: str = "") -> str:
    """Raw HTML in place of a source block that did not fit the page's PAGE_SOURCE_BUDGET."""
    where = f"lines {start}-{end}" if end != start else f"line {start}"
    text = (f'<a href="{html.escape(more_url)}">{where} on the forge</a>' if more_url else where)
    return (f'<p class="sb-more" data-search-exclude>Source ({text}) left out: this page reached its size '
            f"limit ({PAGE_SOURCE_BUDGET // 1000} KB of source).</p>")


def source_block(lines: Sequence[str], start: int, end: int, language: str, *, more_url: str = "",
                 limit: int = MAX_LINES, opened: bool = False) -> str:
    """Raw HTML: a collapsed (or `opened`) Material "note" details block with lines start..end (1-based,
    inclusive), the line numbers in a gutter beside the code, so copying the code leaves them out."""
    start = max(1, start)
    end = min(end, len(lines))
    if end < start:
        return ""
    shown_end = min(end, start + limit - 1)
    numbers = "\n".join(str(n) for n in range(start, shown_end + 1))
    body = "\n".join(lines[start - 1:shown_end])
    lang = re.sub(r"[^a-z0-9+-]", "", language.lower()) or "text"
    tail = ""
    if shown_end < end:
        rest = f"{end - shown_end} more lines"
        tail = (f'<p class="sb-more"><a href="{html.escape(more_url)}">{rest} on the forge</a></p>'
                if more_url else f'<p class="sb-more">… {rest} (lines {shown_end + 1}-{end})</p>')
    summary = f"Source (lines {start}-{end})" if end != start else f"Source (line {start})"
    # seven elements however long the code: every tag costs Markdown's and the search indexer's HTML parsers
    return (f'<details class="note sb-source"{" open" if opened else ""} data-search-exclude>'
            f'<summary>{summary}</summary>'
            f'<div class="language-{lang} highlight sb-code">'
            f'<pre class="sb-lines"><code>{numbers}</code></pre>'
            f"<pre><code>{body}</code></pre></div>{tail}</details>")
