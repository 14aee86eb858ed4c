"""Contexts + drafts -> Markdown pages and the site's mkdocs.yml, through the Jinja2 templates in templates/.

Everything that comes from the repository (names, signatures, docstrings, README, writer prose) is treated as
untrusted text: inline text is HTML-escaped and Markdown-neutralised, docstrings and signatures go into code
blocks, prose keeps its Markdown but loses raw HTML and any relative link MkDocs could not resolve. A
`<script>` in a docstring is therefore shown, never run, and `mkdocs build --strict` never sees a dead link.
"""

from __future__ import annotations

import hashlib
import html
import json
import posixpath
import re
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jinja2

from generator.analyze.facts import Symbol
from generator.analyze.languages import spec_for
from generator.markup.docmarkup import code_span
from generator.markup.safe_markdown import (
    CODE_SPAN,
    LinkResolver,
    escape_markdown,
    inline_text,
    sanitize_markdown,
)
from generator.pages.anchors import (
    SymbolIndex,
    anchor_ids,
    has_section,
    overloaded,
    page_href,
    shown_heading,
    shown_qualname,
)
from generator.pages.call_links import TYPE_KINDS, FileRefs
from generator.pages.diagrams import (
    MAX_EDGES,
    MAX_NODES,
    NATURAL_SIZE,
    Graph,
    click_url,
    left_out_words,
    mermaid_label,
    most_connected,
    page_url,
    site_href,
)
from generator.pages.orientation import (
    MAX_API_SHOWN,
    ApiName,
    Orientation,
    readme_intro,
    readme_rest,
)
from generator.pages.remote import SourceLinks
from generator.pages.shapes import members_by_type, shape_table
from generator.pages.source_view import (
    PAGE_SOURCE_BUDGET,
    highlighted,
    highlighted_lines,
    source_block,
    source_left_out,
)
from generator.pages.type_parts import SplitType
from generator.pages.writer import (
    MD_LINK,
    FileContext,
    FileDraft,
    ModuleContext,
    ModuleDraft,
    OverviewContext,
    OverviewDraft,
    TopicDraft,
    first_paragraph,
    plain_text,
)
from sourcebook.data_files import data_dir

RENDER_LOGIC_VERSION = "2"  # the page layout's version; the templates' and this module's bytes count too

# -- where the templates and the theme layer live -----------------------------------------------------------


def heading_id(title: str) -> str:
    """An explicit `{ #id }` for a page title whose default id would start with `__` (`__init__.py`,
    `__main__.py`): the sanitizer drops such ids (Material's own parts are `__search`, `__drawer`...), so the
    title's permalink and Material's "skip to content" link would land nowhere. Other titles keep theirs."""
    if not title.lstrip().startswith("_"):
        return ""
    return " { #page-" + (re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-") or "top") + " }"


@cache
def _environment() -> jinja2.Environment:
    """The templates' environment, made once per process: each new one compiles every template again (the
    files stage spent most of its time in Jinja's compiler when this was made per page)."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(data_dir("templates"))),
        autoescape=False,  # noqa: S701 -- the output is Markdown; every untrusted value goes through a filter
        undefined=jinja2.StrictUndefined, keep_trailing_newline=True, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(heading_id=heading_id, shown=shown_qualname, text=inline_text, cell=table_cell,
                       code=code_span, block=code_block, rich=rich_cell, line=summary_line,
                       doc=doc_block, sig=signature_block, first=first_paragraph,
                       tojson=lambda v: json.dumps(v, ensure_ascii=False))
    env.globals.update(prose=prose, prose_line=prose_line, shown=shown_qualname)
    return env


# the modules that write pages (each page kind's stage, and the state they share)
PAGE_STAGES = ("generator.pages.stages", "generator.pages.page_sink", "generator.pages.file_stage",
               "generator.pages.module_stage", "generator.pages.overview_stage",
               "generator.pages.topic_stage", "generator.pages.api_stage")


@cache
def render_version() -> str:
    """Part of every page key: changes when a template or any code that writes pages changes (the pages
    stage's import closure: this module, docstring and reST rendering, anchors, cross-references, diagrams,
    the sanitizing Markdown helpers...)."""
    from sourcebook.code_version import stage_version

    version = stage_version(*PAGE_STAGES, "generator.pages.render_markdown", data=(data_dir("templates"),))
    return hashlib.sha256(f"{RENDER_LOGIC_VERSION}\0{version}".encode()).hexdigest()[:16]


# -- escaping ------------------------------------------------------------------------------------------------

def table_cell(value: object, limit: int = 300) -> str:
    text = " ".join(str(value).split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return inline_text(text)


def rich_cell(value: object, limit: int = 300) -> str:
    """Like table_cell, but code spans (the extractive writer makes them) become escaped <code> elements."""
    text = " ".join(str(value).split())
    out, pos = [], 0
    room = limit - 1 if len(text) > limit else len(text)
    # the cut is made on the pieces, not the text: a span cut in two would show its backtick raw
    for m in CODE_SPAN.finditer(text):
        if m.start() >= room:
            break
        out.append(escape_markdown(text[pos:m.start()].rstrip() if m.end() > room else text[pos:m.start()]))
        pos = m.end()
        if m.end() > room:
            break  # the span does not fit: the cell ends before it
        inner = m.group(0)[len(m.group(1)):-len(m.group(1))].strip()
        out.append(f"<code>{escape_markdown(inner)}</code>")
    else:
        m = None
    if m is None or m.start() >= room:
        out.append(escape_markdown(text[pos:room].rstrip() if room < len(text) else text[pos:room]))
    if room < len(text):
        out.append("…")
    return "".join(out)


# a list item's mark at a line's start: a summary's list is no sentence (joined, its marks would show)
_LIST_MARK = re.compile(r"^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?=\S)")
# a sentence ends at `.`/`!`/`?` before a space and a word that does not go on in lower case ("etc. and")
_SENTENCE_END = re.compile(r"[.!?](?=\s+[^\sa-z]|\s*$)")
_NOT_AN_END = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|cf|approx|incl|no|Inc|Ltd|Mr|Ms|Dr|St)|\b[A-Za-z])$")
_EMPHASIS = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1|(?<![\w*])\*(?=[^\s*])([^*]+?)(?<=[^\s*])\*(?![\w*])")


def _sentence_piece(text: str) -> tuple[str, bool]:
    """Prose outside code spans as its words (links and images as their text, tags and emphasis marks
    gone), cut after its first sentence end: (text, whether it ended there)."""
    out: list[str] = []
    pos = 0
    for link in [*MD_LINK.finditer(text), None]:
        words = _EMPHASIS.sub(lambda m: m.group(2) or m.group(3),
                              plain_text(text[pos:link.start() if link else len(text)]))
        for m in _SENTENCE_END.finditer(words):
            if not _NOT_AN_END.search(words, 0, m.start()):
                return "".join(out) + words[: m.end()], True
        out.append(words)
        if link:  # a link's text is never cut: a sentence may end after it
            out.append(plain_text(link.group(0)))
            pos = link.end()
    return "".join(out), False


def summary_line(value: object, limit: int = 200) -> str:
    """A page's summary as one line of a folder page's table: its first paragraph's first sentence, as
    plain text with code spans (rich_cell, which cuts at `limit` between spans, never inside one). A
    sentence never ends inside a code span or a link, and a list's marks never show."""
    lines: list[str] = []
    for number, line in enumerate(str(value).strip().splitlines()):
        if not line.strip() or (number and _LIST_MARK.match(line)):
            break  # the first paragraph ends at a blank line or where a list starts
        lines.append(_LIST_MARK.sub("", line) if not number else _LIST_MARK.sub("", line, count=1))
    text = " ".join(" ".join(lines).split())
    out, pos = [], 0
    for m in CODE_SPAN.finditer(text):
        piece, ended = _sentence_piece(text[pos:m.start()])
        out.append(piece)
        if ended:
            return rich_cell("".join(out).rstrip(), limit)
        out.append(m.group(0))
        pos = m.end()
    out.append(_sentence_piece(text[pos:])[0])
    return rich_cell("".join(out).rstrip(), limit)


