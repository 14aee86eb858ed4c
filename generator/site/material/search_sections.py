"""A page's search sections, as Material's search plugin divides it, for a fraction of the CPU.

Material's search plugin reads every page's HTML with `html.parser` (one Python call per tag, ~0.5 µs of
bookkeeping per character position it passes) into sections, one per heading: 18% of a cold site build on
pytest's tree, most of it spent inside `<details data-search-exclude>` source blocks whose text it then
throws away. `sections(html)` gives the same sections (Material's own `Parser` class and handlers decide
everything) from a cheaper reading:

- the page is cut into tags and text by one regular expression (generator/markup/html_tokens.py) instead of
  HTMLParser's character walk; the sanitizer's output always fits it, and any page that does not (a
  comment, `<!`, `<?`, a script or style element, an unquoted attribute, a stray `<`) is read by
  Material's parser itself, as before;
- an element that opens inside an excluded one (`data-search-exclude`, Pygments' `linenodiv`) is skipped
  to its end tag in one step when nothing inside it can change the parser's state: no heading, no tag an
  exclusion is tracked by (Material tracks exclusions by tag name), and tags that close the way the
  parser pops them. Everything inside such an element is dropped by the parser anyway.

tests/integration/test_search_sections.py checks the sections equal Material's own parser's on generated pages
and on the corner cases above.
"""

from __future__ import annotations

import logging
import re
from html import escape, unescape
from typing import Any

from material.plugins.search.plugin import Element, Parser, Section, void

from generator.markup.html_tokens import END, SPAN, START, TEXT, attributes, tokens

log = logging.getLogger(__name__)

_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


def sections(html: str) -> list[Any]:
    """Material's `Parser().feed(html); .close()` sections of `html` (its `.data`), read more cheaply.

    Material's parser raises ValueError ("'<li>' is not in list") on some rendered reST (pytest's
    doctest.rst, sphinx's markdown.rst): a kept element closed in another section than it opened in. Such a
    page gets its sections from the HTML without kept-element tags (headings and text stay searchable)
    instead of failing the whole build."""
    try:
        return _sections(html)
    except ValueError:
        log.info("search sections: a list or paragraph crosses a heading; indexed without its markup")
        return _sections(without_kept_tags(html))


_KEPT_TAG = re.compile(r"</?(?:p|code|pre|li|ol|ul|sub|sup)\b[^>]*>", re.IGNORECASE)


def without_kept_tags(html: str) -> str:
    """`html` without the tags of the elements Material keeps in its search text (the only ones its parser
    looks up again at their end tag, where it can fail)."""
    return _KEPT_TAG.sub(" ", html)


def _sections(html: str) -> list[Any]:
    found = tokens(html)
    if found is None:
        parser = Parser()
        parser.feed(html)
        parser.close()
        return list(parser.data)
    return _Sections(found).data


_KEEP = frozenset({"p", "code", "pre", "li", "ol", "ul", "sub", "sup"})  # Material's Parser.keep
_HX = Element("hx")  # Material's element of a section with no heading (a page's preface)


