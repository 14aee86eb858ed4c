"""Rendered HTML -> HTML that cannot run script: the last of the site's two sanitizers.

`render.sanitize_markdown` escapes what a repository or a writer puts into the Markdown; this module then
cleans the HTML that Markdown (and every extension: attr_list, tables, superfences, ...) made of it, with an
allowlist (nh3, i.e. ammonia): an attribute list, a raw-HTML trick or a future extension the Markdown pass
does not know can add an `onerror`, a `javascript:` link or a fixed-position overlay to the Markdown, but not
to the page. The MkDocs hook (generator/site/hooks/mkdocs_hooks.py) runs `sanitize_content` on every page's
content and
`audit_page` on every finished page.

The allowlist is what Material styles in page content (headings with ids and permalinks, admonitions,
details, tables, Pygments' highlight spans, mermaid blocks) and nothing that acts: no event handlers, no
forms, frames, embeds, scripts or styles, no URL schemes but http(s) and mailto, `style` only as table
cell alignment, and no class of the theme's own components (`md-...`: some are fixed over the window).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urlsplit

import nh3

TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "caption", "cite", "code", "col", "colgroup", "dd", "del",
    "details", "dfn", "div", "dl", "dt", "em", "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6",
    "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "q", "s", "samp", "small", "span",
    "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "time", "tr", "u",
    "ul", "var", "wbr",
    # only for the wiki's own wrapper of a rendered document (templates/file.md.j2), never inside a document
    # (DOCUMENT_TAGS): Material's search parser tracks its excluded elements by tag name, so any element of
    # the wrapper's tag closing inside it ended the exclusion, and then `mkdocs build` failed ("'<li>' is not
    # in list") on a list item it had not seen open; a <div> wrapper met the first code block's <div>.
    "section",
})
DOCUMENT_TAGS = TAGS - {"section"}
ATTRIBUTES = {
    "*": {"class", "id", "title", "lang", "dir"},
    "a": {"href", "name"},
    "img": {"src", "alt", "width", "height", "loading"},
    "ol": {"start", "reversed", "type"},
    "details": {"open"},
    "td": {"align", "colspan", "rowspan", "style"},
    "th": {"align", "colspan", "rowspan", "scope", "style"},
    "col": {"span"},
    "colgroup": {"span"},
    "blockquote": {"cite"},
    "q": {"cite"},
    "time": {"datetime"},
}
URL_SCHEMES = frozenset({"http", "https", "mailto"})
# Python-Markdown's tables write alignment as `style="text-align: …"`; no other property survives, so no
# `position`, `inset`, `z-index` or `background: url(…)` overlay can reach a page.
STYLE_PROPERTIES = frozenset({"text-align"})


# data-* attributes Material's scripts act on. `data-md-*` marks its components; any element with
# `data-clipboard-text` becomes a copy button that puts that text, not the text shown, on the clipboard.
THEME_DATA_ATTRIBUTES = ("data-md", "data-clipboard", "data-copy", "data-preview", "data-tabs")


# Material's own components are styled by `md-` classes, and some of them are fixed to the viewport over
# the page: `md-consent__overlay` (a full-window layer), `md-dialog`, `md-overlay`, `md-top`,
# `md-search__inner`... Content never needs one (Material's scripts add the few content classes, such as
# `md-typeset__table`, in the browser); a class attribute could otherwise draw a window-wide link or a fake
# dialog: the overlay that the style rule (STYLE_PROPERTIES) keeps out.
THEME_CLASS_PREFIX = "md-"


def _attribute_filter(element: str, attribute: str, value: str) -> str | None:
    # Material finds its own parts by id (`__config` holds its JSON settings, `__search`, `__drawer` ...):
    # content that claimed one could shadow the theme's element.
    if attribute in {"id", "name"} and value.startswith("__"):
        return None
    if attribute.startswith(THEME_DATA_ATTRIBUTES):
        return None
    if attribute == "class" and THEME_CLASS_PREFIX in value.lower():
        kept = [c for c in value.split() if not c.lower().startswith(THEME_CLASS_PREFIX)]
        return " ".join(kept) or None
    return value


# Where _attribute_filter could drop anything: a theme data attribute's name, an id/name value that may
# start with `_`, `md-` anywhere (a theme class), or a class value holding a character reference (which can
# spell one). Without any, every attribute keeps its value, and nh3 runs without calling back into Python
# for each attribute (a quarter of its time).
_FILTERED = re.compile(r"data-(?:md|clipboard|copy|preview|tabs)|(?:id|name)\s*=\s*[\"']?[_&]|md-"
                       r"|class\s*=\s*[\"']?[^\"'>]*&", re.I)


def sanitize_content(html: str) -> str:
    """A page's rendered content, cleaned to the allowlist (idempotent; harmless markup passes unchanged
    but for serialisation details such as `<br />` -> `<br>`)."""
    return guard_diagrams(nh3.clean(
        html, tags=set(TAGS), attributes={k: set(v) for k, v in ATTRIBUTES.items()},
        generic_attribute_prefixes={"data-"},
        attribute_filter=_attribute_filter if _FILTERED.search(html) else None,
        url_schemes=set(URL_SCHEMES), filter_style_properties=set(STYLE_PROPERTIES),
        link_rel=None,  # the theme script sets rel on external links; keep the markup as Markdown wrote it
        strip_comments=True))


def _document_attribute_filter(element: str, attribute: str, value: str) -> str | None:
    if attribute == "class" and "mermaid" in value.lower():
        kept = [c for c in value.split() if "mermaid" not in c.lower()]
        value = " ".join(kept)
        if not value:
            return None
    return _attribute_filter(element, attribute, value)


def sanitize_document(html: str) -> str:
    """A repository's document (README, reST) rendered to HTML, cleaned as `sanitize_content` does and with
    no `mermaid` class: Mermaid draws every `.mermaid` element, `%%{init: {"themeCSS": …}}%%` directives
    included (a full-window fake sign-in box), so only the wiki's own diagrams may carry it."""
    return nh3.clean(
        html, tags=set(DOCUMENT_TAGS), attributes={k: set(v) for k, v in ATTRIBUTES.items()},
        generic_attribute_prefixes={"data-"},
        attribute_filter=_document_attribute_filter,
        url_schemes=set(URL_SCHEMES), filter_style_properties=set(STYLE_PROPERTIES),
        link_rel=None, strip_comments=True)


