"""Where a symbol's section lives: its anchor id on its file page, and a link to it from any page.

The one place that decides the anchor scheme: templates, the overview, module pages and docstring
cross-references all link to symbols through these functions, so the scheme can change in one place.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import quote

from generator.analyze.facts import FileFacts, Symbol


def symbol_anchor(qualname: str) -> str:
    """The base anchor id of a symbol's section: `Flask.route` -> `sym-flask-route`.

    Letters, digits and '-' only: an '_' run would be read as emphasis inside a heading's `{ #id }`, and any
    other character would need escaping in a URL fragment.
    """
    return "sym-" + (re.sub(r"[^A-Za-z0-9]+", "-", qualname).strip("-").lower() or "x")


_VARIANT = re.compile(r"~\d+(?=\.|$)")


def shown_qualname(qualname: str) -> str:
    """The qualname a reader sees: parse.py's `~2`, `~3` (overloads, setters, conditional definitions of
    one name) keep qualnames and anchors unique but are no part of the name (`C.timeout~2` -> `C.timeout`)."""
    return _VARIANT.sub("", qualname) if "~" in qualname else qualname


# Go's unexported functions, methods and types are most of a package's code (a file of 15 functions may
# export 4): a reader following a call link or reading the file wants them, so they get sections too.
_UNEXPORTED_SECTIONED = {"go": frozenset({"function", "method", "struct", "interface", "type"})}


def has_section(s: Symbol, language: str | None) -> bool:
    """Whether a symbol gets a section on its file page (and so can be linked to): public ones, and in
    the languages above the unexported definitions of the kinds listed."""
    return s.public or s.kind in _UNEXPORTED_SECTIONED.get(language or "", ())


def anchor_ids(symbols: Iterable[Symbol]) -> dict[str, str]:
    """qualname -> a unique anchor id for its section on the file page.

    Collisions (`a_b` and `a.b`, `Foo` and `foo`) get `-2`, `-3`... in source order, so an anchor does not
    move when the graph ranks a file's symbols differently.
    """
    out: dict[str, str] = {}
    used: set[str] = set()
    for s in sorted(symbols, key=lambda s: (s.start_line, s.qualname)):
        if s.qualname in out:
            continue
        base = symbol_anchor(s.qualname)
        anchor, n = base, 1
        while anchor in used:
            n += 1
            anchor = f"{base}-{n}"
        used.add(anchor)
        out[s.qualname] = anchor
    return out


def page_href(from_page: str, to_page: str) -> str:
    """A relative URL from one docs-relative page id (`files/src/a.py.md`) to another, percent-encoded."""
    rel = posixpath.relpath(to_page, posixpath.dirname(from_page) or ".")
    return quote(rel, safe="/._-~")


def symbol_href(from_page: str, to_page: str, anchor: str) -> str:
    """A link from `from_page` to section `anchor` (from anchor_ids) of `to_page`; same page: `#anchor`."""
    if from_page == to_page:
        return f"#{anchor}"
    return f"{page_href(from_page, to_page)}#{anchor}"


@dataclass(frozen=True)
class SymbolIndex:
    """Every symbol with a section on its file page, repository-wide: links from any page to any symbol."""

    pages: Mapping[str, str]  # source path -> file page id
    anchors: Mapping[tuple[str, str], str]  # (path, qualname) -> anchor id, for symbols with a section

    @classmethod
    def build(cls, facts: Iterable[FileFacts], pages: Mapping[str, str]) -> SymbolIndex:
        anchors: dict[tuple[str, str], str] = {}
        for f in facts:
            ids = anchor_ids(f.symbols)
            language = f.file.language
            anchors.update({(f.path, s.qualname): ids[s.qualname] for s in f.symbols
                            if has_section(s, language)})
        return cls(pages=pages, anchors=anchors)

    def href(self, from_page: str, path: str, qualname: str = "") -> str | None:
        """A relative link to the symbol's section (to the file's page for qualname ""), or None: a symbol
        without a section (private, unexported) is not linked to the top of its page, where nothing of it
        shows."""
        page = self.pages.get(path)
        if page is None:
            return None
        if not qualname:
            return page_href(from_page, page)
        anchor = self.anchors.get((path, qualname))
        return symbol_href(from_page, page, anchor) if anchor else None
