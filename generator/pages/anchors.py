"""Where a symbol's section lives: its anchor id on its file page, and a link to it from any page.

The one place that decides the anchor scheme: templates, the overview, module pages and docstring
cross-references all link to symbols through these functions, so the scheme can change in one place.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import quote

from generator.analyze.facts import FileFacts, Symbol
from generator.analyze.languages import detect_language, spec_for


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


# Unexported functions, methods and types are much of a file's code (a Go file of 15 functions may export
# 4; a C# class's private helpers, a C file's static functions): a reader following a call link, or an
# answer citing their lines, needs them on the page, so they get sections too, marked as not public.
# Constants, variables, fields and macros that are not public stay in the source view only.
_UNEXPORTED_SECTIONED = frozenset({"function", "method", "class", "struct", "interface", "enum", "trait",
                                   "type", "namespace", "module"})


def has_section(s: Symbol, language: str | None) -> bool:
    """Whether a symbol gets a section on its file page (and so can be linked to): public ones, and the
    unexported definitions of the kinds above."""
    return s.public or s.kind in _UNEXPORTED_SECTIONED


def _closing(text: str, start: int) -> int:
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        if c in "([{<":
            depth += 1
        elif c in ")]}>" and not (c == ">" and text[i - 1] == "-"):
            depth -= 1
            if depth == 0:
                return i
    return -1


def _split_top(text: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for c in text:
        if c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


_RECEIVERS = frozenset({"self", "cls", "&self", "&mut self", "mut self", "this"})


def parameter_types(signature: str, name: str) -> list[str]:
    """The types of a callable's parameters as its signature writes them (`fromJson(String json, Class<T>
    c)` -> ["String", "Class<T>"]; `fun f(x: Int)` -> ["Int"]); a parameter without a type gives its name."""
    at = signature.find(name + "(") if name else -1
    start = signature.find("(", at if at >= 0 else 0)
    end = _closing(signature, start) if start >= 0 else -1
    if start < 0 or end < 0:
        return []
    types = []
    for written in _split_top(signature[start + 1:end]):
        if written in _RECEIVERS:  # Python's self, Rust's &self: the same in every overload
            continue
        param = re.sub(r"@\w+(?:\([^)]*\))?\s*|\b(?:final|const|ref|out|in|this|params|readonly|"
                       r"public|private|protected|vararg|mut)\s+|\s*\bconst\b(?=\s*[&*])", "",
                       written.split("=", 1)[0]).strip()
        if ":" in param and "::" not in param:
            param = param.split(":", 1)[1].strip()
        else:
            words = re.split(r"\s+", param)
            if len(words) > 1:  # `String json`, `const char *s`: the last word is the name
                last = words[-1]
                # its pointer or reference marks belong to the type: `T &&other` is `T&&`, `T *p` is `T*`
                param = " ".join(words[:-1]) + last[:len(last) - len(last.lstrip("*&"))]
        types.append(param.replace(" ", "") if len(param) < 40 else param[:39] + "…")
    return types


def overloaded(symbols: Iterable[Symbol]) -> set[str]:
    """The qualnames of the symbols that share their shown name with another of the file and differ from
    it in their parameters (overloads); a getter and its setter with the same parameters, or two
    conditional definitions, are told apart by their kind and their anchor's number instead."""
    by_name: dict[str, list[Symbol]] = {}
    for s in symbols:
        by_name.setdefault(shown_qualname(s.qualname), []).append(s)
    return {s.qualname for group in by_name.values()
            if len(group) > 1 and spec_for(detect_language(group[0].path)).overloads
            and len({tuple(parameter_types(s.signature, s.name)) for s in group}) > 1 for s in group}


def shown_heading(s: Symbol, overloads: Container[str]) -> str:
    """The name a section's heading (and so the page's table of contents) shows: an overload's with its
    parameter types, `fromJson(String, Class<T>)`, so eleven overloads are eleven headings a reader tells
    apart."""
    name = shown_qualname(s.qualname)
    if s.implements:  # `Value.fmt (Display)`: the trait the method implements
        return f"{name} ({s.implements})"
    if s.qualname not in overloads or "(" not in s.signature:
        return name
    return f"{name}({', '.join(parameter_types(s.signature, s.name))})"


def anchor_ids(symbols: Iterable[Symbol]) -> dict[str, str]:
    """qualname -> a unique anchor id for its section on the file page.

    Overloads are told apart by their parameter types (`sym-gson-fromjson-string-class-t`); other
    collisions (`a_b` and `a.b`, `Foo` and `foo`) get `-2`, `-3`... in source order, so an anchor does not
    move when the graph ranks a file's symbols differently.
    """
    out: dict[str, str] = {}
    used: set[str] = set()
    symbols = list(symbols)
    overloads = overloaded(symbols)
    for s in sorted(symbols, key=lambda s: (s.start_line, s.qualname)):
        if s.qualname in out:
            continue
        base = symbol_anchor(shown_heading(s, overloads) if s.qualname in overloads or s.implements
                             else s.qualname)
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
