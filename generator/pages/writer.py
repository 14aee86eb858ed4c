"""Page prose: the PageWriter interface, its inputs (contexts), its outputs (drafts), the extractive writer.

A writer only produces *prose* (summaries, explanations). The facts on a page (symbol tables, signatures,
docstrings, dependency links) are always rendered from the extracted facts by the templates, so a writer can
never drop or invent a symbol. The LLM writer (issue 4) fills the same draft models through Instructor; the
extractive writer fills them from docstrings and the shape of the code, with no model at all.

Contexts are plain frozen values. `fingerprint()` gives the canonical text of everything a writer may read,
minus bulky source text (represented by the file's content hash), so plan.py can hash it into a page key.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field
from pydantic.json_schema import SkipJsonSchema

from generator.analyze.boilerplate import lead_sentences, strip_boilerplate, strip_title
from generator.analyze.facts import FileFacts, Symbol
from generator.markup.docmarkup import code_span, plain_line
from generator.pages.anchors import shown_qualname

WrittenBy = Literal["llm", "extracted"]

# -- drafts: what a writer returns ---------------------------------------------------------------------------


class SymbolNote(BaseModel):
    """An explanation of one symbol of the file, keyed by its qualified name ("Flask.route")."""

    qualname: str = Field(description="Qualified name of a symbol defined in this file, exactly as listed.")
    explanation: str = Field(description="What it does and when to use it, in 1-3 sentences of Markdown.")


class ItemNote(BaseModel):
    """An explanation of one child of a module or of the repository (a file path or a module path)."""

    path: str = Field(description="Repository-relative path of a file or module, exactly as listed.")
    explanation: str = Field(description="Its role, in 1-2 sentences of Markdown.")


class _Draft(BaseModel):
    # Provenance is set by the writer, never by a model: SkipJsonSchema hides it from Instructor's schema.
    written_by: SkipJsonSchema[WrittenBy] = "extracted"
    # True when an LLM writer fell back to extractive prose for this page: the page is retried next run.
    fallback: SkipJsonSchema[bool] = False
    # True when the writer did not ask the model at all (--max-pages/--max-cost reached, an outage): not a
    # failure of the model, so the page is retried next run without backoff.
    deferred: SkipJsonSchema[bool] = False


class FileDraft(_Draft):
    summary: str = Field(description="One paragraph: what this file is for and what it defines.")
    purpose: str | None = Field(default=None, description="Why the file exists; the problem it solves.")
    how_it_works: str | None = Field(default=None, description="How the main pieces work together.")
    key_symbols: list[SymbolNote] = Field(default_factory=list,
                                          description="The most important symbols, most important first.")
    relationships: str | None = Field(default=None,
                                      description="How it relates to the files it depends on and its users.")
    caveats: list[str] = Field(default_factory=list,
                               description="Pitfalls, invariants, surprising behaviour.")


class ModuleDraft(_Draft):
    summary: str = Field(description="One paragraph: what this module (directory/package) is for.")
    purpose: str | None = Field(default=None, description="Why the module exists and where it fits.")
    structure: str | None = Field(default=None, description="How its files and submodules work together.")
    key_items: list[ItemNote] = Field(default_factory=list,
                                      description="Its most important files and submodules first.")
    caveats: list[str] = Field(default_factory=list, description="Pitfalls or conventions to know.")


class OverviewDraft(_Draft):
    summary: str = Field(description="One paragraph: what the repository is and does.")
    architecture: str | None = Field(default=None, description="The main parts and how a request/data flows.")
    key_modules: list[ItemNote] = Field(default_factory=list,
                                        description="The most important modules, most important first.")
    getting_started: str | None = Field(default=None, description="Where a new reader should start reading.")


class TopicSection(BaseModel):
    """One section of a topic page; it ends in the sources it rests on."""

    heading: str = Field(description="A short plain heading, 2-8 words, no Markdown.")
    body: str = Field(description="2-5 sentences of Markdown saying what happens here and why, naming "
                                  "symbols and paths in backticks exactly as listed.")
    sources: list[str] = Field(default_factory=list,
                               description='The evidence this section rests on, each "path:start-end" '
                                           "exactly as listed.")


class TopicDraft(_Draft):
    summary: str = Field(description="One paragraph: what this topic is about and why a reader cares.")
    sections: list[TopicSection] = Field(default_factory=list,
                                         description="3-6 sections in reading order, each citing sources.")


# -- contexts: what a writer reads ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PageLink:
    """Another page a page mentions: its source path, its page id and its one-line summary."""

    path: str
    page_id: str
    title: str
    summary: str = ""


@dataclass(frozen=True)
class FileContext:
    facts: FileFacts
    page_id: str
    module: str  # the directory path of the file's module ("" = repository root)
    depends_on: tuple[PageLink, ...] = ()  # files this file imports, resolved
    used_by: tuple[PageLink, ...] = ()  # files importing this one
    symbol_order: tuple[str, ...] = ()  # qualnames, most important first (graph rank)
    # symbol qualname -> ("path", "qualname") of symbols in other files calling it / it calls
    callers: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    calls: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    source: str = ""  # decoded file text; filled only when the page is (re)written, never part of the key

    @property
    def path(self) -> str:
        return self.facts.path

    def ordered_symbols(self) -> list[Symbol]:
        """Symbols most important first: graph order, then source order for the rest."""
        position = {q: i for i, q in enumerate(self.symbol_order)}
        return sorted(self.facts.symbols,
                      key=lambda s: (position.get(s.qualname, len(position)), s.start_line, s.qualname))

    def fingerprint(self) -> str:
        f = self.facts
        parts = [
            "file", f.file.path, f.file.sha, str(f.file.language), f.file.kind, self.page_id, self.module,
            repr([(s.name, s.qualname, s.kind, s.start_line, s.end_line, s.signature, s.docstring, s.parent,
                   s.public, s.docstring_source) for s in f.symbols]),
            repr([(i.module, i.names) for i in f.imports]),
            f.docstring, f.title, repr([(h.level, h.text, h.line) for h in f.headings]), str(f.line_count),
            repr(f.warnings), repr(self.depends_on), repr(self.used_by), repr(self.symbol_order),
            repr(self.callers), repr(self.calls),
        ]
        return "\x1f".join(parts)


@dataclass(frozen=True)
class EntryPoint:
    """A public symbol worth starting from, with where it lives."""

    path: str
    qualname: str
    kind: str
    signature: str
    summary: str = ""


# the repository root's file tables, in page order: the package's sources first, its papers and config last
ROOT_FILE_TABLES = ("Source files", "Tests", "Repository and tooling")


@dataclass(frozen=True)
class ModuleContext:
    path: str  # directory path, "" for the repository root
    page_id: str
    title: str
    parent: PageLink | None = None
    files: tuple[PageLink, ...] = ()  # with their page summaries (bottom-up)
    # the table each of `files` is listed in ("Source files", "Tests", "Repository and tooling"); () = one
    # "Files" table (every folder but the repository root, whose sources are mixed with its papers)
    file_tables: tuple[str, ...] = ()
    submodules: tuple[PageLink, ...] = ()
    entry_points: tuple[EntryPoint, ...] = ()
    internal_edges: tuple[tuple[str, str], ...] = ()  # (file, file) imports inside the module (direct files)
    external_edges: tuple[tuple[str, str], ...] = ()  # (file in module, other module path)
    readme: str = ""  # the module's own README text, if any

    def tables(self) -> list[tuple[str, list[PageLink]]]:
        """(heading, files) of the page's file tables, in the order of their first file's table kind."""
        if not self.file_tables:
            return [("Files", list(self.files))] if self.files else []
        grouped: dict[str, list[PageLink]] = {}
        for link, table in zip(self.files, self.file_tables, strict=True):
            grouped.setdefault(table, []).append(link)
        return sorted(grouped.items(), key=lambda kv: ROOT_FILE_TABLES.index(kv[0]))

    def fingerprint(self) -> str:
        return "\x1f".join(["module", self.path, self.page_id, self.title, repr(self.parent),
                            repr(self.files), repr(self.file_tables),
                            repr(self.submodules), repr(self.entry_points), repr(self.internal_edges),
                            repr(self.external_edges), self.readme])


@dataclass(frozen=True)
class OverviewContext:
    repo_name: str
    readme: str = ""  # raw README text (sanitized at render time)
    readme_path: str = ""
    top_modules: tuple[PageLink, ...] = ()
    top_files: tuple[PageLink, ...] = ()
    languages: tuple[tuple[str, int], ...] = ()  # (language, file count), most files first
    entry_points: tuple[EntryPoint, ...] = ()
    file_count: int = 0
    symbol_count: int = 0
    skipped_count: int = 0
    description: str = ""  # the manifest's one-line description of the project

    @property
    def title(self) -> str:
        """The front page's title: the project's name, or "Overview" when nothing names it (never the
        checkout folder's name, which differs between runners that share one cached page)."""
        return self.repo_name or "Overview"

    def fingerprint(self) -> str:
        return "\x1f".join(["overview", self.repo_name, self.readme, self.readme_path, repr(self.top_modules),
                            repr(self.top_files), repr(self.languages), repr(self.entry_points),
                            str(self.file_count), str(self.symbol_count), str(self.skipped_count),
                            *([self.description] if self.description else [])])


# -- the interface -------------------------------------------------------------------------------------------


@runtime_checkable
class PageWriter(Protocol):
    """Writes the prose of pages. One object per writer kind; the build calls it bottom-up."""

    @property
    def id(self) -> str:
        """Part of every page key: "extractive/1", "llm/<model>/<prompt version>"."""
        ...

    @property
    def concurrency(self) -> int:
        """How many file/module pages the build may ask for at once (threads)."""
        ...

    def file_page(self, ctx: FileContext) -> FileDraft: ...

    def module_page(self, ctx: ModuleContext) -> ModuleDraft: ...

    def overview(self, ctx: OverviewContext) -> OverviewDraft: ...


# -- the extractive writer -----------------------------------------------------------------------------------

_KIND_PLURAL = {"class": "classes", "function": "functions", "method": "methods", "interface": "interfaces",
                "struct": "structs", "enum": "enums", "trait": "traits", "type": "types",
                "constant": "constants", "variable": "variables", "namespace": "namespaces",
                "macro": "macros", "impl": "impl blocks", "field": "fields", "module": "modules"}


_LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])[ \t]+\S")
_PLUGIN_BLOCK = re.compile(r"(?:!!!|\?\?\?\+?|:::)[ \t]")


