"""A repository's Markdown document (README.md, docs/*.md) -> sanitized HTML for its page, offline and inert.

Python-Markdown renders it with a fixed set of extensions that only make structure: tables, fenced code
(highlighted by Pygments, as the site's own code blocks), admonitions and collapsible `???` blocks, footnotes,
strike-through, bare-URL links, and heading ids (prefixed `md-`, so the page's outline can link to them and
they never meet the page's own ids). No extension that lets the text set attributes (attr_list: `{:
onerror=... }` would reach the HTML) or read files. Two GitHub readings Python-Markdown lacks are added: lists
nested by two spaces nest, and `> [!NOTE]` quotes are admonitions; and mkdocstrings' `::: pkg.Name` directives
become the name linked to its symbol's section. Raw HTML in the text is left to Markdown and then cleaned by
the site's one HTML sanitizer (html_sanitize); after it, links and images are rewritten on its regular output:
relative links go through a resolver (a wiki page, or the link goes and its words stay), in-document
`#anchors` follow the prefixed heading ids, and an image is never loaded (the site works offline): in a link
(a badge) it becomes its alt text, a remote one a link to it labelled by its alt text (none: it goes), a local
one its words.
"""

from __future__ import annotations

import html
import logging
import re
import threading
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import Treeprocessor

from generator.markup.doc_budget import RenderBudgetExceeded, cpu_budget
from generator.markup.doc_links import LinkResolver, link_target
from generator.markup.html_sanitize import sanitize_document

log = logging.getLogger(__name__)


ID_PREFIX = "md-"
_local = threading.local()  # a Markdown instance is reusable (reset) but not shareable between threads

# tags as html_sanitize's serializer (html5ever) writes them: attribute values always double-quoted, `"`
# and `&` inside escaped, so `[^"]*` is exactly one value
_TAG = re.compile(r'<(/?)(a|img)\b((?:\s+[^\s"\'=<>/]+(?:="[^"]*")?)*)\s*/?>')
_ATTR = re.compile(r'([^\s"\'=<>/]+)(?:="([^"]*)")?')
_ID = re.compile(r'\sid="([^"]*)"')
_EMPTY_LINK = re.compile(r'<a href="[^"]*">\s*</a>')
_LIST_MARKER = re.compile(r"^( *)([-*+]|\d{1,9}\.)( +|$)")
_FENCE_OPEN = re.compile(r"^( *)(`{3,}|~{3,})")
# Python-Markdown keeps a copy of the rest of a quote's text per level: 50,000 `>` took gigabytes before the
# CPU budget could stop it. Real quotes nest a few deep.
MAX_QUOTE_DEPTH = 100
_QUOTES_TOO_DEEP = re.compile(rf"^[ \t]*(?:>[ \t]*){{{MAX_QUOTE_DEPTH + 1}}}", re.M)


def render_markdown(text: str, resolve: LinkResolver | None = None, *, heading_level: int = 3,
                    symbol: LinkResolver | None = None) -> str:
    """HTML for a Markdown document's body (headings start at h`heading_level`: the page has its own
    title and section), sanitized. `resolve`: a relative link -> a page's URL (None: the link goes, its
    words stay). `symbol`: a dotted name -> the URL of its symbol's section, for mkdocstrings/mkautodoc
    `::: pkg.Name` directives (each becomes the name as code, linked when `symbol` knows it)."""
    if _QUOTES_TOO_DEEP.search(text):
        return _as_text(text, f"quotes nested over {MAX_QUOTE_DEPTH} deep")
    md = _markdown(heading_level)
    autodoc: _Autodoc = md.treeprocessors["sb_autodoc"]
    autodoc.symbol, autodoc.urls = symbol, set()
    try:
        with cpu_budget():
            raw = md.reset().convert(text)
    except (Exception, RenderBudgetExceeded) as exc:  # noqa: BLE001 -- any failure on untrusted text
        # (RecursionError in nesting; over the CPU budget: generator/markup/doc_budget.py)
        md.reset()
        return _as_text(text, type(exc).__name__)
    finally:
        autodoc.symbol = None
    clean = sanitize_document(raw)
    ids = set(_ID.findall(clean))
    return sanitize_document(_rewrite_tags(clean, resolve or (lambda _url: None), ids, autodoc.urls)).strip()


