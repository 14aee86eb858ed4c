"""File pages: the file prompt within budget (facts first, then an excerpt of the source), parts of a file
too big to excerpt, the draft with its sections asked alone when needed, and the one-symbol calls for key
symbols and docstrings.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from generator.analyze.facts import Symbol
from generator.pages.llm.drafts import (
    SECTION_HELP,
    DocstringsOnly,
    KeySymbolsOnly,
    Known,
    LLMFileDraft,
    PartNotes,
    SymbolExplanation,
    section_text,
)
from generator.pages.llm.excerpt import coverage, excerpt, fit_lines, pick_parts, shorten, split_parts
from generator.pages.llm.small_model import CORE_SECTIONS, SmallModelPolicy, section_schema
from generator.pages.llm.templates import of_repository, render_prompt
from generator.pages.writer import FileContext, FileDraft, SymbolNote
from sourcebook.errors import ProviderOutputError
from sourcebook.redaction import is_secret_path, redact_text

log = logging.getLogger(__name__)


MAX_PARTS = 4  # a huge file costs at most this many part calls; the rest of it is only outlined
MIN_EXCERPT_COVERAGE = 0.5  # below this share of lines shown, summarise in parts instead
# Key symbols and docstrings asked alone are asked ONE SYMBOL per call, with that symbol's own code: a list of
# entries with exact qualified names is what a small model gets wrong; one sentence about shown code it gets
# right, and the writer attaches the name itself.
KEY_SYMBOL_ASKS = 4
SYMBOL_CODE_CHARS = 1500  # a symbol's code window (its head: signature, docstring, first members)
DOCSTRING_KINDS = frozenset({"function", "method", "class", "interface", "struct", "enum", "trait", "type"})
MAX_DOCSTRINGS = 8
LLM_FILE_KINDS = frozenset({"code", "test", "config"})  # documentation files keep their extractive page


def _symbol_line(s: Symbol) -> str:
    # redact before cutting: a cut can shorten a secret below what the rules recognise
    sig = redact_text(" ".join(s.signature.split()))[:200]
    return f"{s.qualname} ({s.kind}, lines {s.start_line}-{s.end_line}): {sig}"


def file_sections(symbols: int, undocumented: bool) -> list[str]:
    """The core sections a file page can have: none about symbols for a file without (enough of) them, so a
    small `__init__.py` never costs single-section calls that cannot succeed."""
    wanted = {"purpose": True, "how_it_works": symbols >= 2, "key_symbols": symbols >= 1,
              "docstrings": undocumented}
    return [s for s in CORE_SECTIONS["file"] if wanted[s]]


class FilePages(SmallModelPolicy):
    """File pages' prompts and drafts."""

    def wants_llm(self, ctx: FileContext) -> bool:
        """Whether this file's page is written by the model at all (secret and doc files are not)."""
        f = ctx.facts.file
        return f.kind in LLM_FILE_KINDS and f.size > 0 and not is_secret_path(f.path)

    def _file_known(self, ctx: FileContext, undocumented: Sequence[str], *, subject: str = "") -> Known:
        f = ctx.facts
        paths = [ctx.path, ctx.module, *(d.path for d in ctx.depends_on), *(d.path for d in ctx.used_by)]
        for _q, edges in (*ctx.callers, *ctx.calls):
            paths.extend(p for p, _ in edges)
        return Known.build(symbols=[s.qualname for s in f.symbols],
                           top=[s.qualname for s in f.symbols if s.parent is None], paths=paths,
                           undocumented=undocumented, subject=subject or f"{ctx.path} {self._repo}")

    def _undocumented(self, ctx: FileContext) -> list[str]:
        picked = [s.qualname for s in ctx.ordered_symbols()
                  if s.public and not s.docstring and s.kind in DOCSTRING_KINDS]
        return picked[:MAX_DOCSTRINGS]

    def file_prompt(self, ctx: FileContext, part_notes: Sequence[str] = (), *,
                    section: str | None = None) -> tuple[str, bool]:
        """The file page prompt within budget, and whether the source had to be excerpted.

        With `section`, the prompt asks for that one field alone, over shorter evidence."""
        f = ctx.facts
        ordered = ctx.ordered_symbols()
        undocumented = self._undocumented(ctx)
        cross = [f"{q} is called from {', '.join(f'{p}:{n}' for p, n in e[:4])}" for q, e in ctx.callers]
        cross += [f"{q} calls {', '.join(f'{p}:{n}' for p, n in e[:4])}" for q, e in ctx.calls]
        imports = sorted({i.module for i in f.imports})
        model = LLMFileDraft if section is None else section_schema(section)
        budget = self._chars(self._input_budget(model))
        if section is not None:
            budget = self._section_budget(section)
        # Facts first, each list capped to a share of the budget; the source gets what is left.
        symbols, omitted = fit_lines([_symbol_line(s) for s in ordered], budget // 4)
        values: dict[str, Any] = {
            "repo": self._repo, "path": ctx.path, "language": f.file.language or "text",
            "line_count": f.line_count, "module": ctx.module,
            "file_doc": shorten(redact_text(f.docstring), budget // 10)[0],
            "symbols": symbols, "omitted_symbols": omitted, "max_key_symbols": 8,
            "undocumented": undocumented,
            "imports": fit_lines(imports, budget // 20)[0],
            "depends_on": fit_lines([d.path for d in ctx.depends_on], budget // 20)[0],
            "used_by": fit_lines([d.path for d in ctx.used_by], budget // 20)[0],
            "cross_refs": fit_lines(cross, budget // 12)[0],
            "part_notes": list(part_notes), "source": "", "source_truncated": False,
        }
        kind = "file"
        if section is not None:
            kind = "section"
            values.update(page="file", field=section, guidance=SECTION_HELP.get(section, ""),
                          subject=f"the file {ctx.path} of {of_repository(self._repo)}")
        fixed = len(render_prompt(kind, **values))
        room = budget - fixed
        if room > 200 and ctx.source:
            regions = [(s.start_line, s.end_line) for s in ordered]
            text, truncated = excerpt(redact_text(ctx.source), regions, room)
            values["source"], values["source_truncated"] = text, truncated
        return render_prompt(kind, **values), bool(values["source_truncated"])

    def needs_parts(self, ctx: FileContext) -> bool:
        if not ctx.source:
            return False
        text, truncated = self.file_prompt(ctx)
        return truncated and coverage(text, ctx.source) < MIN_EXCERPT_COVERAGE

    def _file_parts(self, ctx: FileContext) -> list[tuple[str, Known, str]]:
        """(prompt, known, label) for each part of a file too big to excerpt well."""
        f = ctx.facts
        top = [s for s in f.symbols if s.parent is None]
        regions = [(s.start_line, s.end_line) for s in ctx.ordered_symbols()]
        fixed = len(render_prompt("file_part", repo=self._repo, path=ctx.path, part=MAX_PARTS,
                                  parts=MAX_PARTS, symbols=[], start_line=0, end_line=0, source=""))
        part_budget = self._chars(self._input_budget(PartNotes)) - fixed - 600  # 600: the symbol list
        parts = split_parts(redact_text(ctx.source), [(s.start_line, s.end_line) for s in top], part_budget)
        chosen = pick_parts(parts, regions, MAX_PARTS)
        # A part's notes may name any member of the file (a method of a class that starts in another part):
        # validate against the whole file's facts, list the part's own symbols in its prompt.
        known = Known.build(symbols=[s.qualname for s in f.symbols], top=[s.qualname for s in top],
                            paths=[ctx.path], subject=f"{ctx.path} {self._repo}")
        out = []
        for i, part in enumerate(chosen, start=1):
            inside = [s.qualname for s in f.symbols if part.start_line <= s.start_line <= part.end_line]
            names, _ = fit_lines(inside, 500)
            prompt = render_prompt("file_part", repo=self._repo, path=ctx.path, part=i, parts=len(chosen),
                                   symbols=names, start_line=part.start_line, end_line=part.end_line,
                                   source=part.text)
            out.append((prompt, known, f"file-part:{ctx.path}#{i}"))
        return out

    def _write_file(self, ctx: FileContext) -> FileDraft:
        notes: list[str] = []
        if self.needs_parts(ctx):
            for prompt, known, label in self._file_parts(ctx):
                try:
                    part = self._ask(PartNotes, prompt, known, label)
                except ProviderOutputError as exc:  # one unreadable part does not sink the page
                    log.info("%s: part skipped (%s)", label, exc)
                    continue
                names = ", ".join(n.qualname for n in part.key_symbols)
                notes.append(part.summary + (f" Key symbols: {names}." if names else ""))
        prompt, _ = self.file_prompt(ctx, notes)
        if notes:
            # the notes replace most of the source: keep only what still fits next to them
            prompt = self._fit(prompt, LLMFileDraft)
        undocumented = self._undocumented(ctx)
        known = self._file_known(ctx, undocumented)
        label = f"file:{ctx.path}"
        core = file_sections(len(ctx.facts.symbols), bool(undocumented))
        explained: dict[str, str | None] = {}  # qualname -> its one-symbol explanation (None: it failed)

        def ask(section: str) -> BaseModel:
            if section == "key_symbols":
                notes_ = self._symbol_notes(ctx, self._key_candidates(ctx), explained)
                if not notes_:
                    raise ProviderOutputError("llm", "no key symbol was explained")
                return KeySymbolsOnly.model_construct(key_symbols=notes_)
            if section == "docstrings":
                notes_ = self._symbol_notes(ctx, self._docstring_asks(undocumented), explained)
                if not notes_:
                    raise ProviderOutputError("llm", "no docstring was written")
                return DocstringsOnly.model_construct(docstrings=notes_)
            text, _ = self.file_prompt(ctx, notes, section=section)
            return self._single(section_schema(section), text, known, f"{label}#{section}")

        draft: LLMFileDraft
        if self._small_model("file"):
            # whole drafts keep failing this run: spend the calls on the sections, one at a time
            draft = LLMFileDraft.model_construct(summary=section_text(ask("summary"), "summary"))
            return self._sections_alone(draft, "file", core, ask)
        try:
            draft = self._ask(LLMFileDraft, prompt, known, label)
        except ProviderOutputError as exc:
            # the whole draft failed, re-ask included: a weak model; ask for its sections one at a time
            log.info("%s: whole draft failed (%s); asking for its sections one at a time", label, exc)
            summary = ask("summary")  # required: its failure makes the page fall back
            draft = LLMFileDraft.model_construct(summary=section_text(summary, "summary"))
            return self._sections_alone(draft, "file", self._to_ask_alone("file", core, failed_whole=True),
                                        ask)
        missing = [s for s in core if not getattr(draft, s)]
        return self._sections_alone(draft, "file", self._to_ask_alone("file", missing, core=core), ask)

    def _key_candidates(self, ctx: FileContext) -> list[str]:
        """The symbols a key-symbols section explains: the most important public definitions."""
        return [s.qualname for s in ctx.ordered_symbols()
                if s.kind in DOCSTRING_KINDS and not s.name.startswith("_")][:KEY_SYMBOL_ASKS]

    @staticmethod
    def _docstring_asks(undocumented: Sequence[str]) -> list[str]:
        # special methods (`__len__`) are not worth a call each: their docstring is the protocol's
        return [q for q in undocumented if not q.rsplit(".", 1)[-1].startswith("__")]

    def _alone_symbols(self, ctx: FileContext, undocumented: Sequence[str]) -> list[str]:
        """Every symbol a page asked section by section gets a one-symbol call for (each once)."""
        wanted = set(file_sections(len(ctx.facts.symbols), bool(undocumented)))
        names = self._key_candidates(ctx) if "key_symbols" in wanted else []
        if "docstrings" in wanted:
            names += self._docstring_asks(undocumented)
        return list(dict.fromkeys(names))

    def symbol_prompt(self, ctx: FileContext, symbol: Symbol) -> str:
        """One symbol's prompt: its signature, docstring, members and its own code (the head when long)."""
        lines = redact_text(ctx.source).split("\n")
        code = "\n".join(lines[max(0, symbol.start_line - 1):symbol.end_line])
        budget = min(SYMBOL_CODE_CHARS, self._section_budget("summary"))
        code, truncated = shorten(code, budget)
        members = [s.name for s in ctx.facts.symbols if s.parent == symbol.qualname]
        return render_prompt(
            "symbol", repo=self._repo, path=ctx.path, symbol_kind=symbol.kind, qualname=symbol.qualname,
            signature=redact_text(" ".join(symbol.signature.split()))[:200],
            docstring=shorten(redact_text(" ".join(symbol.docstring.split())), 300)[0],
            members=fit_lines(members, 400)[0], start_line=symbol.start_line, end_line=symbol.end_line,
            code=code, truncated=truncated)

    def _symbol_notes(self, ctx: FileContext, qualnames: Sequence[str],
                      explained: dict[str, str | None]) -> list[SymbolNote]:
        """A note per symbol, each from its own call (cached per page in `explained`: a symbol that is both
        key and undocumented costs one call). A symbol the model cannot explain is left out."""
        by_name = {s.qualname: s for s in ctx.facts.symbols}
        out = []
        for qualname in qualnames:
            symbol = by_name.get(qualname)
            if symbol is None:
                continue
            if qualname not in explained:
                known = self._file_known(ctx, (), subject=f"{qualname} {symbol.name}")
                label = f"symbol:{ctx.path}#{qualname}"
                tally = getattr(self._page, "tally", None)
                if tally is not None:
                    tally.offered += 1
                try:
                    reply = self._single(SymbolExplanation, self.symbol_prompt(ctx, symbol), known, label)
                    explained[qualname] = reply.explanation  # type: ignore[attr-defined]
                except ProviderOutputError as exc:
                    log.info("%s: no valid explanation (%s)", label, exc)
                    explained[qualname] = None
                    if tally is not None:
                        tally.rejected += 1
            text = explained[qualname]
            if text:
                out.append(SymbolNote(qualname=qualname, explanation=text))
        return out