def first_paragraph(text: str, limit: int = 600) -> str:
    """The first blank-line-separated paragraph of `text`, on one line, cut at `limit` characters; a leading
    title and its underline are not a paragraph (boilerplate.strip_title), nor is a lead-in to an example."""
    text = strip_title(text).strip()
    # an opening `??? abstract "API Reference"` / `::: pkg.Name` block is markup for a docs plugin: no words
    while _PLUGIN_BLOCK.match(text):
        text = text.split("\n\n", 1)[1].strip() if "\n\n" in text else ""
    if not text:
        return ""
    # a list is not a description: joined onto one line, its marks would show as text ("* a * b")
    paras = [p for p in re.split(r"\n\s*\n", text) if p.strip() and not _LIST_ITEM.match(p)]
    if not paras:
        return ""
    para = re.split(r"\n(?= {0,3}(?:[-*+]|\d{1,9}[.)])[ \t]+\S)", paras[0], maxsplit=1)[0]
    para = lead_sentences(" ".join(line.strip() for line in para.splitlines()))
    if len(para) > limit:
        para = para[: limit - 1].rsplit(" ", 1)[0] + "…"
    return para


MD_LINK = re.compile(r"!?\[([^\[\]]*)\]\([^()]*(?:\([^()]*\)[^()]*)*\)")
_HTML_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")


