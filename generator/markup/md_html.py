"""A repository's Markdown document (README.md, docs/*.md) -> sanitized HTML for its page, offline and inert.

Python-Markdown renders it with a fixed set of extensions that only make structure: tables, fenced code
(highlighted by Pygments, as the site's own code blocks), admonitions, footnotes, strike-through, bare-URL
links, and heading ids (prefixed `md-`, so the page's outline can link to them and they never meet the
page's own ids). No extension that lets the text set attributes (attr_list: `{: onerror=... }` would reach
the HTML) or read files. Two GitHub readings Python-Markdown lacks are added: lists nested by two spaces
nest, and `> [!NOTE]` quotes are admonitions. Raw HTML in the text is left to Markdown and then cleaned by
the site's one HTML sanitizer (html_sanitize); after it, links and images are rewritten on its regular
output: relative links go through a resolver (a wiki page, or the link goes and its words stay),
in-document `#anchors` follow the prefixed heading ids, and an image is never loaded (the site works
offline): in a link (a badge) it becomes its alt text, a remote one a link to it labelled by its alt text
(none: it goes), a local one its words.
"""

from __future__ import annotations

import html
import logging
import re
import threading
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


def render_markdown(text: str, resolve: LinkResolver | None = None, *, heading_level: int = 3) -> str:
    """HTML for a Markdown document's body (headings start at h`heading_level`: the page has its own
    title and section), sanitized. `resolve`: a relative link -> a page's URL (None: the link goes, its
    words stay)."""
    if _QUOTES_TOO_DEEP.search(text):
        return _as_text(text, f"quotes nested over {MAX_QUOTE_DEPTH} deep")
    md = _markdown(heading_level)
    try:
        with cpu_budget():
            raw = md.reset().convert(text)
    except (Exception, RenderBudgetExceeded) as exc:  # noqa: BLE001 -- any failure on untrusted text
        # (RecursionError in nesting; over the CPU budget: generator/markup/doc_budget.py)
        md.reset()
        return _as_text(text, type(exc).__name__)
    clean = sanitize_document(raw)
    ids = set(_ID.findall(clean))
    return sanitize_document(_rewrite_tags(clean, resolve or (lambda _url: None), ids)).strip()


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
                        "pymdownx.superfences", "pymdownx.magiclink", "pymdownx.tilde"],
            extension_configs={
                "toc": {"baselevel": heading_level, "permalink": False,
                        "slugify": lambda value, sep: ID_PREFIX + slugify_unicode(value, sep)},
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
        # before inline parsing (20), while a paragraph's text is still as typed
        made[heading_level].treeprocessors.register(_GitHubAlerts(), "sb_github_alerts", 25)
    return made[heading_level]


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


def nest_lists(lines: list[str]) -> list[str]:
    """List items nested by two (or three) spaces, as GitHub reads them, re-indented by four per level as
    Python-Markdown needs (it would flatten `- a` / `  - b` into one list); lines of an item's text and
    fenced code move with their item. Text outside lists, and lists already indented by four, keep their
    indentation."""
    out: list[str] = []
    items: list[tuple[int, int, int]] = []  # open items: (indent, new indent, content column)
    fence, shift, blank_before = "", 0, True
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
        else:
            if blank_before:
                items.clear()  # text at the margin after a blank line ends the list
            out.append(line)
            if opens:
                fence, shift = opens.group(2)[0] * len(opens.group(2)), 0
        blank_before = False
    return out


def _is_rule(text: str) -> bool:
    """`- - -` / `* * *`: a horizontal rule, not a list item."""
    return len(text.replace(" ", "")) >= 3 and len(set(text.replace(" ", ""))) == 1


def _attrs(text: str) -> dict[str, str]:
    return {name.lower(): html.unescape(value or "") for name, value in _ATTR.findall(text)}


def _rewrite_tags(clean: str, resolve: LinkResolver, ids: set[str]) -> str:
    """Links through the resolver, images to words or links; on sanitized HTML, where `<a>` never nests."""
    state = {"in_link": False, "kept": False}

    def one(m: re.Match[str]) -> str:
        closing, tag, attrs = m.group(1), m.group(2), _attrs(m.group(3))
        if tag == "a":
            if closing:
                kept, state["in_link"], state["kept"] = state["kept"], False, False
                return "</a>" if kept else ""
            href = _link_target(attrs.get("href", ""), resolve, ids) if "href" in attrs else None
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
    for candidate in (fragment, ID_PREFIX + fragment, ID_PREFIX + fragment.lower()):
        if candidate in ids:
            return "#" + candidate
    return None
