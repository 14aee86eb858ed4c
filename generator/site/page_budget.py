"""What one page of the site may weigh: its table of contents is bounded, its content cut (with a note saying
so) when it alone would pass the page budget, and the theme's indentation around the content squeezed out.

Measured on the 12k-file bench tree (issue 11): a file page with a few hundred symbols printed its table of
contents twice (Material's sidebar and the copy it nests in the navigation for small screens; the theme is
now set to print it once: `toc.integrate`), and some generated pages were over 1 MB of content (hundreds of
symbols, each with its highlighted source). A reader of such a page navigates it by its symbol index, not by a
sidebar of 500 names; and a page nobody can load in a browser helps no one.

Pure functions on values: mkdocs_hooks.py calls them on each page's table of contents, content and output.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from html import unescape
from html.parser import HTMLParser

from mkdocs.structure.toc import AnchorLink

TOC_CAP = 60  # entries of a page's table of contents (all levels together)
CONTENT_BUDGET = 900_000  # bytes of one page's content: with nav (<= ~40 KB), TOC and chrome under 1 MB
TRUNCATED_CLASS = "sb-truncated"


# -- table of contents ---------------------------------------------------------------------------------------


def _count(items: Sequence[AnchorLink]) -> int:
    return sum(1 + _count(i.children) for i in items)


def _depth_limited(items: Sequence[AnchorLink], depth: int) -> list[AnchorLink]:
    out = []
    for item in items:
        copy = AnchorLink(item.title, item.id, item.level)
        copy.children = _depth_limited(item.children, depth - 1) if depth > 1 else []
        out.append(copy)
    return out


def _levels(items: Sequence[AnchorLink]) -> list[int]:
    """Entries per depth: [top level, the level below, ...]."""
    counts: list[int] = []
    row = list(items)
    while row:
        counts.append(len(row))
        row = [c for i in row for c in i.children]
    return counts


def _more(left: int, first_left: AnchorLink) -> AnchorLink:
    return AnchorLink(f"… {left} more section{'s' if left != 1 else ''}", first_left.id, first_left.level)


def _filled(items: Sequence[AnchorLink], depth: int, room: list[int]) -> list[AnchorLink]:
    """Copies of `items` down to `depth` levels (all of them fit), and below that, in document order,
    children while `room[0]` lasts; a list that does not fit ends with a link to its first entry left out."""
    out = []
    for item in items:
        copy = AnchorLink(item.title, item.id, item.level)
        if depth > 1:
            copy.children = _filled(item.children, depth - 1, room)
        elif item.children and room[0] > 0:
            if len(item.children) <= room[0]:
                copy.children = _depth_limited(item.children, 1)
            else:
                shown = max(room[0] - 1, 0)
                copy.children = [*_depth_limited(item.children[:shown], 1),
                                 _more(len(item.children) - shown, item.children[shown])]
            room[0] -= len(copy.children)
        out.append(copy)
    return out


def cap_toc(items: Sequence[AnchorLink], cap: int = TOC_CAP) -> list[AnchorLink]:
    """`items` with at most `cap` entries: every level that fits whole, then the next level's entries in
    document order while room is left, a cut list ending with "N more sections" (a link to the first one
    left out). When the top level alone is too long, its first `cap - 1` entries and that link. A lone
    level-1 heading (the page title, which Material leaves out of the TOC) keeps its place on top."""
    items = list(items)
    if _count(items) <= cap:
        return items
    if len(items) == 1 and items[0].level == 1:
        top = AnchorLink(items[0].title, items[0].id, items[0].level)
        top.children = cap_toc(items[0].children, cap)
        return [top]
    total, depth = 0, 0
    for count in _levels(items):
        if total + count > cap:
            break
        total, depth = total + count, depth + 1
    if depth == 0:
        return [*_depth_limited(items[:cap - 1], 1), _more(len(items) - cap + 1, items[cap - 1])]
    return _filled(items, depth, [cap - total])


def toc_ids(items: Sequence[AnchorLink]) -> set[str]:
    return {i.id for i in items} | {x for i in items for x in toc_ids(i.children)}


def filter_toc(items: Sequence[AnchorLink], present: set[str]) -> list[AnchorLink]:
    """The entries whose anchor is in `present` (a cut page's TOC must not lead past its end)."""
    out = []
    for item in items:
        if item.id in present:
            copy = AnchorLink(item.title, item.id, item.level)
            copy.children = filter_toc(item.children, present)
            out.append(copy)
    return out


# -- content -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cut:
    html: str
    dropped_sections: int  # headings left out
    full_bytes: int


_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
                   "track", "wbr"})
_HEADING = re.compile(r"h[1-6]")