_REF_LINK = re.compile(r"\[([^\[\]]+)\](?:\[[^\[\]]*\])?(?![(:])")


def plain_text(markdown: str) -> str:
    """Markdown/HTML prose reduced to its words: links and images become their text, tags disappear."""
    text = MD_LINK.sub(lambda m: m.group(1), markdown)
    return _HTML_TAG.sub("", _REF_LINK.sub(lambda m: m.group(1), text))


def _listing(names: list[str], limit: int = 5) -> str:
    shown = [code_span(n) for n in names[:limit]]
    if len(names) > limit:
        shown.append(f"{len(names) - limit} more")
    if len(shown) == 1:
        return shown[0]
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def describe_definitions(symbols: list[Symbol]) -> str:
    """"It defines 2 classes (`A`, `B`) and 3 functions (…)." from top-level public symbols, in order."""
    top = [s for s in symbols if s.public and s.parent is None and s.kind != "module"]
    if not top:
        return ""
    by_kind: dict[str, list[str]] = {}
    for s in top:
        # by its qualname: a Kotlin extension's names its receiver (`Context.obj`, `Context.Builder.obj`)
        by_kind.setdefault(s.kind, []).append(shown_qualname(s.qualname))
    parts = []
    for kind, names in by_kind.items():
        noun = kind if len(names) == 1 else _KIND_PLURAL.get(kind, kind + "s")
        parts.append(f"{len(names)} {noun} ({_listing(names)})")
    if len(parts) > 1:
        return "It defines " + ", ".join(parts[:-1]) + " and " + parts[-1] + "."
    return "It defines " + parts[0] + "."