def code_block(value: object, lang: str = "text") -> str:
    """A fenced code block whose fence is longer than any backtick run inside: the text is shown verbatim."""
    text = str(value).rstrip("\n")
    longest = max((len(m) for m in re.findall(r"`{3,}", text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{lang}\n{text}\n{fence}"


def signature_block(value: object, language: str = "text") -> str:
    """A signature, highlighted here with Pygments, as the HTML Material styles (`div.highlight`), coloured
    like the source blocks (source_view.highlighted: names and punctuation plain, a third of the tags).

    Pygments escapes every token, so the text stays inert; Markdown leaves a raw <div> block alone.
    """
    code = " ".join(str(value).split())
    code = wrap_signature(code, trailing_comma=language == "python", language=language)
    return _signature_html(code, language)


SIGNATURE_WIDTH = 80  # longer signatures are wrapped one parameter per line (what a code column shows uncut)
_OPENERS = {"(": ")", "[": "]", "{": "}", "<": ">"}


def wrap_signature(code: str, width: int = SIGNATURE_WIDTH, *, trailing_comma: bool = True,
                   language: str = "") -> str:
    """A one-line signature longer than `width` with one parameter per line, indented, the way mkdocstrings
    and Black show it (`def f(\n    a: int,\n    b: str = "x",\n) -> R`): a reader sees every parameter
    without scrolling a box cut in the middle. The parameter list is the first top-level one (a Go method's
    receiver is skipped); a Rust `where` clause goes on lines of its own, one bound each, as rustfmt writes
    it; a line still too long (one long annotation, a TypeScript generic list, a class's bases) is broken
    further by `_fit`. Commas inside brackets and strings stay put; a signature whose brackets do not
    balance stays one line."""
    if len(code) <= width:
        return code
    quotes = '"`' if language == "rust" else "\"'`"  # Rust's `'static` is a lifetime, not a string
    head, bounds = _where_clause(code, quotes)
    lines = _wrap_parameters(head, width, trailing_comma, quotes) if len(head) > width else [head]
    if bounds:
        lines += ["where", *(f"    {b}," for b in bounds)]
    return "\n".join(out for line in lines for out in _fit(line, width, trailing_comma, quotes))


def _scan(text: str, quotes: str) -> tuple[list[int], list[tuple[int, int]], list[int]]:
    """Each character's bracket depth (-1 inside a string), the top-level bracket pairs (open, close), and
    the brackets still open at the end. A closer nothing opened (a wrapped line's leading `)`) is text;
    `<` opens a generic only after a name (`List<K>`, not `a < b`), and `->`/`=>` close nothing."""
    depths: list[int] = []
    pairs: list[tuple[int, int]] = []
    stack: list[tuple[str, int]] = []
    quote = ""
    for i, ch in enumerate(text):
        if quote:
            depths.append(-1)
            if ch == quote and text[i - 1] != "\\":
                quote = ""
            continue
        if ch in quotes:
            quote = ch
            depths.append(-1)
        elif ch in "([{" or (ch == "<" and (text[i - 1:i].isalnum() or text[i - 1:i] == "_")):
            depths.append(len(stack))
            stack.append((_OPENERS[ch], i))
        elif stack and ch == stack[-1][0] and not (ch == ">" and text[i - 1:i] in "-="):
            _closer, opened = stack.pop()
            depths.append(len(stack))
            if not stack:
                pairs.append((opened, i))
        else:
            depths.append(len(stack))
    return depths, pairs, [i for _c, i in stack]


def _split_top(text: str, sep: str, quotes: str) -> list[str]:
    """`text` cut at each `sep` outside brackets and strings."""
    depths = _scan(text, quotes)[0]
    parts, piece, i = [], 0, 0
    while (i := text.find(sep, i)) >= 0:
        if depths[i] == 0:
            parts.append(text[piece:i])
            piece = i + len(sep)
        i += len(sep)
    return [*parts, text[piece:]]


def _items(text: str, quotes: str) -> list[str]:
    """The comma-separated items of a bracket's contents (a trailing comma makes no empty item)."""
    items = [p.strip() for p in _split_top(text, ",", quotes)]
    return items[:-1] if items and not items[-1] else items


def _where_clause(code: str, quotes: str) -> tuple[str, list[str]]:
    """A Rust (or C#, Swift) signature and the bounds of its top-level `where` clause, if any."""
    depths = _scan(code, quotes)[0]
    for m in re.finditer(r"\swhere\s", code):
        if depths[m.start()] == 0:
            bounds = code[m.end():].rstrip().removesuffix("{").rstrip()
            return code[:m.start()].rstrip(), _items(bounds, quotes)
    return code, []


def _wrap_parameters(code: str, width: int, trailing_comma: bool, quotes: str) -> list[str]:
    """The signature's lines with its parameter list one parameter per line (one line if it has none)."""
    _depths, pairs, still_open = _scan(code, quotes)
    if still_open and code.endswith("…"):  # cut by the parser's bound: wrap what is there
        code += "".join(_OPENERS[code[i]] for i in reversed(still_open))
        _depths, pairs, still_open = _scan(code, quotes)
    if still_open:
        return [code]
    lists = [(o, c) for o, c in pairs if code[o] == "("]
    if re.match(r"func\s*\(", code) and len(lists) > 1:
        lists = lists[1:]  # a Go method's receiver: its parameters come next
    if not lists:
        return [code]
    o, c = lists[0]
    params = _items(code[o + 1:c], quotes)
    if not params:
        return [code]
    body = [f"    {p}," for p in params[:-1]] + [f"    {params[-1]}{',' if trailing_comma else ''}"]
    return [code[:o + 1], *body, code[c:]]


def _fit(line: str, width: int, trailing_comma: bool, quotes: str, depth: int = 0) -> list[str]:
    """A wrapped signature's line over `width` broken where a reader expects it: before its default
    (`= …`), at the `|` of a union, then inside its outermost bracket with two items or more (else the
    first with one), one item per line; continuation lines indented four more. A line with none of those
    stays as it is."""
    if len(line) <= width or depth > 8:
        return [line]
    indent = line[:len(line) - len(line.lstrip(" "))]
    body = line[len(indent):]
    more = indent + "    "

    def fit(text: str) -> list[str]:
        return _fit(text, width, trailing_comma, quotes, depth + 1)

    header = _template_header(body)
    if header:  # a C++ template's parameter list on a line of its own, as clang-format writes it
        return [*fit(indent + header), *fit(indent + body[len(header):].lstrip())]
    parts = _split_top(body, " = ", quotes)
    if len(parts) == 2 and parts[0].strip() and parts[1].strip():
        return [*fit(indent + parts[0]), *fit(more + "= " + parts[1])]
    parts = _split_top(body, " | ", quotes)
    if len(parts) > 1:
        return [*fit(indent + parts[0]), *(out for p in parts[1:] for out in fit(more + "| " + p))]
    pairs = [(o, c, _items(body[o + 1:c], quotes)) for o, c in _scan(body, quotes)[1]]
    pairs = [p for p in pairs if p[2]]
    chosen = next((p for p in pairs if len(p[2]) >= 2), pairs[0] if pairs else None)
    if chosen is None:
        return [line]
    o, c, items = chosen
    # a trailing comma only after two items or more: `(X,)` and `Tuple[X,]` would mean something else
    last = "," if trailing_comma and len(items) >= 2 else ""
    lines = [f"{more}{p}," for p in items[:-1]] + [f"{more}{items[-1]}{last}"]
    return [*fit(indent + body[:o + 1]), *(out for p in lines for out in fit(p)), *fit(indent + body[c:])]


def _template_header(line: str) -> str:
    """A line's leading C++ `template <…>` (its angle brackets balanced) when more follows it, else "".
    _scan counts a `<` as a bracket only after a name, so `template <` needs its own match; without it the
    rest of the line (`wincolor_sink<ConsoleMutex>::print_range_(`) was broken inside its one-item generic."""
    match = re.match(r"template\s*<", line)
    if match is None:
        return ""
    depth = 0
    for i in range(match.end() - 1, len(line)):
        depth += {"<": 1, ">": -1}.get(line[i], 0)
        if depth == 0:
            return line[:i + 1] if line[i + 1:].strip() else ""
    return ""


def _parameters(code: str, start: int) -> tuple[list[str], int] | None:
    """The top-level comma-separated items of the bracket opened at `start`, and where it closes."""
    parts: list[str] = []
    stack: list[str] = []
    quote = ""
    piece = start + 1
    for i in range(start + 1, len(code)):
        ch = code[i]
        if quote:
            if ch == quote and code[i - 1] != "\\":
                quote = ""
            continue
        if ch in "\"'`":
            quote = ch
        elif ch in "([{" or (ch == "<" and code[i - 1:i].isalnum()):  # `List<Map<K, V>>`: a generic's commas
            stack.append(_OPENERS[ch])
        elif stack and ch == stack[-1]:
            stack.pop()
        elif ch == ")" and not stack:
            last = code[piece:i].strip()
            return ([*parts, last] if last else parts), i
        elif ch == "," and not stack:
            parts.append(code[piece:i].strip())
            piece = i + 1
    return None


@lru_cache(maxsize=8192)
def _signature_html(code: str, language: str) -> str:
    # a quarter of a big tree's signatures repeat (`def __init__(self)`, `def setUp(self)`): made once each
    # a wrapped signature's line breaks as character references: the block stays one line of Markdown,
    # which is what the raw-block guard (site/material/raw_blocks.py) and the search text read
    body = highlighted(code, language).rstrip().replace("\n", "&#10;")
    lang = re.sub(r"[^a-z0-9+-]", "", language.lower()) or "text"
    return (f'<div class="language-{lang} highlight sb-signature"><pre><span></span>'
            f"<code>{body}</code></pre></div>")


def doc_block(value: object) -> str:
    """A docstring shown verbatim: escaped text in a <pre> block we write ourselves.

    Cheaper than a fenced block (no syntax highlighter runs over prose) and just as inert: every `<`, `>`
    and `&` of the text is escaped, and Markdown does not look inside a raw <pre> block.
    """
    text = html.escape(str(value).strip("\n"), quote=False)
    return f'<pre class="sb-docstring"><code>{text}</code></pre>'


def prose(text: str | None) -> str:
    """Writer prose: Markdown kept, HTML and relative links removed (writers may only link via templates)."""
    return sanitize_markdown(text or "").strip()


def prose_line(text: str | None) -> str:
    """Writer prose for one list item: joined into one line *before* sanitizing, so a fence in it is text
    (joined afterwards, a kept `~~~` block would become inline text and its HTML raw HTML)."""
    return sanitize_markdown(" ".join((text or "").split())).replace("\n", " ").strip()


# -- links ---------------------------------------------------------------------------------------------------


def relative_link(from_page: str, to_page: str) -> str:
    """A relative URL from one docs-relative page id to another, percent-encoded where needed."""
    return page_href(from_page, to_page)


def source_location(path: str, start: int, end: int, links: SourceLinks | str | None) -> str:
    """Markdown for where a span lives: a link with source links (or a repo_url), else path and lines."""
    if isinstance(links, str):
        from generator.pages.remote import from_repo_url

        links = from_repo_url(links) if links else None
    if links is not None:
        return f"[{inline_text(path)}:{start}]({links.url(path, start, end)})"
    return f"{code_span(path)}, lines {start}-{end}" if end != start else f"{code_span(path)}, line {start}"


# -- mermaid -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Diagram:
    nodes: list[tuple[str, str, str]]  # (id, label, css class)
    edges: list[tuple[str, str]]
    links: Mapping[str, str] = field(default_factory=dict)  # node id -> site URL
    left_out: str = ""  # in words: what did not fit

    def __str__(self) -> str:
        lines = [NATURAL_SIZE, "graph LR"]
        lines += [f"  {nid}[{mermaid_label(label)}]" for nid, label, _ in self.nodes]
        lines += [f"  {a} --> {b}" for a, b in self.edges]
        classes: dict[str, list[str]] = {}
        for nid, _, css in self.nodes:
            classes.setdefault(css, []).append(nid)
        lines += [f"  class {','.join(ids)} {css}" for css, ids in classes.items() if css]
        lines += ["  classDef ext stroke-dasharray: 4 3", "  classDef sub stroke-width:2px"]
        lines += [f'  click {nid} href "{click_url(url)}"' for nid, url in self.links.items()]
        return "\n".join(lines)


def module_diagram(ctx: ModuleContext, pages: Mapping[str, str] | None = None,
                   modules: Mapping[str, str] | None = None) -> Diagram | None:
    """The module's files and submodules and what they import, at most MAX_EDGES arrows (the strongest
    ends kept, the rest counted); nodes link to their pages when `pages` (files) / `modules` are given."""
    ids: dict[str, str] = {}
    nodes: list[tuple[str, str, str]] = []
    links: dict[str, str] = {}
    subs = {s.path: s.page_id for s in ctx.submodules}

    def node(key: str, label: str, css: str, page: str | None) -> str:
        if key not in ids:
            ids[key] = f"n{len(ids)}"
            nodes.append((ids[key], label, css))
            if page:
                links[ids[key]] = page_url(page, ctx.page_id)
        return ids[key]

    def inside(path: str) -> str:
        if path in subs:
            return node(path, posixpath.basename(path) + "/", "sub", subs[path])
        return node(path, posixpath.basename(path), "", (pages or {}).get(path))

    weights: dict[tuple[str, str], int] = {}
    for a, b in ctx.internal_edges:
        weights[(a, b)] = 1
    for a, mod in ctx.external_edges:
        weights[(a, "ext:" + mod)] = 1
    # at most MAX_NODES boxes, the most connected ones, like every other diagram (diagrams.module_imports)
    _chosen, kept, cut = most_connected(weights, MAX_NODES, MAX_EDGES)
    edges = set()
    for a, b in kept:
        if b.startswith("ext:"):
            mod = b[4:]
            edges.add((inside(a), node(b, (mod or ".") + "/", "ext", (modules or {}).get(mod))))
        else:
            edges.add((inside(a), inside(b)))
    if not edges:
        return None
    hidden = len({end for edge in weights for end in edge}) - len(nodes)
    plural = "s" if hidden != 1 else ""
    words = [f"{hidden} less connected file{plural} or package{plural} not shown"] if hidden else []
    words += [left_out_words(0, "", cut, "weaker import arrow")] if cut else []
    return Diagram(nodes, sorted(edges), links, "; ".join(words))


# -- pages ---------------------------------------------------------------------------------------------------


def provenance(draft: FileDraft | ModuleDraft | OverviewDraft | TopicDraft, writer_id: str) -> str:
    if draft.written_by == "llm":
        model = writer_id.split("/")[1] if writer_id.count("/") >= 1 else writer_id
        return (f"Prose on this page was written by an LLM ({inline_text(model)}) "
                "from facts extracted from the code.")
    return "Prose on this page was extracted from the code (docstrings and structure); no LLM was used."


_CALLABLE_KINDS = frozenset({"function", "method", "macro"})


def _ref_label(key: tuple[str, str], here: str) -> str:
    path, qualname = key[0], shown_qualname(key[1])
    if path == here:
        # the file's own top level (a script's body, a test module) is named by the file, never by nothing
        return qualname or posixpath.basename(path)
    return f"{posixpath.basename(path)}: {qualname}" if qualname else path


def _ref_links(keys: Sequence[tuple[str, str]], more: int, here: str, page_id: str,
               index: SymbolIndex | None) -> str:
    """Comma-separated Markdown links to symbols' sections (code spans when a target has no page)."""
    items = _ref_items(keys, more, here, page_id, index, link=lambda href, name: f"[{name}]({href})")
    return ", ".join(items)


def _ref_items(keys: Sequence[tuple[str, str]], more: int, here: str, page_id: str, index: SymbolIndex | None,
               *, link: Callable[[str, str], str]) -> list[str]:
    """Each symbol's name, as `link(href, name)` when it has a section on a page, then "and N more"."""
    out = []
    seen: set[str] = set()
    for key in keys:
        href = index.href(page_id, *key) if index else None
        name = inline_text(_ref_label(key, here))  # the CSS sets names in the code font
        if name in seen:
            continue  # an overload or setter of a name already listed: the reader sees one name once
        seen.add(name)
        out.append(link(href, name) if href else name)
    if more:
        out.append(f"and {more} more")
    return out


def _ref_html(label: str, keys: Sequence[tuple[str, str]], more: int, *, here: str, page_id: str,
              index: SymbolIndex | None) -> str:
    """A section's "Calls:" (or "Called by:", "Tested by:") line as one raw HTML paragraph: links to the
    symbols' sections, plain names when a target has no page. Raw HTML rather than Markdown links: Markdown's
    inline pass over thousands of them was a fifth of its time on flask's pages. Links are the built site's
    URLs (MkDocs rewrites no link in raw HTML); names are escaped like any inline text."""
    out = _ref_items(keys, more, here, page_id, index,
                     link=lambda href, name: f'<a href="{html.escape(site_href(href))}">{name}</a>')
    return (f'<p class="sb-refs" data-search-exclude><strong>{label}:</strong> {", ".join(out)}</p>'
            if out else "")


_DECORATOR_KINDS = ((re.compile(r"@(?:\w+\.)*overload\b"), "overload"),
                    (re.compile(r"@\w+\.setter\b"), "setter"),
                    (re.compile(r"@\w+\.deleter\b"), "deleter"),
                    (re.compile(r"@(?:\w+\.)*(?:cached_)?property\b"), "property"))


def shown_kind(s: Symbol, source_lines: Sequence[str]) -> str:
    """A symbol's kind as a reader should see it: a Python method under `@property` is a property, one
    under `@x.setter` that property's setter, `@overload` an overload."""
    for line in source_lines[max(s.start_line - 1, 0):s.start_line + 9]:
        stripped = line.strip()
        if not stripped.startswith("@"):
            break
        for pattern, what in _DECORATOR_KINDS:
            if pattern.match(stripped):
                if what == "property":
                    return "property"
                return f"property {what}" if what != "overload" else f"{s.kind} overload"
    return s.kind  # the implementation after its overloads, or one of a name's conditional definitions


_DATACLASS = re.compile(r"@(?:\w+\.)*(?:dataclass|define|frozen|mutable|attrs|s)\b")
_FIELD = re.compile(r"(\w+)\s*:\s*(.+?)\s*(?:=\s*(.+?))?\s*(?:#.*)?$")
_PROPERTY_RETURNS = re.compile(r"\)\s*->\s*(.+?)\s*:?\s*$")


def shown_signature(s: Symbol, members: Sequence[Symbol], source_lines: Sequence[str], kind: str) -> str:
    """A Python symbol's signature as mkdocstrings shows it: a class called the way it is constructed
    (`class Client(auth=None, timeout=5)`, from its `__init__`, `self` left out, or a dataclass's fields),
    a property as the attribute it reads as (`timeout: float`). Anything else as written."""
    if kind == "property":
        returns = _PROPERTY_RETURNS.search(s.signature)
        return f"{s.name}: {returns.group(1)}" if returns else s.name
    if s.kind != "class":
        return s.signature
    init = next((m for m in members if m.name == "__init__" and m.kind == "method"), None)
    if init is not None:
        start = init.signature.find("(")
        found = _parameters(init.signature, start) if start >= 0 else None
        if found is not None:
            # `self` (any bare first name) is not passed; `*args` or an annotated first one is
            params = found[0][1:] if found[0] and found[0][0].isidentifier() else found[0]
            return f"class {s.name}({', '.join(params)})"
    fields = _dataclass_fields(s, source_lines)
    return f"class {s.name}({', '.join(fields)})" if fields is not None else s.signature


def _dataclass_fields(s: Symbol, source_lines: Sequence[str]) -> list[str] | None:
    """A dataclass's (or attrs class's) fields as constructor parameters (`name: int = 0`), from the
    annotated names of its body; ClassVar names and fields after methods are not parameters. None when the
    class is no dataclass."""
    decorators = [line.strip() for line in source_lines[max(s.start_line - 1, 0):s.start_line + 9]]
    header = next((i for i, line in enumerate(decorators) if not line.startswith("@")), len(decorators))
    if not any(_DATACLASS.match(line) for line in decorators[:header]):
        return None
    body = source_lines[s.start_line - 1 + header + 1:s.end_line]
    indent = next((len(line) - len(line.lstrip()) for line in body if line.strip()), 0)
    fields: list[str] = []
    quote = ""
    for line in body:
        text = line.strip()
        if quote:
            quote = "" if quote in text else quote
            continue
        if text[:3] in ('"""', "'''"):
            quote = text[:3] if text.count(text[:3]) == 1 else ""
            continue
        if not text or len(line) - len(line.lstrip()) != indent:
            continue
        if text.startswith(("def ", "async def ", "@", "class ")):
            break
        found = _FIELD.match(text)
        if found and "ClassVar" not in found.group(2):
            name, annotation, default = found.groups()
            fields.append(f"{name}: {annotation}" + (f" = {default}" if default else ""))
    return fields


def _index_rows(symbols: Sequence[Symbol], anchors: Mapping[str, str],
                kind_of: Callable[[Symbol], str] = lambda s: s.kind, overloads: Container[str] = ()) -> str:
    """The compact symbol index as raw HTML, in source order: a member follows its class, indented, by its
    short name (`.get`), so the name column stays narrow; names never wrap inside, and search skips it."""
    from generator.markup.docstrings import docstring_summary

    listed = {s.qualname: s for s in symbols}
    rows = []
    for s in sorted(symbols, key=lambda s: (s.start_line, s.qualname)):
        depth, parent = 0, s.parent
        while parent in listed:
            depth += 1
            parent = listed[parent].parent
        # escaped for Markdown too: inert either way, and a reader of the .md sees no live link syntax
        summary = rich_cell(docstring_summary(s.docstring, 160))  # roles as <code>, never raw
        shown = shown_heading(s, overloads)  # an overload by its parameter types
        name = inline_text("." + s.name + shown[len(shown_qualname(s.qualname)):] if depth else shown)
        title = inline_text(shown).replace('"', "&quot;")  # a quote in a name must not end the attribute
        link = f'<a href="#{anchors[s.qualname]}" title="{title}">{name}</a>'
        rows.append(f'<tr><td class="sb-depth-{min(depth, 3)}">{link}</td>'
                    f"<td>{inline_text(kind_of(s))}</td><td>{summary}</td></tr>")
    return ('<div class="sb-index" data-search-exclude><table class="sb-index-table"><thead><tr>'
            '<th>Symbol</th><th>Kind</th>'
            f"<th>Summary</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>")


# Material's search boost per file kind (front matter): code pages, whose sections are the symbols, first
SEARCH_BOOST = {"code": 3, "test": 1, "doc": 1, "config": 0.5}
# Sections that only point elsewhere (other files' symbol names, page links): indexed, they made a test
# page or a folder page look like the code it merely links to
_NAVIGATION_SECTIONS = re.compile(r"^## (?:Code it exercises|Class hierarchy|Entry points"
                                  r"|Most-used abstractions|Where to start reading|Public API|All names)"
                                  r"\n.*?(?=^## |\Z)", re.S | re.M)
_MERMAID_CLICK = re.compile(r'^  click \w+ href "[^"\n]*"\n', re.M)
_SECTION_SIGNATURE = re.compile(r"\{ #(sym-[\w-]+) [^}\n]*\}\n\n[^\n]*\n\n+"
                                r'<div class="language-[\w+-]+ highlight(?: sb-signature)?"><pre>'
                                r"<span></span><code>(.*?)</code>")
# a section's highlighted signature: the symbol index (rebuilt as a table) already carries it as text
_SIGNATURE_BLOCK = re.compile(r'^<div class="language-[\w+-]+ highlight(?: sb-signature)?"><pre><span></span>'
                              r"<code>.*?</code></pre></div>$\n?", re.S | re.M)
_OUTLINE_LINK = re.compile(r"\[([^\[\]\n]*)\]\(#(?:rst|md)-[\w-]+\)")
_KIND_ATTR = re.compile(r'(\{ #sym-[\w-]+) data-kind="[^"]*" \}')
_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)
# a doc's rendered text (the file itself is indexed as the file; sanitized HTML has no comments, so the
# closing marker is the template's own; it is inside the <section>: Markdown moves a comment after a raw
# block past whatever follows)
_DOCUMENT = re.compile(
    r'^<section class="sb-document[^"]*" data-search-exclude>$.*?^<!-- /sb-document --></section>$\n?',
    re.S | re.M)
_SOURCE_BLOCK = re.compile(r'^<details class="note sb-source".*?</details>$\n?', re.S | re.M)
_REFS_PARAGRAPH = re.compile(r'^<p class="sb-refs" data-search-exclude><strong>.*</p>\n?', re.M)
_FORGE_LINK = re.compile(r"\[([^\[\]\n]+:\d+)\]\(https?://[^()\s]+\)")
_INDEX_TABLE = re.compile(r'^<div class="sb-index" data-search-exclude>.*?</div>$', re.M)
_INDEX_ROW = re.compile(r'<tr><td[^>]*><a href="#([\w-]+)" title="([^"]*)">.*?</a></td><td>(.*?)</td>'
                        r"<td>(.*?)</td></tr>")
# what a match of each of these must hold (index_text skips a pattern whose literal the page lacks)
_NEEDED = {_DOCUMENT: '<section class="sb-document', _SOURCE_BLOCK: '<details class="note sb-source"',
           _MERMAID_CLICK: "  click ", _REFS_PARAGRAPH: '<p class="sb-refs" data-search-exclude><strong>',
           _SIGNATURE_BLOCK: '<div class="language-',
           _INDEX_TABLE: '<div class="sb-index" data-search-exclude>'}
# the start of a navigation section, unanchored: a literal prefix re skips ahead to
_NAVIGATION_HEADING = re.compile(r"## (?:Code it exercises|Class hierarchy|Entry points"
                                 r"|Most-used abstractions|Where to start reading|Public API|All names)\n")


def _plain(fragment: str, sep: str = " ") -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", sep, fragment)).split())


def index_text(markdown: str) -> str:
    """A page's Markdown as the search index stores it: without front matter, the rendered source, the
    cross-reference lines and the link-only sections (the code is indexed as code; repeated here it would make
    every page look like its callers), and with the symbol index as the Markdown table of names, kinds,
    signatures and summaries that file pages carried before (measured: retrieval stays as it was)."""
    signatures = {a: _plain(sig, "") for a, sig in _SECTION_SIGNATURE.findall(markdown)}  # adjacent tokens

    def table(m: re.Match[str]) -> str:
        rows = [f"| [{table_cell(_plain(name))}](#{anchor}) | {table_cell(_plain(kind))} "
                f"| <code>{table_cell(signatures.get(anchor, ''))}</code> | {table_cell(_plain(summary))} |"
                for anchor, name, kind, summary in _INDEX_ROW.findall(m.group(0))]
        return "| Symbol | Kind | Signature | Summary |\n|---|---|---|---|\n" + "\n".join(rows)

    text = _removed(_SOURCE_BLOCK, _removed(_DOCUMENT, _FRONT_MATTER.sub("", markdown)))
    if _NAVIGATION_HEADING.search(text):
        text = _NAVIGATION_SECTIONS.sub("", text)
    text = _removed(_REFS_PARAGRAPH, _KIND_ATTR.sub(r"\1 }", _removed(_MERMAID_CLICK, text)))
    if "](http" in text:
        text = _FORGE_LINK.sub(r"\1", text)  # a new commit must not make every page a new row to embed
    # markup is not words: a test page's 60 signatures in <span>s made it a long document of "span class
    # nf p" (the symbol index carries each signature as text), and its headings spelled names as Markdown
    # escapes them ("test&#95;url&#95;for"). The symbol index is then rebuilt exactly as retrieval was tuned
    # on (the same table as before; unescaping it too measured worse: flask MRR 0.879)
    text = _removed(_SIGNATURE_BLOCK, text).replace("&#95;", "_")
    if "](#" in text:
        text = _OUTLINE_LINK.sub(r"\1", text)  # a doc's outline: its headings' words, not their anchors
    return _INDEX_TABLE.sub(table, text) if _NEEDED[_INDEX_TABLE] in text else text


def _removed(pattern: re.Pattern[str], text: str) -> str:
    """`pattern.sub("", text)`, skipped when the text lacks the literal every match starts with: a pattern
    anchored at ^ (re.M) is tried at every position of the page, which made most of index_text's time."""
    return pattern.sub("", text) if _NEEDED[pattern] in text else text


def _source_end(s: Symbol, children: Mapping[str | None, list[Symbol]], sectioned: Container[str]) -> int:
    """Where a symbol's own Source block ends: before its first member that has a section of its own."""
    members = [c.start_line for c in children.get(s.qualname, []) if c.qualname in sectioned
               and c.start_line > s.start_line]
    return min([s.end_line, *(m - 1 for m in members)])


def _trim_blank(lines: Sequence[str], start: int, end: int) -> int:
    """`end` moved up past blank lines (the gap before a member's section)."""
    while end > start and end <= len(lines) and not re.sub(r"<[^>]+>", "", lines[end - 1]).strip():
        end -= 1
    return end


def render_file_page(ctx: FileContext, draft: FileDraft, *, writer_id: str, module_page: str,
                     repo_url: str = "", links: SourceLinks | None = None, refs: FileRefs | None = None,
                     index: SymbolIndex | None = None, resolve_symbol: LinkResolver | None = None,
                     document: str = "", builders: Sequence[Symbol] = (),
                     parts: Mapping[str, SplitType] | None = None) -> str:
    """`links`: where source lines live on the forge (repo_url is the older form of the same);
    `refs`: calls, callers and tests per symbol; `index`: how to link another file's symbol;
    `resolve_symbol`: a name in a docstring -> the URL of its symbol's section (xrefs.page_resolver; without
    it only the page's own symbols are linked). With `ctx.source` set, each section carries its source.
    `document`: a documentation file's own text rendered to sanitized HTML (generator/markup/doc_html.py).
    `builders`: the functions of other files of its package that build its types
    (constructors.package_builders). `parts`: qualname -> the type declared in several files that this
    file's symbol of that qualname is a part of (type_parts.split_types)."""
    from generator.pages.remote import from_repo_url

    if links is None and repo_url:
        links = from_repo_url(repo_url)
    page = FilePageView(ctx, draft, writer_id=writer_id, module_page=module_page, links=links,
                        refs=refs or FileRefs(), index=index,
                        resolve=resolve_symbol or own_symbols_resolver(ctx),
                        document=document, builders=builders, parts=parts or {})
    return _environment().get_template("file.md.j2").render(page=page)


class FilePageView:
    """What templates/file.md.j2 shows of one file, worked out once: the page's data as attributes and, per
    symbol, its heading, kind, signature, constructors, member table, reference lines and source block as
    methods. The template reads only this object (and the environment's filters and globals)."""

    def __init__(self, ctx: FileContext, draft: FileDraft, *, writer_id: str, module_page: str,
                 links: SourceLinks | None, refs: FileRefs, index: SymbolIndex | None, resolve: LinkResolver,
                 document: str, builders: Sequence[Symbol], parts: Mapping[str, SplitType]) -> None:
        self.ctx, self.draft, self.facts = ctx, draft, ctx.facts
        self._parts = parts
        self.module_page, self.document, self.builders = module_page, document, builders
        self._links, self._refs, self._index, self._resolve = links, refs, index, resolve
        self.language = self.facts.file.language
        self.symbols = ctx.ordered_symbols()
        public = [s for s in self.symbols if has_section(s, self.language)]  # the symbols with a section
        self.sectioned = {s.qualname for s in public}
        kinds = {s.qualname: s.kind for s in self.symbols}
        self.anchors = anchor_ids(self.symbols)
        self._overloads = overloaded(self.symbols)
        self._shapes = members_by_type(self.facts.members)
        self.children: dict[str | None, list[Symbol]] = {}
        for s in self.symbols:
            self.children.setdefault(s.parent, []).append(s)
        # a public symbol gets its section under its parent's, or at the top when its parent has none
        self.top = [s for s in public if s.parent is None or s.parent not in self.sectioned]
        self.notes = {n.qualname: n.explanation for n in draft.key_symbols if n.qualname in self.anchors}
        self.lang = _fence_lang(self.language)
        # tests are shown as plain text: lexing them with Pygments was a third of the flask build's extra time
        spans = [(s.start_line, _source_end(s, self.children, self.sectioned)) for s in public]
        plain = self.facts.file.kind == "test"
        self._lines = (highlighted_lines(ctx.source, "" if plain else self.lang, spans)
                       if ctx.source and public else [])
        self._budget = PAGE_SOURCE_BUDGET  # what is left of it; sections are rendered in page order
        self._source_lines = ctx.source.split("\n") if ctx.source and self.language == "python" else []
        self._kinds = {s.qualname: shown_kind(s, self._source_lines) for s in self.symbols}
        # the index lists the file's API: top-level symbols and members of classes and the like; functions
        # nested inside functions are implementation detail and appear only in their parent's section
        table = [s for s in public if s.parent is None or kinds.get(s.parent) not in _CALLABLE_KINDS]
        self.index_table = _index_rows(table, self.anchors, self.kind_of, self._overloads) if table else ""
        exercised: dict[str, list[tuple[str, str]]] = {}
        for key in refs.exercises:
            exercised.setdefault(key[0], []).append(key)
        self.exercises = [(path, _ref_links(keys, 0, path, ctx.page_id, index),
                           index.href(ctx.page_id, path) if index else None)
                          for path, keys in sorted(exercised.items())]
        self.more_exercises = refs.more_exercises
        self.whole_source = _whole_source(ctx, self.lang) if not public and not document else ""
        self.empty_file = not self.symbols and (self.facts.line_count == 0
                                                or (bool(ctx.source) and not ctx.source.strip()))
        self.title = posixpath.basename(ctx.path) or ctx.path
        self.file_location = source_location(ctx.path, 1, max(self.facts.line_count, 1), links)
        self.provenance = provenance(draft, writer_id)
        self.search_boost = SEARCH_BOOST.get(self.facts.file.kind, 1)
        self.outline = document_outline(document) if document else []
        self.document_class = "sb-md" if self.language == "markdown" else "sb-rst"

    def link(self, page_id: str) -> str:
        return relative_link(self.ctx.page_id, page_id)

    def docstring(self, text: str) -> str:
        from generator.markup.docstrings import render_docstring

        return render_docstring(text, self.language, self._resolve)

    def heading(self, s: Symbol) -> str:
        heading = shown_heading(s, self._overloads)
        split = self._parts.get(s.qualname)
        if split is None or split.is_main(self.ctx.path, s.qualname):
            return heading
        # the type's other parts are headed as parts: the site search lists one `X` and N-1 `X (partial)`,
        # not N types of one name
        part = split.part(self.ctx.path, s.qualname)
        return f"{heading} (actual, {part.platform})" if part and part.platform else f"{heading} (partial)"

    def _part_href(self, path: str, qualname: str = "") -> str | None:
        if path == self.ctx.path:
            return f"#{self.anchors[qualname]}" if qualname in self.anchors else None
        return self._index.href(self.ctx.page_id, path, qualname) if self._index is not None else None

    def _part_link(self, text: str, path: str, qualname: str = "") -> str:
        code = f"<code>{escape_markdown(text)}</code>"
        href = self._part_href(path, qualname)
        return f"[{code}]({href})" if href else code

    def parts_line(self, s: Symbol) -> str:
        """For a type declared in several files (type_parts.py): on its main section, the files of its
        other parts; on another part's, which type it is part of, linked to the main section."""
        split = self._parts.get(s.qualname)
        if split is None:
            return ""
        name = shown_qualname(split.name)
        if not split.is_main(self.ctx.path, s.qualname):
            main = self._part_link(name, split.main.path, split.main.qualname)
            part = split.part(self.ctx.path, s.qualname)
            if part is not None and part.platform:
                return f"*Actual for {escape_markdown(part.platform)} of* `expect` {main}"
            return (f"*Part of the partial type* {main}*, whose main section lists the members of every "
                    f"part.*")
        links = [self._part_link(posixpath.basename(p.path) + (f" ({p.platform})" if p.platform else ""),
                                 p.path, p.qualname) for p in split.others]
        if split.kind == "expect":
            return f"*Actual declarations:* {' · '.join(links)}"
        files = len({p.path for p in (split.main, *split.others)})
        return f"*Partial type declared in {files} files:* this one · {' · '.join(links)}"

    def other_parts_members(self, s: Symbol) -> list[str]:
        """On a split type's main section: the members its other parts declare, each linked to its own
        section on its own page."""
        split = self._parts.get(s.qualname)
        if split is None or not split.is_main(self.ctx.path, s.qualname):
            return []
        lines = []
        for p, m in split.members:
            name = shown_qualname(m.qualname)[len(shown_qualname(p.qualname)) + 1:] or m.name
            lines.append(f"{self._part_link(name, p.path, m.qualname)} · {escape_markdown(m.kind)}"
                         f" · {escape_markdown(p.path)}")
        return lines

    def shape(self, s: Symbol) -> str:
        return shape_table(self._shapes.get(s.qualname, ()))

    def where(self, s: Symbol) -> str:
        return source_location(self.ctx.path, s.start_line, s.end_line, self._links)

    def source(self, s: Symbol) -> str:
        if not self._lines:
            return ""
        end = _trim_blank(self._lines, s.start_line, _source_end(s, self.children, self.sectioned))
        more = self._links.url(self.ctx.path, s.start_line, s.end_line) if self._links else ""
        block = source_block(self._lines, s.start_line, end, self.lang, more_url=more)
        if len(block) > self._budget:
            self._budget = 0  # from the first block that does not fit on: one cut, not a patchwork
            return source_left_out(s.start_line, end, more_url=more) if block else ""
        self._budget -= len(block)
        return block

    def refs(self, s: Symbol) -> list[str]:
        r = self._refs.symbols.get(s.qualname)
        if r is None:
            return []
        # a type is used (named, constructed, extended), not called: its referrers are "Used by"
        by = "Used by" if s.kind in TYPE_KINDS else "Called by"
        rows = [("Calls", r.calls, r.more_calls), ("Uses", r.uses, r.more_uses),
                (by, r.called_by, r.more_called_by), ("Tested by", r.tested_by, r.more_tested_by)]
        lines = [_ref_html(label, keys, more, here=self.ctx.path, page_id=self.ctx.page_id, index=self._index)
                 for label, keys, more in rows]
        return [line for line in lines if line]

    def kind_of(self, s: Symbol) -> str:
        return self._kinds.get(s.qualname, s.kind)

    def signature_of(self, s: Symbol) -> str:
        if self.language != "python":
            return s.signature
        return shown_signature(s, self.children.get(s.qualname, []), self._source_lines, self.kind_of(s))

    def built_by(self, s: Symbol) -> str:
        """A type's constructors in other languages than Python (constructors.py), as code, each linked to
        its section: `new Widget(name: string)`, `NewRouter() *Mux`, `Client::new() -> Self`."""
        from generator.pages.constructors import constructors

        if self.language == "python":
            return ""
        shown = []
        for c, text in constructors(s, [*self.symbols, *self.builders], self.language or ""):
            code = f"<code>{escape_markdown(text)}</code>"
            if c.path != self.ctx.path:  # another file of the package
                index = self._index
                href = index.href(self.ctx.page_id, c.path, c.qualname) if index is not None else None
                shown.append(f"[{code}]({href})" if href else code)
            else:
                own = c.qualname in self.sectioned
                shown.append(f"[{code}](#{self.anchors[c.qualname]})" if own else code)
        return " · ".join(shown)

    def bases_of(self, s: Symbol) -> str:
        """A Python class's bases as written, when its signature shows its constructor instead."""
        if s.kind != "class" or self.signature_of(s) == s.signature:
            return ""
        start = s.signature.find("(")
        found = _parameters(s.signature, start) if start >= 0 else None
        return ", ".join(found[0]) if found else ""


# a short file with no symbol and no rendered document (a config file, a Makefile, a LICENSE) is its own
# content: its page shows all of it, open, instead of one line saying what kind of file it is
WHOLE_SOURCE_BYTES = 8_000
WHOLE_SOURCE_LINES = 400


def _whole_source(ctx: FileContext, lang: str) -> str:
    text = ctx.source or ""
    if not text.strip() or len(text) > WHOLE_SOURCE_BYTES or text.count("\n") >= WHOLE_SOURCE_LINES:
        return ""
    from sourcebook.redaction import redact_text

    # published pages of files made to hold settings: a key committed in one never reaches the site
    shown = redact_text(text).rstrip("\n")
    lines = highlighted_lines(shown, lang if ctx.facts.file.kind != "test" else "")
    return source_block(lines, 1, len(lines), lang, limit=WHOLE_SOURCE_LINES, opened=True)


_REFERENCE_DEFINITION = re.compile(r"^ {0,3}\[[^\]\n]+\]:\s*\S")
_DOCUMENT_HEADING = re.compile(r'<h([3-6]) id="((?:rst|md)-[\w-]+)">(.*?)</h\1>', re.S)


def document_outline(document: str) -> list[tuple[int, str, str]]:
    """(depth from 0, anchor, text) of a rendered document's headings (rst.py puts each section's id on its
    heading, md_html.py gives each heading an `md-` id): the page's outline as links, since Material's table
    of contents does not see raw HTML. A level never deepens by more than one, so the nested list stays a
    list."""
    out: list[tuple[int, str, str]] = []
    for level, anchor, inner in _DOCUMENT_HEADING.findall(document):
        depth = min(int(level) - 3, out[-1][0] + 1 if out else 0)
        out.append((depth, anchor, _plain(inner)))
    return out


def own_symbols_resolver(ctx: FileContext) -> LinkResolver:
    """Names in a file's docstrings -> the sections of that file's own symbols (nothing else)."""
    from generator.pages.name_links import NameIndex, page_resolver

    names = NameIndex.build({ctx.path: ctx.facts}, {ctx.path: ctx.page_id})
    return page_resolver(names, ctx.path, ctx.page_id, {}, relative_link)


def render_module_page(ctx: ModuleContext, draft: ModuleDraft, *, writer_id: str,
                       file_anchors: Mapping[tuple[str, str], str] | None = None,
                       file_pages: Mapping[str, str] | None = None,
                       module_pages: Mapping[str, str] | None = None, hierarchy: Sequence[Graph] = (),
                       imports: Graph | None = None) -> str:
    """`hierarchy`: the module's classes and what they inherit from (diagrams.class_hierarchy); `imports`:
    its import diagram drawn from the whole graph (diagrams.module_imports), else one from `ctx`'s edges."""
    pages = dict(file_pages or {})
    for f in ctx.files:
        pages.setdefault(f.path, f.page_id)
    diagram: Graph | Diagram | None = imports or module_diagram(ctx, pages, module_pages)
    return _environment().get_template("module.md.j2").render(
        ctx=ctx, draft=draft, diagram=(diagram.mermaid() if isinstance(diagram, Graph) else str(diagram))
        if diagram else "",
        diagram_note=diagram.left_out if diagram else "",
        hierarchies=[{"title": g.title, "mermaid": g.mermaid(), "note": g.left_out} for g in hierarchy],
        link=lambda page_id: relative_link(ctx.page_id, page_id), pages=pages,
        entry_anchor=lambda path, qualname: (file_anchors or {}).get((path, qualname), ""),
        prose=prose, prose_line=prose_line, provenance=provenance(draft, writer_id))


@dataclass(frozen=True)
class _Row:
    """A linked line of the overview: what it is, where it goes, what it says."""

    name: str = ""
    how: str = ""
    label: str = ""
    href: str | None = None
    path: str = ""
    qualname: str = ""
    kind: str = ""
    used_from: int = 0
    summary: str = ""


def render_overview_page(ctx: OverviewContext, draft: OverviewDraft, *, writer_id: str,
                         resolve: LinkResolver | None = None, file_pages: Mapping[str, str] | None = None,
                         file_anchors: Mapping[tuple[str, str], str] | None = None,
                         orient: Orientation | None = None, index: SymbolIndex | None = None,
                         summaries: Mapping[str, str] | None = None,
                         topics: Sequence[tuple[str, str, str]] = ()) -> str:
    """`orient`: entry points, most-used abstractions, the architecture diagram and a reading order
    (generator/pages/orientation.py); `index` links them to symbol sections; `topics`: (title, page id, what
    it
    covers) of the topic pages, linked under "Read next"."""
    is_rst = ctx.readme_path.lower().endswith((".rst", ".rest"))

    def readme_html(text: str, shown: str | None = None) -> str:
        if is_rst:
            from generator.markup.rst import render_rst

            # raw HTML (sanitized by render_rst) in one block: Markdown passes it through untouched
            return f'<div class="sb-readme sb-rst">\n{render_rst(text, resolve)}\n</div>'
        from generator.markup.md_html import details_blocks, github_anchors, nest_lists

        # the site's Markdown nests lists by four spaces; a README written for GitHub nests them by two; its
        # `<details>` blocks, whose Markdown GitHub renders, become pymdownx.details' `???`
        nested = "\n".join(details_blocks(nest_lists(github_anchors(text, ctx.readme, shown).split("\n"))))
        return sanitize_markdown(nested, resolve, demote=2, images=False).strip()

    o = orient or Orientation()
    intro_text = o.readme_intro or readme_intro(ctx.readme)
    # below the intro, the rest of the README: each paragraph of it once on the page
    rest = readme_rest(ctx.readme) if intro_text else ctx.readme
    if intro_text and not is_rst:
        # the intro's `[text][ref]` links are defined further down, usually at the README's end
        definitions = [line for line in ctx.readme.split("\n") if _REFERENCE_DEFINITION.match(line)]
        intro_text = "\n\n".join([intro_text, "\n".join(definitions)]) if definitions else intro_text
    readme = readme_html(rest) if rest else ""
    summaries = summaries or {}

    def href(path: str, qualname: str = "") -> str | None:
        if index is not None:
            return index.href(OVERVIEW_PAGE, path, qualname)
        page = (file_pages or {}).get(path)
        return relative_link(OVERVIEW_PAGE, page) if page else None

    entries = [_Row(name=e.name, how=e.how, label=f"{e.path}: {e.qualname}" if e.qualname else e.path,
                    href=href(e.path, e.qualname)) for e in o.entries]
    abstractions = [_Row(path=a.path, qualname=a.qualname, kind=a.kind, used_from=a.used_from,
                         summary=a.summary, href=href(a.path, a.qualname)) for a in o.abstractions]
    start = [_Row(path=p, href=href(p), summary=summaries.get(p, "")) for p in o.start_reading if href(p)]
    shown_api = o.api[:MAX_API_SHOWN]
    api = api_rows(shown_api, OVERVIEW_PAGE, index, file_pages or {}, short=True)
    intro = readme_html(intro_text, rest) if intro_text else ""
    # the library's main type, named in the page's opening: where a newcomer's reading starts
    main_row = api_rows([o.main], OVERVIEW_PAGE, index, file_pages or {}, short=True)[0] if o.main else None
    readme_page = href(ctx.readme_path) if ctx.readme_path else None
    return _environment().get_template("overview.md.j2").render(
        ctx=ctx, draft=draft, readme=readme, link=lambda page_id: relative_link(OVERVIEW_PAGE, page_id),
        pages=dict(file_pages or {}),
        entry_anchor=lambda path, qualname: (file_anchors or {}).get((path, qualname), ""),
        readme_intro=intro, readme_page=readme_page,
        readme_truncated=bool(readme),
        diagram=o.diagram.mermaid() if o.diagram else "",
        diagram_note=o.diagram.left_out if o.diagram else "",
        diagram_files=o.diagram is not None and o.diagram.unit == "files",
        entries=entries, abstractions=abstractions, start_reading=start, topics=topics,
        api=api, api_total=len(o.api), main=main_row,
        api_page=relative_link(OVERVIEW_PAGE, API_PAGE) if len(o.api) > len(shown_api) else "",
        prose=prose, prose_line=prose_line, provenance=provenance(draft, writer_id))


OVERVIEW_PAGE = "index.md"
API_PAGE = "api.md"


@dataclass(frozen=True)
class _ApiRow:
    label: str  # Markdown: the name linked to its section, or as code with a link to its file
    kind: str
    path: str
    file_href: str | None
    summary: str


def first_sentence(text: str, limit: int = 120) -> str:
    """A summary's first sentence, as written, when it ends within `limit` characters (the home page's table
    stays a line a name), else the summary. The same ends as folder tables' (`summary_line`): never inside a
    code span, never after "e.g." and the like."""
    for m in _SENTENCE_END.finditer(text):
        if m.start() > limit:
            break
        if text.count("`", 0, m.start()) % 2 == 0 and not _NOT_AN_END.search(text, 0, m.start()):
            return text[:m.end()]
    return text


def api_rows(names: Sequence[ApiName], from_page: str, index: SymbolIndex | None,
             file_pages: Mapping[str, str], *, with_file: bool = True, short: bool = False) -> list[_ApiRow]:
    """The public API's names as table rows, each name as code: one with a section links to it; a module to
    its page; one without (a module-level variable) is not linked but its file is, after it ("in
    globals.py"): never a name link landing on a page's top. `short`: summaries cut to their first
    sentence."""
    def page(path: str) -> str | None:
        if index is not None:
            return index.href(from_page, path) if path else None
        return relative_link(from_page, file_pages[path]) if path in file_pages else None

    rows = []
    for a in names:
        section = index.href(from_page, a.path, a.qualname) if index is not None and a.qualname else None
        file_href = page(a.path)
        if section or (a.kind == "module" and file_href):
            label = f"[<code>{table_cell(a.name)}</code>]({section or file_href})"
        else:
            where = f" in [{table_cell(posixpath.basename(a.path))}]({file_href})" if file_href else ""
            label = f"<code>{table_cell(a.name)}</code>" + (where if with_file else "")
        summary = first_sentence(a.summary) if short else a.summary
        rows.append(_ApiRow(label, a.kind or "name", a.path, file_href, summary))
    return rows


def render_api_page(names: Sequence[ApiName], *, index: SymbolIndex | None,
                    file_pages: Mapping[str, str]) -> str:
    """The Public API page: every name the package's users import (orientation.api_names), by name."""
    ordered = sorted(names, key=lambda a: (a.name.lower(), a.name))
    return _environment().get_template("api.md.j2").render(
        api=api_rows(ordered, API_PAGE, index, file_pages, with_file=False))  # a column says where


def topic_source_link(source: str, page_id: str, facts: Mapping[str, Any], index: SymbolIndex) -> str:
    """A validated `path:start-end` citation as a link to the innermost symbol section holding its first
    line (the section shows that source), else to the file's page; plain text when the file has no page."""
    path, _, lines = source.rpartition(":")
    start = int(lines.split("-", 1)[0]) if lines.split("-", 1)[0].isdigit() else 0
    f = facts.get(path)
    holders = [s for s in f.symbols if has_section(s, f.file.language)
               and s.start_line <= start <= s.end_line] if f is not None else []
    qualname = min(holders, key=lambda s: (s.end_line - s.start_line, s.qualname)).qualname if holders else ""
    href = index.href(page_id, path, qualname)
    label = inline_text(source)
    return f"[{label}]({href})" if href else f"<code>{html.escape(source)}</code>"


def render_topic_page(ctx: Any, draft: Any, *, writer_id: str, facts: Mapping[str, Any], index: SymbolIndex,
                      diagram: Graph | None = None) -> str:
    """A topic page (generator/pages/topics.py): its diagram, then the draft's sections, each ending in its
    linked sources."""
    sections = [{"heading": s.heading, "body": s.body,
                 "sources": [topic_source_link(src, ctx.page_id, facts, index) for src in s.sources]}
                for s in draft.sections if s.sources]
    return _environment().get_template("topic.md.j2").render(
        ctx=ctx, draft=draft, title=ctx.title, sections=sections,
        diagram=diagram.mermaid() if diagram else "", diagram_note=diagram.left_out if diagram else "",
        diagram_files=diagram is not None and diagram.unit == "files",
        link=lambda to: relative_link(ctx.page_id, to), prose=prose, provenance=provenance(draft, writer_id))


def _fence_lang(language: str | None) -> str:
    return spec_for(language).code_fence if language else "text"


# -- the site configuration ----------------------------------------------------------------------------------



# the hooks every generated site runs (MkDocs puts their folder on sys.path: it holds that one module)
HOOKS_FILE = Path(__file__).resolve().parent.parent / "site" / "hooks" / "mkdocs_hooks.py"


def render_mkdocs_yml(*, site_name: str, nav: list[str | dict[str, Any]], repo_url: str = "",
                      theme_dir: str = "theme", docs_dir: str = "docs", site_dir: str = "site",
                      extra_javascript: Sequence[str] = (), mermaid_js: str = "",
                      footer: str = "") -> str:
    """`mermaid_js`: docs-relative URL of a local mermaid.js (generator.site.publish.mermaid_asset's; "" =
    none,
    Material's CDN). Its hashed name makes a new mermaid.js a new config, so a new site. The caller looks it
    up: importing the site's publisher here would put the whole site stage in the page renderer's code
    version (sourcebook/code_version.py), re-rendering every page on a site-only change.
    `footer`: plain words on how the site was made (site_footer), shown at the bottom of every page."""
    # loaded before Material's components mount: with window.mermaid defined it skips its CDN fetch
    scripts = ([mermaid_js] if mermaid_js else []) + list(extra_javascript)
    return _environment().get_template("mkdocs.yml.j2").render(
        # Material prints site_name as HTML, once inside a double-quoted attribute: escape quotes too
        site_name=html.escape(site_name), nav=json.dumps(nav, ensure_ascii=False),
        repo_url=_repo_home(repo_url), theme_dir=theme_dir, docs_dir=docs_dir, site_dir=site_dir,
        extra_javascript=scripts, hooks_file=str(HOOKS_FILE),
        footer=html.escape(" ".join(footer.split())))


def site_footer(writer_ids: Sequence[str], llm_pages: int, total_pages: int) -> str:
    """How the pages were made, in plain words (not a writer id such as `extractive/1-636e796e`).

    The footer is on every page, so it names no page count: a count would change with each page the model
    (re)writes and make the render cache wrap every page of the site again. It changes only between none,
    some and all pages written by a model, or with the models; each page's own header says how its prose
    was made."""
    facts = "Symbols, signatures, source and links come straight from the code."
    models = sorted({w.split("/")[1] for w in writer_ids if w.startswith("llm/") and w.count("/") >= 1})
    if not llm_pages or not models:
        return (f"Generated by sourcebook. Prose was taken from the code's docstrings and structure; "
                f"no language model was used. {facts}")
    if llm_pages >= total_pages:
        return (f"Generated by sourcebook. Prose on all pages was written by a language model "
                f"({', '.join(models)}) from facts extracted from the code. {facts}")
    return (f"Generated by sourcebook. Prose on some pages (each says so at its top) was written by a "
            f"language model ({', '.join(models)}) from facts extracted from the code; the rest was taken "
            f"from docstrings. {facts}")


def _repo_home(repo_url: str) -> str:
    """https://github.com/o/r/blob/<ref>/ -> https://github.com/o/r (the theme's repository link)."""
    if not repo_url:
        return ""
    parts = urlsplit(repo_url)
    segments = [s for s in parts.path.split("/") if s]
    if parts.netloc and len(segments) >= 2:
        return f"{parts.scheme}://{parts.netloc}/{segments[0]}/{segments[1]}"
    return ""
