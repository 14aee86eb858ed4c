"""The structured outputs the LLM writer asks for, and the validators that keep a model honest.

Each model extends a draft of `generator.write` (so the page templates render it unchanged) with validators
that read the facts of the page from Instructor's validation context (`info.context`, a `Known`). A reply
that names a symbol or a path absent from the facts, leaves a section empty or fills it with filler, or
carries Markdown/HTML that would break the page (headings, code fences, tags, tables, leaked tool-call
text) raises ValueError; Instructor sends the message back to the model, which gets a bounded number of
chances to fix it. Empty optional sections are dropped rather than rendered.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, ValidationInfo, model_validator

from generator.write import FileDraft, ItemNote, ModuleDraft, OverviewDraft, SymbolNote

MAX_FIELD_CHARS = 3000
MAX_DOCSTRING_CHARS = 400
MIN_SUMMARY_WORDS = 3  # "a", "LLMFileDraft": what a weak model echoes is not a summary
MIN_SECTION_WORDS = 3

_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
_BREAKERS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^\s{0,3}#{1,6}\s", re.M), "a Markdown heading (sections are added by the page itself)"),
    (re.compile(r"^\s{0,3}(```|~~~)", re.M), "a code block"),
    (re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>"), "HTML tags"),
    (re.compile(r"<\|[a-z_]+\|>|</?tool_call>|</?function|\"(?:name|arguments|parameters)\"\s*:"),
     "tool-call or JSON text"),
    (re.compile(r"\{\{|\{%|%\}"), "template syntax ({{ or {%)"),
    (re.compile(r"^\s*\|.*\|\s*$", re.M), "a table"),
    (re.compile(r"^\s*(?:={3,}|-{3,})\s*$", re.M), "a horizontal rule or underline heading"),
)
_FILLER = re.compile(
    r"(?i)\s*(?:n/?a|none|nothing|tbd|todo|not applicable|no caveats|unknown|-+|\.{3}|…)\.?\s*")
_IDENT_LIKE = re.compile(r"[\w./\-]+")
_SOURCE_EXT = re.compile(
    r"\.(?:py|pyi|js|jsx|mjs|ts|tsx|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|scala|md|rst|toml|ya?ml|"
    r"cfg|ini)$")


@dataclass(frozen=True)
class Known:
    """The facts a draft may refer to; passed to Instructor as the validation context."""

    symbols: frozenset[str] = frozenset()  # qualified names that may be named
    top: frozenset[str] = frozenset()  # top-level names of the file: `Top.x` must be a known qualname
    paths: frozenset[str] = frozenset()  # repository paths (files and dirs) that may be named
    items: frozenset[str] = frozenset()  # paths allowed in key_items / key_modules
    undocumented: frozenset[str] = frozenset()  # qualnames that may receive a generated docstring
    basenames: frozenset[str] = field(default=frozenset())

    @classmethod
    def build(cls, *, symbols: Iterable[str] = (), top: Iterable[str] = (), paths: Iterable[str] = (),
              items: Iterable[str] = (), undocumented: Iterable[str] = ()) -> Known:
        all_paths: set[str] = set()
        for raw in [*paths, *items]:
            p = norm_path(raw)
            while p:  # a path and every directory above it
                all_paths.add(p)
                p = posixpath.dirname(p)
        return cls(symbols=frozenset(symbols), top=frozenset(top), paths=frozenset(all_paths),
                   items=frozenset(norm_path(i) for i in items), undocumented=frozenset(undocumented),
                   basenames=frozenset(posixpath.basename(p) for p in all_paths))

    def as_context(self) -> dict[str, Any]:
        return {"known": self}


def norm_path(path: str) -> str:
    path = path.strip().strip("`").strip()
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/")


def _known(info: ValidationInfo) -> Known:
    ctx = info.context or {}
    known = ctx.get("known") if isinstance(ctx, dict) else None
    return known if isinstance(known, Known) else Known()


def check_text(name: str, text: str, known: Known, *, limit: int = MAX_FIELD_CHARS,
               min_words: int = 1) -> None:
    """Raise ValueError (the re-ask message) when `text` would break the page or names unknown things."""
    if not text.strip():
        raise ValueError(f"{name} is empty: write it, or leave the field out")
    if _FILLER.fullmatch(text):
        raise ValueError(f"{name} is filler ({text.strip()!r}): leave the field out instead")
    if len(text.split()) < min_words:
        raise ValueError(f"{name} is too short ({text.strip()!r}): write at least one full sentence")
    if len(text) > limit:
        raise ValueError(f"{name} is too long ({len(text)} characters, at most {limit}): shorten it")
    if text.count("`") % 2:
        raise ValueError(f"{name} has an unbalanced backtick")
    outside = _CODE_SPAN.sub(" ", text)
    for pattern, what in _BREAKERS:
        if pattern.search(outside if what != "a code block" else text):
            raise ValueError(f"{name} contains {what}; write plain sentences instead")
    for match in _CODE_SPAN.finditer(text):
        _check_mention(name, match.group(2).strip(), known)


def _check_mention(name: str, span: str, known: Known) -> None:
    if not _IDENT_LIKE.fullmatch(span.removesuffix("()")):
        return  # an expression or a snippet: not a claim that a name exists
    span = span.removesuffix("()")
    if "/" in span and not span.startswith(("http:", "https:")):
        if known.paths and norm_path(span) not in known.paths:
            raise ValueError(f"{name} names the path `{span}`, which is not in the facts; name only listed "
                             "paths, exactly as written")
        return
    if _SOURCE_EXT.search(span) and known.basenames and posixpath.basename(span) not in known.basenames:
        raise ValueError(f"{name} names the file `{span}`, which is not in the facts")
    head = span.split(".", 1)[0]
    if "." in span and head in known.top and span not in known.symbols:
        raise ValueError(f"{name} names `{span}`, but `{head}` in this file has no such member; "
                         f"use only listed symbols")


def _check_items(field_name: str, notes: list[ItemNote], known: Known, limit: int) -> list[ItemNote]:
    seen: set[str] = set()
    kept: list[ItemNote] = []
    for i, note in enumerate(notes):
        note.path = norm_path(note.path)
        if known.items and note.path not in known.items:
            raise ValueError(f"{field_name}[{i}].path {note.path!r} is not one of the listed paths")
        check_text(f"{field_name}[{i}].explanation", note.explanation, known)
        if note.path not in seen:
            seen.add(note.path)
            kept.append(note)
    return kept[:limit]


def _check_symbols(field_name: str, notes: list[SymbolNote], known: Known, allowed: frozenset[str], *,
                   what: str, limit: int = MAX_FIELD_CHARS) -> list[SymbolNote]:
    seen: set[str] = set()
    kept: list[SymbolNote] = []
    for i, note in enumerate(notes):
        note.qualname = note.qualname.strip().strip("`").removesuffix("()")
        if note.qualname not in allowed:
            raise ValueError(f"{field_name}[{i}].qualname {note.qualname!r} is not {what}; use a qualified "
                             "name exactly as listed")
        check_text(f"{field_name}[{i}].explanation", note.explanation, known, limit=limit)
        if note.qualname not in seen:
            seen.add(note.qualname)
            kept.append(note)
    return kept


def _optional(name: str, value: str | None, known: Known) -> str | None:
    if value is None or len(value.split()) < MIN_SECTION_WORDS:
        return None  # an empty (or one-word, e.g. an echoed field name) optional section is not rendered
    check_text(name, value, known)
    return value.strip()


def _caveats(values: list[str], known: Known) -> list[str]:
    out = []
    for i, value in enumerate(values):
        if value.strip() and not _FILLER.fullmatch(value):
            check_text(f"caveats[{i}]", value, known, limit=600)
            out.append(value.strip())
    return out[:8]


class LLMFileDraft(FileDraft):
    docstrings: list[SymbolNote] = Field(
        default_factory=list,
        description="One-sentence docstrings (in `explanation`) for the undocumented symbols named in the "
                    "instructions, by qualified name. Empty when none are named.")

    @model_validator(mode="after")
    def _grounded(self, info: ValidationInfo) -> LLMFileDraft:
        known = _known(info)
        check_text("summary", self.summary, known, min_words=MIN_SUMMARY_WORDS)
        self.summary = self.summary.strip()
        self.purpose = _optional("purpose", self.purpose, known)
        self.how_it_works = _optional("how_it_works", self.how_it_works, known)
        self.relationships = _optional("relationships", self.relationships, known)
        self.caveats = _caveats(self.caveats, known)
        if known.symbols:
            self.key_symbols = _check_symbols("key_symbols", self.key_symbols, known, known.symbols,
                                              what="a symbol of this file")[:12]
        elif self.key_symbols:
            raise ValueError("key_symbols must be empty: this file defines no symbols")
        self.docstrings = _check_symbols("docstrings", self.docstrings, known, known.undocumented,
                                         what="one of the undocumented symbols listed",
                                         limit=MAX_DOCSTRING_CHARS)
        for note in self.docstrings:
            note.explanation = " ".join(note.explanation.split())
        return self


class LLMModuleDraft(ModuleDraft):
    @model_validator(mode="after")
    def _grounded(self, info: ValidationInfo) -> LLMModuleDraft:
        known = _known(info)
        check_text("summary", self.summary, known, min_words=MIN_SUMMARY_WORDS)
        self.summary = self.summary.strip()
        self.purpose = _optional("purpose", self.purpose, known)
        self.structure = _optional("structure", self.structure, known)
        self.key_items = _check_items("key_items", self.key_items, known, 12)
        self.caveats = _caveats(self.caveats, known)
        return self


class LLMOverviewDraft(OverviewDraft):
    @model_validator(mode="after")
    def _grounded(self, info: ValidationInfo) -> LLMOverviewDraft:
        known = _known(info)
        check_text("summary", self.summary, known, min_words=MIN_SUMMARY_WORDS)
        self.summary = self.summary.strip()
        self.architecture = _optional("architecture", self.architecture, known)
        self.getting_started = _optional("getting_started", self.getting_started, known)
        self.key_modules = _check_items("key_modules", self.key_modules, known, 12)
        return self


class PartNotes(BaseModel):
    """Notes on one part of something too big for one prompt (a file's code, a module's children)."""

    summary: str = Field(description="What this part does, in 2-4 sentences.")
    key_symbols: list[SymbolNote] = Field(default_factory=list,
                                          description="Important symbols defined in this part, if any.")

    @model_validator(mode="after")
    def _grounded(self, info: ValidationInfo) -> PartNotes:
        known = _known(info)
        check_text("summary", self.summary, known, limit=1500, min_words=MIN_SUMMARY_WORDS)
        self.summary = " ".join(self.summary.split())
        if known.symbols:
            self.key_symbols = _check_symbols("key_symbols", self.key_symbols, known, known.symbols,
                                              what="a symbol of this part", limit=400)[:8]
        else:
            self.key_symbols = []
        return self