@cache
def _module_hash() -> str:
    """This module's import closure: the extractive drafts are made by it and the helpers it imports."""
    from sourcebook.code_version import stage_version

    return stage_version("generator.pages.writer")[:8]


class ExtractiveWriter:
    """Prose from docstrings and code shape only: deterministic, instant, no provider."""

    VERSION = 1

    @property
    def id(self) -> str:
        # the hash of this module makes any change to the extractive prose re-draft the pages it affects
        return f"extractive/{self.VERSION}-{_module_hash()}"

    @property
    def concurrency(self) -> int:
        return 1

    def file_page(self, ctx: FileContext) -> FileDraft:
        f = ctx.facts
        lead = first_paragraph(strip_boilerplate(f.docstring))
        if f.file.kind == "doc" or (not f.symbols and f.headings):
            lead = plain_text(plain_line(lead))
            title = f.title or ctx.path
            sections = [h.text for h in f.headings if h.level <= 2 and h.text != f.title]
            text = lead or f"Documentation: {title}."
            if sections:
                text += f" Sections: {_listing(sections, 8)}."
            return FileDraft(summary=text)
        lead = plain_line(lead)  # reST roles and literals as code spans, never raw
        defined = describe_definitions(ctx.ordered_symbols())
        if not lead and not defined:
            what = {"config": "Configuration file", "test": "Test file", "doc": "Documentation file"}.get(
                f.file.kind, "Source file")
            lang = f" ({f.file.language})" if f.file.language else ""
            lines = f", {f.line_count} lines" if f.line_count else ""
            imported = list(dict.fromkeys(i.module for i in f.imports if i.module))
            uses = f" It imports {_listing(imported)}." if imported else ""
            return FileDraft(summary=f"{what}{lang}{lines}.{uses}")
        return FileDraft(summary=" ".join(p for p in (lead, defined) if p))

    def module_page(self, ctx: ModuleContext) -> ModuleDraft:
        lead = plain_text(plain_line(first_paragraph(strip_boilerplate(_strip_markup(ctx.readme)))))
        if not lead:
            # a package's __init__ docstring is the module's own description when there is one
            init = next((f for f in ctx.files if f.path.rsplit("/", 1)[-1].startswith("__init__.")), None)
            lead = _own_words(init.summary) if init else ""
        counts = []
        if ctx.files:
            counts.append(f"{len(ctx.files)} file{'s' if len(ctx.files) != 1 else ''}")
        if ctx.submodules:
            counts.append(f"{len(ctx.submodules)} submodule{'s' if len(ctx.submodules) != 1 else ''}")
        # the root by the name its page has when it is a package (`chi/`), else `./`
        where = code_span(ctx.path + "/" if ctx.path else ctx.title if ctx.title.endswith("/") else "./")
        shape = f"{where} contains " + " and ".join(counts) + "." if counts else ""
        if ctx.entry_points:
            names = [shown_qualname(e.qualname) for e in ctx.entry_points]
            shape += " Main entry points: " + _listing(names, 4) + "."
        return ModuleDraft(summary=" ".join(p for p in (lead, shape.strip()) if p) or "Empty module.")

    def overview(self, ctx: OverviewContext) -> OverviewDraft:
        from generator.pages.orientation import is_announcement, readme_intro

        # the home page shows the README's opening right below ("What it is"): the lead is the manifest's
        # description, or the README's first paragraph only when the page has no intro to show it in
        lead = plain_text(plain_line(ctx.description))
        if not lead and not readme_intro(ctx.readme):
            first = first_paragraph(strip_boilerplate(_strip_markup(ctx.readme)))
            lead = "" if is_announcement(first) else plain_text(plain_line(first))
        langs = ", ".join(f"{lang} ({n})" for lang, n in ctx.languages[:6])
        if lead and not lead.endswith((".", "!", "?", ":")):
            lead += "."  # a manifest's description is often a phrase: a sentence before the next one
        shape = (f"The repository has {ctx.file_count} files and {ctx.symbol_count} symbols"
                 + (f" in {langs}" if langs else "") + ".")
        return OverviewDraft(summary=" ".join(p for p in (lead, shape) if p))