# A diagram block as the mermaid fence writes it. One holding a directive (`%%`) or a click other than a
# link to a relative page URL is shown as code: the final guard (the wiki's own diagrams have neither; their
# labels write % as an entity code)
_MERMAID_BLOCK = re.compile(r'<pre class="mermaid">(?P<body>.*?)</pre>', re.S)
_TAG = re.compile(r"<[^>]*>")
_SAFE_CLICK = re.compile(r'click\s+\w+\s+href\s+(?:"|&quot;)(?![a-zA-Z][a-zA-Z0-9+.-]*:|/)'
                         r'[^"&<>\s]*(?:"|&quot;)')


def _diagram_acts(body: str) -> bool:
    if "%%" in body:
        return True
    lines = (_TAG.sub("", line).strip() for line in body.split("\n") if "click" in line.lower())
    return any(line.lower().startswith("click") and not _SAFE_CLICK.fullmatch(line) for line in lines)


def guard_diagrams(html: str) -> str:
    """`html` with every Mermaid block that could act (a directive, a click that is not a relative link)
    turned into a plain code block."""
    if 'class="mermaid"' not in html:
        return html
    return _MERMAID_BLOCK.sub(lambda m: f"<pre>{m.group('body')}</pre>" if _diagram_acts(m.group("body"))
                              else m.group(0), html)


def sanitize_inline(html: str) -> str:
    """A title shown outside the content (table of contents, page title): inline text markup only."""
    return nh3.clean(html, tags={"code", "em", "strong", "b", "i", "span"}, attributes={}, link_rel=None)


# -- the audit of a finished page ------------------------------------------------------------------------

URL_ATTRIBUTES = frozenset({"href", "src", "action", "formaction", "xlink:href", "poster", "background",
                            "cite", "data", "srcset"})
_BAD_SCHEMES = frozenset({"javascript", "vbscript", "data"})
_HANDLER = re.compile(r"on[a-z]+")  # event handler attribute names are letters only
_POSITION = re.compile(r"(^|;)\s*(position|inset|top|left|z-index)\s*:", re.I)
# what a theme's inline <script> may be: settings data, never code (Material's inline code scripts are
# replaced by files in site/partials/javascripts/, so a strict Content-Security-Policy needs no hashes)
_DATA_SCRIPT_TYPES = frozenset({"application/json"})
_TEXT_ONLY = frozenset({"title", "textarea"})