def _as_text(text: str, why: str) -> str:
    """The document as escaped text: readable, never a traceback, never the build's end."""
    log.warning("a Markdown document was shown as text: it could not be rendered (%s)", why)
    return f'<pre class="sb-md-text">{html.escape(text, quote=False)}</pre>'


def _markdown(heading_level: int) -> Any:
    made: dict[int, Any] = _local.__dict__.setdefault("instances", {})
    if heading_level not in made:
        import markdown
        from markdown.extensions.toc import slugify_unicode

        made[heading_level] = markdown.Markdown(
            extensions=["tables", "admonition", "footnotes", "toc", "pymdownx.highlight",
                        "pymdownx.superfences", "pymdownx.magiclink", "pymdownx.tilde", "pymdownx.details"],
            extension_configs={
                "toc": {"baselevel": heading_level, "permalink": False,
                        # GitHub's ids, so the document's own `#links` land (its `-1` repeats: _link_target)
                        "slugify": lambda value, sep: ID_PREFIX + (github_slug(value) or slugify_unicode(
                            value, sep))},
                # as the site's own code blocks (Material styles `.highlight`); no guessing: a plain
                # fence stays plain
                "pymdownx.highlight": {"use_pygments": True, "guess_lang": False,
                                       "pygments_lang_class": True},
                # no custom fences: a ```mermaid block from a repository is shown as its code
                "pymdownx.superfences": {"custom_fences": []},
                "pymdownx.magiclink": {"repo_url_shortener": False, "social_url_shortener": False},
                "pymdownx.tilde": {"subscript": False},
                "footnotes": {"BACKLINK_TITLE": ""},
            }, output_format="html")
        # after tabs are expanded (normalize_whitespace, 30), before fences and raw HTML are taken out
        made[heading_level].preprocessors.register(_NestedLists(), "sb_nested_lists", 27)
        # after lists are nested by four (so a body's lists move with it), before raw HTML is taken out (20)
        made[heading_level].preprocessors.register(_Details(), "sb_details", 26)
        # before inline parsing (20), while a paragraph's text is still as typed
        made[heading_level].treeprocessors.register(_GitHubAlerts(), "sb_github_alerts", 25)
        made[heading_level].treeprocessors.register(_Autodoc(), "sb_autodoc", 24)
    return made[heading_level]


# mkdocstrings' `::: pkg.mod.Name` (after an optional heading mark) and mkautodoc's; the lines indented
# below it are its options (`options:` YAML, `:docstring:`, `:members:`), which only the plugin reads
_AUTODOC_LINE = re.compile(r"^([ \t]*)(?:#{1,6}[ \t]*)?:::[ \t]*([A-Za-z_][\w.:-]*)[ \t]*$")


def autodoc_names(text: str) -> set[str]:
    """The names a Markdown document's `::: name` directives document (part of its page's key)."""
    return {m.group(2) for line in text.split("\n") if (m := _AUTODOC_LINE.match(line))}


