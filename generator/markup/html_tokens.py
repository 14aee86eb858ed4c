"""HTML cut into tags and text by one regular expression, for well-formed HTML only: what html.parser's
events would be, without its character-by-character walk (generator/site/material/search_sections.py, and the
engine's
anchor look-up in raw HTML, generator/site/material/engine.py).

`tokens(html)` is None whenever html.parser could read the text differently from this cut: a comment or
declaration (`<!`), a processing instruction (`<?`), an element whose content is raw text (script, style,
and the RCDATA ones newer Pythons treat alike), an unquoted attribute value, or any `<` that does not open a
tag. Callers then hand the text to html.parser itself. The sanitizer's output (html5ever serialises every
attribute quoted and escapes every `<` in text) always fits.
"""

from __future__ import annotations

import re
from html import unescape
from typing import Any

TEXT, START, END, SPAN = 0, 1, 2, 3

# text | a <span> holding only text (Pygments' markup: one token instead of three) | start tag (quoted
# attribute values only) | end tag | anything else starting with '<' (give up)
_TOKEN = re.compile(
    r"""([^<]+)"""
    r"""|<span(?: class="([^"&]*)")?>([^<]*)</span>"""
    r"""|<([a-zA-Z][-.a-zA-Z0-9:_]*)((?:\s+[^\s/>"'=<]+(?:\s*=\s*(?:"[^"]*"|'[^']*'))?)*)\s*(/?)>"""
    r"""|</([a-zA-Z][-.a-zA-Z0-9:_]*)\s*>"""
    r"""|(<)""")
_ATTR = re.compile(r"""([^\s/>"'=<]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'))?""")
# elements whose content html.parser reads as text, not tags (script, style; some Pythons also these)
RAW_TEXT = frozenset({"script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes",
                      "noscript", "plaintext"})


def tokens(html: str) -> list[tuple[Any, ...]] | None:
    """(TEXT, text) / (START, name, raw attributes, self-closing) / (END, name) per token, names lower-cased
    as html.parser hands them on, and (SPAN, text, class or None) for a `<span>` (at most a class
    attribute) holding only text: a start, a text (when not empty) and an end event; None when html.parser
    must read the text (see the module docstring)."""
    out: list[tuple[Any, ...]] = []
    append = out.append
    for m in _TOKEN.finditer(html):
        text, span_class, span_text, start, attrs, closing, end, other = m.groups()
        if text is not None:
            append((TEXT, text))
        elif span_text is not None:
            if span_class == "linenodiv":  # an exclusion: its consumers want the three events
                append((START, "span", f' class="{span_class}"', False))
                if span_text:
                    append((TEXT, span_text))
                append((END, "span"))
            else:
                append((SPAN, span_text, span_class))
        elif start is not None:
            name = start.lower()
            if name in RAW_TEXT:
                return None
            append((START, name, attrs, bool(closing)))
        elif end is not None:
            append((END, end.lower()))
        else:
            assert other is not None
            return None
    return out


def attributes(raw: str) -> list[tuple[str, str | None]]:
    """A start tag's raw attributes as html.parser hands them on: names lower-cased, values unquoted and
    unescaped, None for a bare name."""
    if not raw:
        return []
    found: list[tuple[str, str | None]] = []
    for m in _ATTR.finditer(raw):
        name, double, single = m.groups()
        value = double if double is not None else single
        if value:
            value = unescape(value)
        found.append((name.lower(), value))
    return found


def anchor_ids(html: str) -> set[str | None] | None:
    """What MkDocs' raw-HTML scan (mkdocs.structure.pages._HTMLHandler) records: every `id` attribute and
    an `<a>`'s `name` (None for a bare one); None when html.parser must read the text."""
    found = tokens(html)
    if found is None:
        return None
    ids: set[str | None] = set()
    for token in found:
        if token[0] == START and token[2]:
            tag = token[1]
            for name, value in attributes(token[2]):
                if name == "id" or (name == "name" and tag == "a"):
                    ids.add(value)
    return ids