class _Auditor(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _TEXT_ONLY:
            # a browser reads <title>/<textarea> content as text, tags and all (Material's <title> prints
            # a file name such as `<img onerror=…>.py` unescaped there, inertly); so must the audit
            self.set_cdata_mode(tag)
        where = f"<{tag}>"
        for raw_name, value in attrs:
            name, text = raw_name.lower(), value or ""
            if _HANDLER.fullmatch(name) and value:
                self.problems.append(f"{where} has an event handler attribute `{name}`")
            elif name in URL_ATTRIBUTES and _scheme(text) in _BAD_SCHEMES:
                self.problems.append(f"{where} {name} uses the {_scheme(text)}: scheme")
            elif name == "style" and _POSITION.search(text):
                self.problems.append(f"{where} has a positioning style")
        if tag in {"iframe", "frame", "object", "embed", "base"}:
            self.problems.append(f"{where} is not allowed in a page")
        if tag == "script":
            kinds = {k: (v or "") for k, v in attrs}
            if "src" not in kinds and kinds.get("type", "").lower() not in _DATA_SCRIPT_TYPES:
                self.problems.append("an inline <script> with code")


def _scheme(url: str) -> str:
    # browsers drop ASCII tab/newline and leading/trailing whitespace and control characters from URLs
    cleaned = re.sub(r"[\x00-\x20]", "", url)
    try:
        return urlsplit(cleaned).scheme.lower()
    except ValueError:
        return ""


# A cheap look for anything the parser below could object to (and some it will not); the parser, pure
# Python and far slower a page, then runs only where it found something. Each check covers
# one rule of _Auditor, on the lowercased page:
# an event handler, or a style to look into, after a character that can precede an attribute name (matched
# with it: a pattern opening with a character set lets the regex engine skip ahead, a lookbehind does not)
_ATTRIBUTE = re.compile(r"[ \t\n\r\f/\"'`](?:on[a-z]+|style)\s*=")
# a character reference is how a scheme hides from the plain-text check below; the five escapes cannot
_REFERENCE = re.compile(r"&(?!amp;|lt;|gt;|quot;|#x27;|#39;)(?:#(x[0-9a-f]+|[0-9]+))?")
# any <script> but the theme's own forms: a file, or Material's JSON settings
_SCRIPT = re.compile(r'<script\b(?!\s+src="[^"<>]*"(?:\s+data-scope="[^"<>]*")?>)'
                     r'(?!\s+id="__config"\s+type="application/json">)')
_BAD_TAGS = ("<iframe", "<frame", "<object", "<embed", "<base")
_CONTROL = dict.fromkeys(range(0x21))  # browsers drop these inside a URL's scheme; so does the check


def _may_spell_a_scheme(number: str | None) -> bool:
    """Whether a character reference (`&#95;` -> "95", `&#x5f;` -> "x5f"; None for a named one such as
    `&colon;` or a bare `&`) can stand for a character of a URL scheme, its colon, or one browsers drop."""
    if number is None:
        return True
    code = int(number[1:], 16) if number.startswith("x") else int(number)
    char = chr(code) if code < 0x110000 else ""
    return code <= 0x20 or char.isalnum() or char in "+-.:"


def _suspect(html: str) -> bool:
    low = html.lower()
    if _ATTRIBUTE.search(low):
        return True
    if any(_may_spell_a_scheme(m.group(1)) for m in _REFERENCE.finditer(low)):
        return True
    if _SCRIPT.search(low) or any(tag in low for tag in _BAD_TAGS):
        return True
    flat = low.translate(_CONTROL)
    return any(f"{scheme}:" in flat for scheme in _BAD_SCHEMES)


def audit_page(html: str, *, clean_part: str = "") -> list[str]:
    """What in a finished page (theme and content together) could run script: event handler attributes,
    javascript:/data:/vbscript: URLs, positioning styles, inline code scripts, frames, embeds, <base>.
    An empty list is a clean page. `clean_part`: a part of `html` that already went through
    `sanitize_content` (the page's content); it is not searched again."""
    rest = html.replace(clean_part, "", 1) if clean_part else html
    if not _suspect(rest):
        return []
    auditor = _Auditor()
    auditor.feed(rest)
    auditor.close()
    return list(dict.fromkeys(auditor.problems))