class _Autodoc(Treeprocessor):
    """A paragraph's `::: name` line and its option lines -> `<p class="sb-autodoc">` holding the name as
    code, linked to its symbol's section when `symbol` resolves it (the page adds its summary: a summary
    is no part of the document's cache entry); the paragraph's other lines stay paragraphs. `urls`: the
    links made, which the link rewriting keeps as they are (they are the wiki's own pages)."""

    def __init__(self) -> None:
        super().__init__()
        self.symbol: LinkResolver | None = None
        self.urls: set[str] = set()

    def run(self, root: Any) -> None:
        from markdown.util import AtomicString

        for parent in list(root.iter()):
            for index in range(len(parent) - 1, -1, -1):
                p = parent[index]
                if p.tag != "p" or len(p) or ":::" not in (p.text or ""):
                    continue
                parts = self._split(p.text)
                if len(parts) == 1 and not parts[0][0]:
                    continue
                parent.remove(p)
                for offset, (name, body) in enumerate(parts):
                    made = parent.makeelement("p", {"class": "sb-autodoc"} if name else {})
                    if name:
                        code = made.makeelement("code", {})
                        code.text = AtomicString(name)
                        url = self.symbol(name) if self.symbol is not None else None
                        if url:
                            url = re.sub(r"\.md(?=$|#)", ".html", url)
                            self.urls.add(url)
                            link = made.makeelement("a", {"href": url})
                            link.append(code)
                            made.append(link)
                        else:
                            made.append(code)
                    else:
                        made.text = body
                    parent.insert(index + offset, made)

    @staticmethod
    def _split(text: str) -> list[tuple[str, str]]:
        """(directive name, "") for each directive, ("", text) for the lines between them."""
        out: list[tuple[str, str]] = []
        lines: list[str] = []
        indent = -1  # while >= 0: skipping the option lines of a directive indented this much
        for line in text.split("\n"):
            width = len(line) - len(line.lstrip(" \t"))
            if indent >= 0 and line.strip() and width > indent:
                continue
            indent = -1
            found = _AUTODOC_LINE.match(line)
            if found is None:
                lines.append(line)
                continue
            if any(x.strip() for x in lines):
                out.append(("", "\n".join(lines).strip("\n")))
            lines = []
            out.append((found.group(2), ""))
            indent = len(found.group(1))
        if any(x.strip() for x in lines) or not out:
            out.append(("", "\n".join(lines).strip("\n")))
        return out


# GitHub's alerts (`> [!NOTE]` opening a quote) and the admonition Material styles for each
_ALERTS = {"note": "note", "tip": "tip", "important": "info", "warning": "warning", "caution": "danger"}
_ALERT = re.compile(r"\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\][ \t]*\n?", re.I)


class _GitHubAlerts(Treeprocessor):
    """A quote opened by `[!NOTE]` (`[!TIP]`, `[!WARNING]`...) becomes an admonition, as GitHub shows it."""

    def run(self, root: Any) -> None:
        for quote in root.iter("blockquote"):
            first = quote[0] if len(quote) else None
            found = _ALERT.match(first.text or "") if first is not None and first.tag == "p" else None
            if first is None or found is None:
                continue
            kind = found.group(1).lower()
            first.text = first.text[found.end():]
            if not first.text.strip() and not len(first):
                quote.remove(first)
            quote.tag = "div"
            quote.set("class", f"admonition {_ALERTS[kind]}")
            title = quote.makeelement("p", {"class": "admonition-title"})
            title.text = kind.capitalize()
            quote.insert(0, title)