class _TopLevel(HTMLParser):
    """Offsets (in characters) where each top-level element of an HTML fragment starts, and whether it is a
    heading."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.depth = 0
        self.starts: list[tuple[int, bool]] = []
        self._line_offsets = [0]

    def feed_all(self, html: str) -> None:
        for line in html.splitlines(keepends=True):
            self._line_offsets.append(self._line_offsets[-1] + len(line))
        self.feed(html)
        self.close()

    def _offset(self) -> int:
        line, column = self.getpos()
        return self._line_offsets[line - 1] + column

    def handle_starttag(self, tag: str, attrs: object) -> None:
        if self.depth == 0:
            self.starts.append((self._offset(), bool(_HEADING.fullmatch(tag))))
        if tag not in _VOID:
            self.depth += 1

    def handle_startendtag(self, tag: str, attrs: object) -> None:
        if self.depth == 0:
            self.starts.append((self._offset(), False))

    def handle_endtag(self, tag: str) -> None:
        if tag not in _VOID:
            self.depth = max(0, self.depth - 1)


def cut_content(html: str, budget: int = CONTENT_BUDGET) -> Cut | None:
    """None when `html` (a page's rendered, sanitized content) fits `budget` bytes; else its top-level blocks
    up to the last heading that starts within the budget (else the last block that does), then a note that
    says the page was cut, how big it was and how many sections are left out."""
    size = len(html.encode("utf-8"))
    if size <= budget:
        return None
    parser = _TopLevel()
    parser.feed_all(html)
    # the character offset where `budget` bytes end (content is mostly ASCII; a multi-byte text only
    # moves the cut earlier, never past the budget)
    limit = len(html.encode("utf-8")[:budget].decode("utf-8", errors="ignore"))
    fitting = [(at, heading) for at, heading in parser.starts if 0 < at <= limit]
    headings = [at for at, heading in fitting if heading]
    at = headings[-1] if headings else (fitting[-1][0] if fitting else 0)
    dropped = sum(1 for start, heading in parser.starts if start >= at and heading)
    left = f"{dropped} more section{'s' if dropped != 1 else ''} {'are' if dropped != 1 else 'is'} left out"
    note = (f'<div class="admonition warning {TRUNCATED_CLASS}" id="{CUT_ID}"><p class="admonition-title">'
            f"This page is cut short</p><p>Its full text is {size / 1e6:.1f} MB, more than a page of this "
            f"site may weigh ({budget / 1e6:.1f} MB), so it ends here: {left}. Read the rest in the source "
            f"file.</p></div>")
    kept = html[:at].rstrip()
    return Cut(_to_the_note(kept, anchor_ids(kept)) + "\n" + note, dropped, size)


CUT_ID = "sb-cut"
_PAGE_LINK = re.compile(r'\bhref="#([^"]*)"')


def _to_the_note(html: str, present: set[str]) -> str:
    """`html` with each link to a section of its own page that the cut left out (the symbol index, the
    Calls lists above the cut) pointed at the note saying the page was cut, not at nothing."""
    return _PAGE_LINK.sub(lambda m: m.group(0) if unescape(m.group(1)) in present else f'href="#{CUT_ID}"',
                          html)


_ID = re.compile(r'\bid="([^"]*)"')


def anchor_ids(html: str) -> set[str]:
    """The ids present in a fragment (what a cut page still holds of its anchors)."""
    return {unescape(m.group(1)) for m in _ID.finditer(html)}


# -- theme whitespace ----------------------------------------------------------------------------------------

_AFTER_BREAK = re.compile(r"\n\s*")  # starts with its literal: the regex engine skips ahead to each one


def squeeze_chrome(page_html: str, content: str) -> str:
    """`page_html` with every run of whitespace that holds a line break, outside the page's content, made one
    line break: Material's templates indent each line by up to ~40 spaces and leave blank lines where a
    block printed nothing. A run of whitespace renders as one space wherever it is not preformatted, and the
    theme's own markup has no <pre> or <textarea>; its one inline JSON (`__config`) holds no line break in a
    string. The content (which can hold <pre>) is left byte for byte."""
    at = page_html.find(content) if content else -1
    if at < 0:
        return _squeezed(page_html) if not content else page_html
    end = at + len(content)
    return _squeezed(page_html[:at]) + content + _squeezed(page_html[end:])


def _squeezed(html: str) -> str:
    """`re.sub(r"[ \\t\\r]*\\n\\s*", "\\n", html)`: the whitespace after each line break folded into it, then
    the spaces, tabs and carriage returns before each break dropped (that pattern may start with a space, so
    the regex engine tries it at every position of the text: twice the CPU)."""
    lines = _AFTER_BREAK.sub("\n", html).split("\n")
    return "\n".join([*(line.rstrip(" \t\r") for line in lines[:-1]), lines[-1]])