# `<` opens an HTML line, but not `<https://...>`__ (a reST link's target wrapped onto the next line) or an
# autolink: those lines are the paragraph's words
_MARKUP_LINE = re.compile(r"^\s*(#|<(?![a-z][a-z0-9+.-]*:)|!\[|\[!\[|```|~~~|\.\. |=+$|-+$|\*+$|~+$|\^+$|"
                          r"\||>)")
_UNDERLINE = re.compile(r"^\s*([=\-~^*#])\1{2,}\s*$")
_GENERATED = ("It defines ", "Source file", "Configuration file", "Test file", "Documentation file",
              "Documentation: ")


def _own_words(summary: str) -> str:
    """The part of an extractive file summary that came from the file's own docstring ("" if none)."""
    if summary.startswith(_GENERATED):
        return ""
    return summary.split(" It defines ", 1)[0].strip()


def _strip_markup(text: str) -> str:
    """The README minus headings, HTML, badges and code: what remains starts with its first real paragraph."""
    lines = text.splitlines()
    kept = []
    fenced = False
    directive = False  # inside a reST directive's indented options and body (`.. image::` + `:target:`)
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            kept.append("")
            continue
        if line.startswith(".. "):
            directive = True
        elif line.strip() and not line[0].isspace():
            directive = False
        if directive:
            kept.append("")
            continue
        underlined = i + 1 < len(lines) and bool(_UNDERLINE.match(lines[i + 1])) and bool(line.strip())
        if fenced or underlined or _MARKUP_LINE.match(line):
            kept.append("")  # setext/reST headings (a line over ===) go with their underline
            continue
        kept.append(line)
    return "\n".join(kept)


@dataclass
class WriterStats:
    """Counters a writer may expose for the build summary (the LLM writer adds tokens and cost)."""

    pages: int = 0
    failures: int = 0
    extra: dict[str, float] = field(default_factory=dict)


# -- docstrings a writer generated (an LLM writer's FileDraft.docstrings), applied to the facts ---------


def generated_docstrings(draft: FileDraft) -> dict[str, str]:
    """qualname -> docstring the LLM wrote for an undocumented symbol (empty for other drafts)."""
    return {n.qualname: n.explanation for n in getattr(draft, "docstrings", ())}


def apply_docstrings(facts: FileFacts, generated: Mapping[str, str]) -> FileFacts:
    """`facts` with generated docstrings on symbols that have none (docstring_source="llm")."""
    if not generated:
        return facts
    symbols = [dataclasses.replace(s, docstring=generated[s.qualname], docstring_source="llm")
               if s.qualname in generated and not s.docstring else s for s in facts.symbols]
    return dataclasses.replace(facts, symbols=symbols)


def facts_with_docstrings(facts: Mapping[str, FileFacts],
                          generated: Mapping[str, Mapping[str, str]]) -> dict[str, FileFacts]:
    """Every file's facts with its generated docstrings applied (what the index stores)."""
    return {path: apply_docstrings(f, generated.get(path, {})) for path, f in facts.items()}