class _Sections:
    """Material's Parser (material/plugins/search/plugin.py), event for event, over tokens: its context is
    a list of tag names with their attributes beside it, and its skip set the set of tag names it is in
    effect (Material's Element compares and hashes by tag name alone), so each check is a string look-up
    instead of Element comparisons. Quirks kept: an end tag that is not the innermost element's is
    ignored; a section's title collects text while any element of its heading's tag name is open; an
    emptied kept element is dropped from its first opening on."""

    def __init__(self, tokens: list[tuple[Any, ...]]) -> None:
        self.tags: list[str] = []
        self.attrs: list[dict[str, str | None]] = []
        self.skip = {"object", "script", "style"}
        self.data: list[Any] = []
        self.section: Any = None
        i, count = 0, len(tokens)
        while i < count:
            token = tokens[i]
            kind = token[0]
            if kind == TEXT:
                text = token[1]
                self.text(unescape(text) if "&" in text else text)
            elif kind == END:
                self.end(token[1])
            elif kind == SPAN:
                self.span(token[1], token[2])
            else:
                name = token[1]
                self.start(name, dict(attributes(token[2])))
                if token[3]:
                    self.end(name)  # HTMLParser's handle_startendtag: both events
                elif name not in void and self._skipped():
                    i = _skip_end(tokens, i, name, self.skip)
                    continue
            i += 1

    def _skipped(self) -> bool:
        skip = self.skip
        return any(tag in skip for tag in self.tags)

    def _preface(self) -> None:
        self.section = Section(_HX)
        self.data.append(self.section)

    def _target(self) -> list[str]:
        section = self.section
        return section.title if section.el.tag in self.tags else section.text

    def start(self, tag: str, attrs: dict[str, str | None]) -> None:
        if tag in void:
            return
        self.tags.append(tag)
        self.attrs.append(attrs)
        if tag in _HEADINGS and "id" in attrs:
            depth = len(self.tags)
            if tag != "h1" and not self.data:
                self.section = Section(Element("hx"), depth)
                self.data.append(self.section)
            self.section = Section(Element(tag, attrs), depth)
            if self.data:
                self.section.id = attrs["id"]
            self.data.append(self.section)
        if self.section is None:
            self._preface()
        if "data-search-exclude" in attrs or attrs.get("class") == "linenodiv":
            self.skip.add(tag)
            return
        if tag in _KEEP and not self._skipped():
            self._target().append(f"<{tag}>")

    def span(self, text: str, css: str | None) -> None:
        """A `<span>` holding only text: while `span` is not excluded, its start and end change nothing but
        the preface a first tag opens (a span is no heading, kept tag, permalink or `pre`), so only its
        text is handed on."""
        if "span" in self.skip:
            self.start("span", {"class": css} if css is not None else {})
            if text:
                self.text(unescape(text) if "&" in text else text)
            self.end("span")
            return
        if self.section is None:
            self._preface()
        if text:
            self.text(unescape(text) if "&" in text else text)

    def end(self, tag: str) -> None:
        tags = self.tags
        if not tags or tags[-1] != tag:
            return
        section = self.section
        if section.depth > len(tags):
            for previous in reversed(self.data):
                if previous.depth <= len(tags):
                    section.depth = float("inf")
                    self.section = previous
                    break
        tags.pop()
        self.attrs.pop()
        if tag in self.skip:
            if tag not in ("script", "style", "object"):
                self.skip.remove(tag)
            return
        if tag in _KEEP and not self._skipped():
            data = self._target()
            index = data.index(f"<{tag}>")
            for i in range(index + 1, len(data)):
                if not data[i].isspace():
                    index = len(data)
                    break
            if len(data) > index:
                del data[index:]
            else:
                data.append(f"</{tag}>")

    def text(self, data: str) -> None:
        tags = self.tags
        if self._skipped():
            return
        if "pre" not in tags:
            data = data.replace("\n", " ") if not data.isspace() else " "
        if self.section is None:
            self._preface()
        section = self.section
        if section.el.tag in tags:
            pairs = zip(tags, self.attrs, strict=True)
            links = (t == "a" and a.get("class") == "headerlink" for t, a in pairs)
            if not any(links):  # a permalink's text is not part of the title
                section.title.append(escape(data, quote=False))
        elif data.isspace():
            if not section.text or not section.text[-1].isspace() or "pre" in tags:
                section.text.append(data)
        else:
            section.text.append(escape(data, quote=False))


def _skip_end(tokens: list[tuple[Any, ...]], at: int, name: str, skip: set[str]) -> int:
    """Where to continue after the start tag at `at` of an element inside an excluded one: its end tag's
    index (everything between ignored) when nothing between can change the parser's state, else `at + 1`.

    Between them the parser would only push and pop its context (net nothing when the tags close the way
    it pops them: an end tag closes only the innermost open element of its name), drop all text, and add
    and remove exclusions. A heading would open a section, and a tag named like a tracked exclusion would
    remove it early (Material compares elements by tag name): then every token is handed over."""
    tracked = skip
    opened: list[str] = []
    for j in range(at + 1, len(tokens)):
        token = tokens[j]
        kind = token[0]
        if kind == SPAN:
            if "span" in tracked:
                return at + 1
        elif kind == START:
            tag = token[1]
            if tag in _HEADINGS or tag in tracked:
                return at + 1
            if not token[3] and tag not in void:
                opened.append(tag)
        elif kind == END:
            tag = token[1]
            if opened:
                if opened[-1] == tag:
                    opened.pop()
            elif tag == name:
                return j
    return at + 1