class _NestedLists(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        return nest_lists(lines)


class _Details(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        return details_blocks(lines)


_DETAILS_OPEN = re.compile(r"^( *)<details(\s+[^>]*)?>(.*)$", re.I)
_DETAILS_CLOSE = re.compile(r"</details\s*>", re.I)
_SUMMARY = re.compile(r"^\s*<summary(?:\s[^>]*)?>(.*?)</summary\s*>(.*)$", re.I | re.S)
_CODE_TAG = re.compile(r"<code(?:\s[^>]*)?>(.*?)</code\s*>", re.I | re.S)
_ANY_TAG = re.compile(r"<[^>]*>")
_SUMMARY_LINES = 5  # a `<summary>` written over a few lines; one further down is the body's own


def details_blocks(lines: list[str]) -> list[str]:
    """`<details><summary>T</summary> … </details>` -> pymdownx.details' `??? note "T"` with the body
    indented under it (`???+` when `open`). GitHub renders the Markdown of a body set off by blank lines;
    Python-Markdown would keep the whole block as raw HTML, its `**bold**` and backticks shown as typed. A
    block nests in another's body; one with no closing tag, in fenced code, or indented as code stays as it
    is. The summary is untrusted: its tags go (`<code>` becomes a code span), and `"`, `<` and `&` are
    written as entities, so it can neither end the title nor open HTML."""
    out: list[str] = []
    fence = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = ""
            out.append(line)
            i += 1
            continue
        opens = _FENCE_OPEN.match(line)
        if opens:
            fence = opens.group(2)[0] * len(opens.group(2))
            out.append(line)
            i += 1
            continue
        found = _DETAILS_OPEN.match(line)
        level = _details_level(lines, i, found) if found else -1
        end = _details_end(lines, i) if level >= 0 else None
        if found is None or end is None:
            out.append(line)
            i += 1
            continue
        # the block's text between its tags: the opening line's rest, the lines between, the closing
        # line's head
        tail_line = lines[end]
        close = list(_DETAILS_CLOSE.finditer(tail_line))[-1] if end > i else None
        first = found.group(3)
        if end == i:
            close = list(_DETAILS_CLOSE.finditer(first))[-1]
            first = first[:close.start()]
        inner = [first] + lines[i + 1:end] + ([tail_line[:close.start()]] if close and end > i else [])
        title, body = _summary(inner)
        head = "???+" if re.search(r"\bopen\b", found.group(2) or "", re.I) else "???"
        if out and out[-1].strip():
            out.append("")
        out.append(" " * level + f'{head} note "{title}"' if title else " " * level + f"{head} note")
        for text in details_blocks(_dedent(body, level)):
            out.append(" " * (level + 4) + text if text.strip() else "")
        out.append("")
        after = (tail_line[close.end():] if end > i and close else "").strip()
        if after:
            out.append(" " * level + after)
        i = end + 1
    return out


def _details_level(lines: list[str], i: int, found: re.Match[str]) -> int:
    """The column a `<details>` block's `???` goes at: the margin, or a list item's content column (lists are
    nested by four by then); -1 when the line is indented code, not a block."""
    indent = len(found.group(1))
    if indent < 4:
        return 0
    for back in range(i - 1, -1, -1):
        prev = lines[back]
        width = len(prev) - len(prev.lstrip(" "))
        if prev.strip() and width < indent:
            marker = _LIST_MARKER.match(prev)
            return width + 4 if marker and indent >= width + 4 else -1
    return -1


def _details_end(lines: list[str], i: int) -> int | None:
    """The index of the line closing the `<details>` opened on line i (nested blocks counted, fenced code
    skipped), or None when it is never closed."""
    depth, fence = 0, ""
    for j in range(i, len(lines)):
        line = lines[j]
        stripped = line.strip()
        if fence:
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = ""
            continue
        opens = _FENCE_OPEN.match(line)
        if opens and j > i:
            fence = opens.group(2)[0] * len(opens.group(2))
            continue
        for tag in re.finditer(r"<(/?)details\b", line, re.I):
            depth += -1 if tag.group(1) else 1
            if depth == 0:
                return j
    return None


def _summary(inner: list[str]) -> tuple[str, list[str]]:
    """The escaped title of a details block's `<summary>` (when it opens the block) and the body's lines."""
    lead = 0
    while lead < len(inner) and not inner[lead].strip():
        lead += 1
    for stop in range(lead, min(len(inner), lead + _SUMMARY_LINES)):
        joined = "\n".join(inner[lead:stop + 1])
        found = _SUMMARY.match(joined)
        if found:
            rest = [found.group(2)] if found.group(2).strip() else []
            return _title(found.group(1)), rest + inner[stop + 1:]
        if "</summary" in joined.lower():
            break
    return "", inner


def _title(summary: str) -> str:
    words = _CODE_TAG.sub(lambda m: "`" + html.unescape(_ANY_TAG.sub("", m.group(1))) + "`", summary)
    words = " ".join(html.unescape(_ANY_TAG.sub("", words)).split())
    return words.replace("&", "&amp;").replace("<", "&lt;").replace('"', "&quot;")


def _dedent(body: list[str], level: int) -> list[str]:
    """A body's lines with the block's own indentation taken off (up to `level` columns)."""
    out = []
    for line in body:
        width = len(line) - len(line.lstrip(" "))
        out.append(line[min(width, level):])
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


def nest_lists(lines: list[str]) -> list[str]:
    """List items nested by two (or three) spaces, as GitHub reads them, re-indented by four per level as
    Python-Markdown needs (it would flatten `- a` / `  - b` into one list); lines of an item's text and
    fenced code move with their item. Text outside lists, and lists already indented by four, keep their
    indentation."""
    out: list[str] = []
    items: list[tuple[int, int, int]] = []  # open items: (indent, new indent, content column)
    fence, shift, blank_before = "", 0, True
    in_paragraph = False  # the last line was a paragraph's text
    for line in lines:
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        if fence:  # inside fenced code: moved as its opening line was, closed by the same fence
            out.append(" " * max(0, indent + shift) + stripped if stripped else line)
            if stripped.startswith(fence) and not stripped.strip(fence[0]).strip():
                fence = ""
                if items:
                    out.append("")  # Python-Markdown reads a next item right after the fence as its text
                    blank_before = True
            continue
        if not stripped:
            out.append(line)
            blank_before = True
            continue
        marker = _LIST_MARKER.match(line)
        opens = _FENCE_OPEN.match(line)
        if marker and not items and not blank_before and in_paragraph and indent < 4 and \
                _interrupts(marker, stripped):
            # GitHub (CommonMark) opens a list right under a paragraph line ("Learn more:" / "* Docs:
            # ..."); Python-Markdown needs a blank line first, or the items run on as the paragraph's text
            out.append("")
            blank_before = True
        in_paragraph = False
        if marker and (items or (indent < 4 and blank_before)) and not _is_rule(stripped):
            while items and indent < items[-1][2]:
                items.pop()
            new = items[-1][1] + 4 if items else 0
            items.append((indent, new, indent + len(marker.group(2)) + min(len(marker.group(3)) or 1, 4)))
            out.append(" " * new + stripped)
        elif items and indent:
            # a line of an item's text: under the deepest item it is indented to, four spaces in (and what
            # is indented further, such as an indented code block, as much further)
            while len(items) > 1 and indent < items[-1][2]:
                items.pop()
            owner = items[-1]
            new = owner[1] + 4 + indent - owner[2] if indent >= owner[2] else indent
            out.append(" " * new + stripped)
            if opens:
                fence, shift = opens.group(2)[0] * len(opens.group(2)), new - indent
                out[-1] = _plain_fence(out[-1], opens)
        else:
            if blank_before:
                items.clear()  # text at the margin after a blank line ends the list
            out.append(line)
            if opens:
                fence, shift = opens.group(2)[0] * len(opens.group(2)), 0
                out[-1] = _plain_fence(out[-1], opens)
            else:
                in_paragraph = not items and not _BLOCK_LINE.match(stripped)
        blank_before = False
    return out


_FENCE_LANG = re.compile(r"[{.\s]*([\w#+-]*)")


def _plain_fence(line: str, opens: re.Match[str]) -> str:
    """A fence's opening line with its language only: superfences takes no other info string, and
    GitHub's `rust,no_run` or `rust ignore` (rustdoc's) would leave the fence as text."""
    head = line[:len(line) - len(line.lstrip(" "))] + opens.group(2)
    info = line.lstrip(" ")[len(opens.group(2)):]
    if opens.group(2)[0] == "`" and "`" in info:
        return line  # not a fence: an inline code span at a line's start (```x``` y)
    m = _FENCE_LANG.match(info)
    return head + (m.group(1) if m else "")


# a line that is a block of its own, not a paragraph's text: a list after it needs no blank line inserted
_BLOCK_LINE = re.compile(r"^(?:<|\||#{1,6}(?:\s|$)|>)")


def _interrupts(marker: re.Match[str], stripped: str) -> bool:
    """Whether a list item may open a list right after a paragraph line (CommonMark's rule): it has text,
    is no rule (`- - -`), and an ordered one starts at 1 (`2019. was a year` stays prose)."""
    text = stripped[len(marker.group(2)):].strip()
    if not text or _is_rule(stripped):
        return False
    return not marker.group(2)[0].isdigit() or marker.group(2) == "1."


def _is_rule(text: str) -> bool:
    """`- - -` / `* * *`: a horizontal rule, not a list item."""
    return len(text.replace(" ", "")) >= 3 and len(set(text.replace(" ", ""))) == 1


def _attrs(text: str) -> dict[str, str]:
    return {name.lower(): html.unescape(value or "") for name, value in _ATTR.findall(text)}


def _rewrite_tags(clean: str, resolve: LinkResolver, ids: set[str], own: set[str] | None = None) -> str:
    """Links through the resolver, images to words or links; on sanitized HTML, where `<a>` never nests.
    `own`: URLs of the wiki's symbol sections the renderer made, kept as they are."""
    state = {"in_link": False, "kept": False}

    def one(m: re.Match[str]) -> str:
        closing, tag, attrs = m.group(1), m.group(2), _attrs(m.group(3))
        if tag == "a":
            if closing:
                kept, state["in_link"], state["kept"] = state["kept"], False, False
                return "</a>" if kept else ""
            href = attrs.get("href", "") if attrs.get("href") in (own or ()) else \
                _link_target(attrs.get("href", ""), resolve, ids) if "href" in attrs else None
            state["in_link"], state["kept"] = True, href is not None
            if href is None:
                return ""  # its words stay; a raw `<a name=...>` anchor goes with it (rare, and nothing
                # on the page would link to it)
            extra = "".join(f' {k}="{html.escape(attrs[k])}"' for k in ("id", "title", "class") if k in attrs)
            return f'<a href="{html.escape(href)}"{extra}>'
        if closing:
            return ""
        return _image(attrs, state["in_link"], resolve)

    return _EMPTY_LINK.sub("", _TAG.sub(one, clean))


def _image(attrs: dict[str, str], in_link: bool, resolve: LinkResolver) -> str:
    alt = " ".join(attrs.get("alt", "").split())
    if in_link:
        return html.escape(alt)  # a badge: its link stays, labelled by the alt text
    src = attrs.get("src", "")
    scheme = urlsplit(src).scheme.lower() if src else ""
    if scheme in ("http", "https"):
        # a remote image with words becomes a link to it; a wordless one (a centred logo) goes
        return f'<a href="{html.escape(src)}" class="sb-image-link">{html.escape(alt)}</a>' if alt else ""
    target = _link_target(src, resolve, set()) if src and not scheme else None
    if target is not None:  # a repository file with a page of its own
        label = alt or src.rsplit("/", 1)[-1]
        return f'<a href="{html.escape(target)}" class="sb-image-link">{html.escape(label)}</a>'
    return html.escape(alt)


def _link_target(uri: str, resolve: LinkResolver, ids: set[str]) -> str | None:
    """A link's URL on the page, or None to drop it (keeping its words)."""
    if not uri.startswith("#"):
        return link_target(uri, resolve)
    fragment = uri[1:]
    # GitHub's heading anchors (`#install`) name the prefixed ids Markdown gave the headings
    repeat = re.fullmatch(r"(.+)-(\d+)", fragment.lower())  # GitHub's `usage-1` is toc's `usage_1`
    for candidate in (fragment, ID_PREFIX + fragment, ID_PREFIX + fragment.lower(),
                      *([f"{ID_PREFIX}{repeat.group(1)}_{repeat.group(2)}"] if repeat else [])):
        if candidate in ids:
            return "#" + candidate
    return None


# -- GitHub's heading anchors --------------------------------------------------------------------------------

_ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_SLUG_DROP = re.compile(r"[^\w\- ]")
_INLINE_MARKUP = re.compile(r"!?\[([^\[\]]*)\]\([^()]*\)|<[^<>]+>|`")
_EMPHASIS = re.compile(r"(?<![\w*])(\*{1,3}|_{1,3})(?=\S)(.+?)(?<=\S)\1(?![\w*])")
_FRAGMENT_LINK = re.compile(r"\]\(#([^()\s]+)\)")


def github_slug(heading: str) -> str:
    """The id GitHub gives a heading: its words lower-cased, punctuation but `-` and `_` dropped, each space
    a `-` (`Node options such as --harmony` -> `node-options-such-as---harmony`: hyphens are not merged)."""
    # emphasis marks go (GitHub slugs the rendered words: `Declaring _program_ variable` ->
    # `declaring-program-variable`), outside code spans only (`` `__init__` `` keeps its underscores)
    heading = "".join(piece if piece.startswith("`") else _EMPHASIS.sub(r"\2", piece)
                      for piece in re.split(r"(`+[^`]*`+)", heading))
    text = _INLINE_MARKUP.sub(lambda m: m.group(1) or "", heading).strip().lower()
    return _SLUG_DROP.sub("", text).replace(" ", "-")


def _outside_fences(lines: list[str]) -> Iterator[tuple[int, str]]:
    """(index, line) of the lines outside fenced code blocks (the fences' own lines excluded)."""
    fence = ""
    for i, line in enumerate(lines):
        opens = _FENCE_OPEN.match(line)
        if fence:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = ""
            continue
        if opens:
            fence = opens.group(2)
            continue
        yield i, line


def _atx_headings(lines: list[str]) -> list[tuple[int, str]]:
    """(line index, heading text) of the ATX headings outside fenced code."""
    found: list[tuple[int, str]] = []
    for i, line in _outside_fences(lines):
        m = _ATX_HEADING.match(line)
        if m:
            found.append((i, m.group(2)))
    return found


_OWN_ATTRIBUTES = re.compile(r"\{[^{}\n]*\}[ \t#]*$")


def github_anchors(part: str, whole: str, shown: str | None = None) -> str:
    """`part` of a README (`whole`, or its tail from a heading on) with its ATX headings given the ids GitHub
    gives them, prefixed `md-` (`{ #md-usage-1 }`, for the site's attr_list: never the page's own ids), and
    its `(#usage-1)` links pointed at the headings of `shown` (the tail of `whole` the page shows; default
    `part`); a link to a heading of `whole` the page leaves out (the title) goes to the page's top. GitHub
    numbers a repeated heading's id (`usage`, `usage-1`); Python-Markdown's toc would write `usage_1`, and
    merges hyphens, so a README's own table of contents broke."""
    slugs: list[str] = []
    seen: dict[str, int] = {}
    for _, text in _atx_headings(whole.split("\n")):
        base = github_slug(text)
        n = seen.get(base, 0)
        seen[base] = n + 1
        slugs.append(base if n == 0 else f"{base}-{n}")

    def tail(text: str) -> list[str]:
        count = len(_atx_headings(text.split("\n")))
        return slugs[len(slugs) - count:] if 0 < count <= len(slugs) else []

    lines = part.split("\n")
    for (i, _), slug in zip(_atx_headings(lines), tail(part), strict=False):
        # a heading ending in its own `{ ... }` keeps it alone: attr_list reads one list, from the first `{`
        # to the end, so ours after it would leave both on the page as text (the sanitizer cleans theirs)
        if slug and not _OWN_ATTRIBUTES.search(lines[i]):
            # `_` escaped: the site's Markdown reads inline markup before attr_list takes the id, and
            # `#md-the-__init__-file` would lose its underscores to bold
            lines[i] = f"{lines[i].rstrip()} {{ #{ID_PREFIX}{slug.replace('_', chr(92) + '_')} }}"
    on_page, known = set(tail(part if shown is None else shown)), set(slugs)

    def target(m: re.Match[str]) -> str:
        fragment = m.group(1).lower()
        if fragment in on_page:
            return f"](#{ID_PREFIX}{fragment})"
        return "](#)" if fragment in known else m.group(0)

    for i, line in _outside_fences(lines):
        if "](#" in line:
            # outside code spans only: `[x](#y)` inside backticks is an example
            pieces = re.split(r"(`+[^`]*`+)", line)
            lines[i] = "".join(piece if piece.startswith("`") else _FRAGMENT_LINK.sub(target, piece)
                               for piece in pieces)
    return "\n".join(lines)
