"""The LLM PageWriter: file, module and overview prose (and missing docstrings) through a ChatModel.

Prompts are versioned Jinja templates in `generator/pages/llm/prompts/` (`<name>.v<N>.j2`); their versions are
part of
the writer id and so of every page key: changing a prompt or the model rewrites the pages, nothing else does.

Every prompt is built to fit the model's window: reply budget + schema + prompt <= context_tokens (counted
by sourcebook.provider's chars-per-token rule). A file whose source does not fit is shown as an excerpt
around its most important symbols; when even that would cover too little, the file is summarised in parts
first (`file_part`), and the page is written from those notes. Modules are written from their children's
summaries (grouped into part notes when they do not fit), the overview from the README and the top modules.

Secrets: a file whose name marks it as secret is never sent (its page is extractive). The provider redacts
every message it sends (`provider.outbound_messages`); this module also redacts each text before it is
excerpted, shortened or split to fit the window, on purpose: a cut can end a secret's line or a key block
mid-way, leaving a fragment the rules no longer recognise when the provider scans the finished prompt.

Failure handling: a page whose draft fails after the provider's retries and re-asks falls back to the
extractive draft with `fallback=True` (the build marks it for retry next run). After `outage_after`
consecutive transport failures the writer stops calling the provider for the rest of the run, and it stops
cleanly when `max_pages` or `max_cost` is reached: the remaining pages are extractive fallbacks, retried on
the next run. The build never fails because of the model.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import jinja2
from pydantic import BaseModel

from generator.analyze.facts import Symbol
from generator.pages.llm.drafts import (
    SECTION_HELP,
    DocstringsOnly,
    KeySymbolsOnly,
    Known,
    LLMFileDraft,
    LLMModuleDraft,
    LLMOverviewDraft,
    PartNotes,
    SymbolExplanation,
    dropped_of,
    offered_of,
    section_model,
    section_text,
)
from generator.pages.llm.excerpt import coverage, excerpt, fit_lines, pick_parts, shorten, split_parts
from generator.pages.writer import (
    ExtractiveWriter,
    FileContext,
    FileDraft,
    ModuleContext,
    ModuleDraft,
    OverviewContext,
    OverviewDraft,
    SymbolNote,
    TopicDraft,
    WriterStats,
)
from sourcebook.errors import ProviderError, ProviderOutputError
from sourcebook.ledger import PageRichness
from sourcebook.provider import (
    CHARS_PER_TOKEN,
    MESSAGE_OVERHEAD_TOKENS,
    ChatModel,
    estimate_prompt_tokens,
    estimate_tokens,
)
from sourcebook.redaction import is_secret_path, redact_text

if TYPE_CHECKING:
    from generator.pages.topics import TopicContext

log = logging.getLogger(__name__)

D = TypeVar("D", bound=BaseModel)

PROMPTS_DIR = Path(__file__).parent / "prompts"
TEMPLATES = {"file": "file_page.v1.j2", "file_part": "file_part.v1.j2", "module": "module_page.v1.j2",
             "module_part": "module_part.v1.j2", "overview": "overview.v1.j2", "section": "section.v2.j2",
             "symbol": "symbol.v1.j2"}
SAFETY = 0.9  # of the window: the chars-per-token rule is an estimate, keep a margin on top of it
MAX_PARTS = 4  # a huge file costs at most this many part calls; the rest of it is only outlined
MIN_EXCERPT_COVERAGE = 0.5  # below this share of lines shown, summarise in parts instead
EXPECTED_OUTPUT_TOKENS = {"file": 450, "file_part": 200, "module": 350, "module_part": 200, "overview": 450,
                          "section": 150, "symbol": 60}
# The small-model strategy: a section the model left out or got rejected this many times (in this run, or
# the whole draft failing after its re-ask) is asked for alone, with a shorter prompt, on every later page.
SINGLE_AFTER = 2
SECTION_SHARE = 0.6  # of the full prompt's input budget: a one-field call gets shorter evidence
SECTION_EDGES = 6  # import edges (and outside modules) shown with a module's one-field call
# Key symbols and docstrings asked alone are asked ONE SYMBOL per call, with that symbol's own code: a list of
# entries with exact qualified names is what a small model gets wrong; one sentence about shown code it gets
# right, and the writer attaches the name itself.
KEY_SYMBOL_ASKS = 4
SYMBOL_REPLY_TOKENS = 200  # JSON around at most MAX_DOCSTRING_CHARS (400) of explanation
SYMBOL_CODE_CHARS = 1500  # a symbol's code window (its head: signature, docstring, first members)
CORE_SECTIONS = {"file": ("purpose", "how_it_works", "key_symbols", "docstrings"),
                 "module": ("purpose", "structure"), "overview": ("architecture",)}
PROSE_FIELDS = {"topic": ("summary", "sections"),
                "file": ("summary", "purpose", "how_it_works", "relationships", "key_symbols", "caveats"),
                "module": ("summary", "purpose", "structure", "key_items", "caveats"),
                "overview": ("summary", "architecture", "key_modules", "getting_started")}
DOCSTRING_KINDS = frozenset({"function", "method", "class", "interface", "struct", "enum", "trait", "type"})
MAX_DOCSTRINGS = 8
LLM_FILE_KINDS = frozenset({"code", "test", "config"})  # documentation files keep their extractive page


_SHORT = {"file": "f", "file_part": "fp", "module": "m", "module_part": "mp", "overview": "o", "section": "s",
          "symbol": "y"}


def prompt_version() -> str:
    """The versions of all prompt templates ("f1.fp1.m1.mp1.o1" = file_page.v1, file_part.v1, ...): part of
    the writer id, so editing a template under a new version rewrites the pages."""
    versions = (name.removesuffix(".j2").rsplit(".v", 1)[1] for name in TEMPLATES.values())
    return ".".join(_SHORT[kind] + v for kind, v in zip(TEMPLATES, versions, strict=True))


@cache
def _environment() -> jinja2.Environment:
    # Prompts are plain text sent to a model, never HTML: escaping would corrupt the code they quote.
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(PROMPTS_DIR), undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False,
        autoescape=False)  # noqa: S701


def render_prompt(kind: str, **values: Any) -> str:
    text = _environment().get_template(TEMPLATES[kind]).render(**values)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _messages(text: str) -> list[dict[str, str]]:
    # One user message: some local chat formats (Gemma's) drop system messages entirely.
    return [{"role": "user", "content": text}]


def _symbol_line(s: Symbol) -> str:
    # redact before cutting: a cut can shorten a secret below what the rules recognise
    sig = redact_text(" ".join(s.signature.split()))[:200]
    return f"{s.qualname} ({s.kind}, lines {s.start_line}-{s.end_line}): {sig}"


@dataclasses.dataclass
class _PageTally:
    """What the calls for one page offered, and what the validators dropped."""

    offered: int = 0
    rejected: int = 0
    singles: int = 0


def _file_sections(symbols: int, undocumented: bool) -> list[str]:
    """The core sections a file page can have: none about symbols for a file without (enough of) them, so a
    small `__init__.py` never costs single-section calls that cannot succeed."""
    wanted = {"purpose": True, "how_it_works": symbols >= 2, "key_symbols": symbols >= 1,
              "docstrings": undocumented}
    return [s for s in CORE_SECTIONS["file"] if wanted[s]]


def _section_schema(section: str) -> type[BaseModel]:
    if section == "key_symbols":
        return KeySymbolsOnly
    if section == "docstrings":
        return DocstringsOnly
    return section_model(section)


class LLMWriter:
    """PageWriter over a ChatModel. Thread-safe: the build may call it from `concurrency` threads."""

    def __init__(self, chat: ChatModel, *, repo_name: str = "", concurrency: int = 4,
                 max_pages: int | None = None, max_cost: float | None = None, outage_after: int = 3) -> None:
        self._chat = chat
        self._repo = repo_name
        self._concurrency = max(1, concurrency)
        self._max_pages = max_pages
        self._max_cost = max_cost
        self._outage_after = outage_after
        self._fallback = ExtractiveWriter()
        self._lock = threading.Lock()
        self._written = 0
        self._failed = 0
        self._skipped = 0
        self._started = 0
        self._consecutive_outages = 0
        self._stop_reason = ""
        self._misses: Counter[str] = Counter()  # "file:purpose" -> times the model failed that section
        self._page = threading.local()  # the page being written by this thread: its _PageTally

    # -- PageWriter --------------------------------------------------------------------------------------
    @property
    def id(self) -> str:
        return f"llm/{self._chat.id}/{prompt_version()}"

    @property
    def concurrency(self) -> int:
        return self._concurrency

    @property
    def chat(self) -> ChatModel:
        return self._chat

    def file_page(self, ctx: FileContext) -> FileDraft:
        if not self.wants_llm(ctx):
            return self._fallback.file_page(ctx)
        return self._attempt(f"file:{ctx.path}", lambda: self._write_file(ctx),
                             lambda: self._fallback.file_page(ctx))

    def module_page(self, ctx: ModuleContext) -> ModuleDraft:
        if not ctx.files and not ctx.submodules:
            return self._fallback.module_page(ctx)
        return self._attempt(f"module:{ctx.path or '.'}", lambda: self._write_module(ctx),
                             lambda: self._fallback.module_page(ctx))

    def overview(self, ctx: OverviewContext) -> OverviewDraft:
        return self._attempt("overview", lambda: self._write_overview(ctx),
                             lambda: self._fallback.overview(ctx))

    def topic_page(self, ctx: TopicContext) -> TopicDraft:
        """An Architecture or "How it works" page (llm/topics.py); extractive when it fails."""
        from generator.pages.llm.topics import write_topic
        from generator.pages.topics import extractive_topic

        return self._attempt(f"topic:{ctx.page_id}", lambda: write_topic(self, ctx),
                             lambda: extractive_topic(ctx))

    def prompt_chars(self, model: type[BaseModel]) -> int:
        """Characters of prompt text a call for `model` may send (its reply and schema reserved)."""
        return self._chars(self._input_budget(model))

    def ask_with(self, model: type[D], text: str, context: dict[str, Any], label: str) -> D:
        """One call whose validators read `context` (a Known under "known", plus what the model needs)."""
        draft = self._chat.complete(model, _messages(text), max_tokens=self._reply_tokens(), context=context,
                                    label=label)
        self._count(draft, label)
        return draft

    def ask_alone_with(self, model: type[D], text: str, context: dict[str, Any], label: str, *,
                       reply_tokens: int) -> D:
        """One call for one part of a page (the small-model path: a single-section call, and one offered
        claim, rejected when no reply validates)."""
        tally = getattr(self._page, "tally", None)
        if tally is not None:
            tally.singles += 1
            tally.offered += 1
        try:
            draft = self._chat.complete(model, _messages(text), context=context, label=label,
                                        max_tokens=min(self._reply_tokens(), reply_tokens))
        except ProviderOutputError:
            if tally is not None:
                tally.rejected += 1
            raise
        self._count(draft, label)
        return draft

    def alone_mode(self, kind: str) -> bool:
        """Whether pages of `kind` go straight to the small-model path (whole drafts kept failing)."""
        return self._small_model(kind)

    def whole_failed(self, kind: str) -> None:
        """Count a failed whole draft of `kind` (after SINGLE_AFTER, later pages skip whole drafts)."""
        with self._lock:
            self._misses[f"{kind}:whole"] += 1

    # -- reporting -----------------------------------------------------------------------------------------
    def stats(self) -> WriterStats:
        totals = self._chat.ledger.totals()
        with self._lock:
            return WriterStats(pages=self._written, failures=self._failed, extra={
                "skipped": float(self._skipped), "calls": float(totals.calls),
                "requests": float(totals.requests), "input_tokens": float(totals.input_tokens),
                "output_tokens": float(totals.output_tokens), "cost": totals.cost})

    @property
    def stop_reason(self) -> str:
        """Why the writer stopped calling the provider this run ("" while it has not)."""
        with self._lock:
            return self._stop_reason

    def progress(self) -> str:
        t = self._chat.ledger.totals()
        with self._lock:
            return (f"{self._written} LLM pages, {self._failed} failed, {t.input_tokens + t.output_tokens:,} "
                    f"tokens, ${t.cost:.4f}")

    def wants_llm(self, ctx: FileContext) -> bool:
        """Whether this file's page is written by the model at all (secret and doc files are not)."""
        f = ctx.facts.file
        return f.kind in LLM_FILE_KINDS and f.size > 0 and not is_secret_path(f.path)

    # -- budgets -------------------------------------------------------------------------------------------
    def _reply_tokens(self) -> int:
        return min(self._chat.max_output_tokens, max(256, self._chat.context_tokens // 4))

    def _input_budget(self, model: type[BaseModel]) -> int:
        """Tokens left for the prompt text once the reply, the schema and a margin are reserved."""
        window = int(self._chat.context_tokens * SAFETY)
        return window - self._reply_tokens() - estimate_prompt_tokens([], model) - MESSAGE_OVERHEAD_TOKENS

    def _chars(self, tokens: int) -> int:
        return max(0, int(tokens * CHARS_PER_TOKEN))

    # -- the attempt wrapper -------------------------------------------------------------------------------
    def _attempt(self, label: str, write: Any, fallback: Any) -> Any:
        reason = self._should_skip()
        if reason:
            draft = fallback()
            with self._lock:
                self._skipped += 1
            return draft.model_copy(update={"fallback": True, "deferred": True})
        tally = self._page.tally = _PageTally()
        try:
            draft = write()
        except ProviderOutputError as exc:
            log.warning("%s: LLM draft rejected (%s); extractive page used, retried later", label, exc)
            with self._lock:
                self._failed += 1
                self._consecutive_outages = 0
            self._record(label, "fallback", None, tally)
            return fallback().model_copy(update={"fallback": True})
        except ProviderError as exc:
            log.warning("%s: provider failed (%s); extractive page used, retried later", label, exc)
            with self._lock:
                self._failed += 1
                self._consecutive_outages += 1
                if self._consecutive_outages >= self._outage_after and not self._stop_reason:
                    self._stop_reason = f"provider unavailable ({exc})"
                    log.error("llm: %d consecutive provider failures; no more LLM calls this run",
                              self._consecutive_outages)
            self._record(label, "fallback", None, tally)
            return fallback().model_copy(update={"fallback": True})
        finally:
            self._page.tally = None
        with self._lock:
            self._written += 1
            self._consecutive_outages = 0
        self._record(label, "llm", draft, tally)
        log.info("%s: written by %s (%s)", label, self._chat.id, self.progress())
        return draft.model_copy(update={"written_by": "llm", "fallback": False})

    def _record(self, label: str, outcome: str, draft: BaseModel | None, tally: _PageTally) -> None:
        kind = label.split(":", 1)[0]
        fields = PROSE_FIELDS.get(kind, ())
        sections = 0 if draft is None else sum(1 for f in fields if getattr(draft, f, None))
        docstrings = len(getattr(draft, "docstrings", ()) or ()) if draft is not None else 0
        self._chat.ledger.record_page(PageRichness(
            label=label, outcome=outcome, sections=sections, docstrings=docstrings, offered=tally.offered,
            rejected=tally.rejected, single_calls=tally.singles))

    def _should_skip(self) -> str:
        """Why this page must not call the model (stop rules), or "" after reserving a page slot."""
        # The cost is known only after a call: with N threads a run may overshoot by N-1 pages' cost.
        over_cost = self._max_cost is not None and self._chat.ledger.totals().cost >= self._max_cost
        with self._lock:
            if not self._stop_reason:
                if over_cost:
                    self._stop_reason = f"--max-cost {self._max_cost} reached"
                elif self._max_pages is not None and self._started >= self._max_pages:
                    self._stop_reason = f"--max-pages {self._max_pages} reached"
                else:
                    self._started += 1  # reserved under the lock: threads cannot exceed --max-pages
            return self._stop_reason

    def _ask(self, model: type[D], text: str, known: Known, label: str, *,
             reply_tokens: int | None = None) -> D:
        draft = self._chat.complete(model, _messages(text), max_tokens=reply_tokens or self._reply_tokens(),
                                    context=known.as_context(), label=label)
        self._count(draft, label)
        return draft

    def _count(self, draft: BaseModel, label: str) -> None:
        """The page tally and the log line of what the validators dropped from `draft`."""
        dropped = dropped_of(draft)
        tally = getattr(self._page, "tally", None)
        if tally is not None:
            tally.offered += offered_of(draft)
            tally.rejected += len(dropped)
        if dropped:
            log.info("%s: kept the draft, dropped %d invalid optional entr%s: %s", label, len(dropped),
                     "y" if len(dropped) == 1 else "ies", "; ".join(dropped))

    # -- the small-model strategy --------------------------------------------------------------------------
    def _small_model(self, kind: str) -> bool:
        """Whether whole drafts of this kind failed SINGLE_AFTER times this run: then later pages skip the
        whole draft (and its re-asks) and are asked for section by section from the start."""
        with self._lock:
            return self._misses[f"{kind}:whole"] >= SINGLE_AFTER

    def _to_ask_alone(self, kind: str, missing: Sequence[str], *, failed_whole: bool = False,
                      core: Sequence[str] = ()) -> list[str]:
        """Count this page's missing sections as failures; return those the model has now failed twice.

        A draft that leaves out most of the page's `core` sections (a summary and little else: what a small
        model returns) counts as a failed whole draft: its missing sections are asked alone at once."""
        if core and len(missing) * 2 > len(core):
            log.info("%s: the draft lacks %s; asking for them one at a time", kind, ", ".join(missing))
            failed_whole = True
        with self._lock:
            if failed_whole:
                self._misses[f"{kind}:whole"] += 1
            out = []
            for section in missing:
                key = f"{kind}:{section}"
                self._misses[key] += SINGLE_AFTER if failed_whole else 1  # a failed draft + its re-ask
                if self._misses[key] >= SINGLE_AFTER:
                    out.append(section)
            return out

    def _sections_alone(self, draft: D, kind: str, sections: Sequence[str],
                        ask: Callable[[str], BaseModel | None]) -> D:
        """`draft` with each of `sections` asked for alone; a section that still fails is left out."""
        updates: dict[str, Any] = {}
        for section in sections:
            try:
                reply = ask(section)
            except ProviderOutputError as exc:
                log.info("%s section %s: no valid reply alone either (%s)", kind, section, exc)
                continue
            except ProviderError as exc:
                # the provider failed mid-page: keep what the model already wrote rather than lose it all
                log.warning("%s section %s: provider failed (%s); the page keeps the sections it has",
                            kind, section, exc)
                break
            if reply is not None:
                updates[section] = section_text(reply, section)
        return draft.model_copy(update=updates) if updates else draft

    def _single(self, model: type[BaseModel], text: str, known: Known, label: str) -> BaseModel:
        tally = getattr(self._page, "tally", None)
        if tally is not None:
            tally.singles += 1
        # a one-symbol reply is a sentence or two: a small cap stops a rambling small model early, and keeps
        # its rejected reply small enough for the re-ask to fit the window
        cap = min(self._reply_tokens(), SYMBOL_REPLY_TOKENS) if model is SymbolExplanation else None
        return self._ask(model, text, known, label, reply_tokens=cap)

    # -- file pages ----------------------------------------------------------------------------------------
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
        model = LLMFileDraft if section is None else _section_schema(section)
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
                          subject=f'the file {ctx.path} of the repository "{self._repo}"')
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
        core = _file_sections(len(ctx.facts.symbols), bool(undocumented))
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
            return self._single(_section_schema(section), text, known, f"{label}#{section}")

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

    # -- one symbol at a time (key symbols and docstrings for small models) ----------------------------------
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
        wanted = set(_file_sections(len(ctx.facts.symbols), bool(undocumented)))
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

    def _fit(self, prompt: str, model: type[BaseModel]) -> str:
        budget = self._chars(self._input_budget(model))
        return prompt if len(prompt) <= budget else shorten(prompt, budget)[0]

    def _section_budget(self, section: str) -> int:
        """Characters of evidence for a one-field call: a share of what the full draft would get."""
        return int(self._chars(self._input_budget(_section_schema(section))) * SECTION_SHARE)

    # -- module pages --------------------------------------------------------------------------------------
    def _module_values(self, ctx: ModuleContext, children: list[str], omitted: int,
                       notes: Sequence[str], *, edges: int = 20) -> dict[str, Any]:
        return {
            "repo": self._repo, "path": ctx.path, "max_items": 8,
            "readme": shorten(redact_text(ctx.readme),
                              self._chars(self._input_budget(LLMModuleDraft)) // 4)[0],
            "files": [c for c in children if not c.startswith("submodule ")],
            "submodules": [c.removeprefix("submodule ") for c in children if c.startswith("submodule ")],
            "part_notes": list(notes), "omitted": omitted,
            "entry_points": [f"{e.qualname} ({e.kind}) in {e.path}" for e in ctx.entry_points],
            "edges": [f"{a} -> {b}" for a, b in ctx.internal_edges[:edges]],
            "external": sorted({b for _, b in ctx.external_edges if b})[:edges],
        }

    def module_children(self, ctx: ModuleContext) -> list[str]:
        lines = [f"{f.path}: {redact_text(f.summary) or '(no summary)'}" for f in ctx.files]
        lines += [f"submodule {m.path}/: {redact_text(m.summary) or '(no summary)'}" for m in ctx.submodules]
        return lines

    def module_prompt(self, ctx: ModuleContext, notes: Sequence[str] = (), *,
                      section: str | None = None) -> tuple[str, int]:
        """The module prompt within budget, and how many children did not fit (0 = all shown)."""
        children = self.module_children(ctx)
        kind, extra = "module", {}
        budget = self._chars(self._input_budget(LLMModuleDraft))
        if section is not None:
            kind, budget = "section", self._section_budget(section)
            extra = {"page": "module", "field": section, "guidance": SECTION_HELP.get(section, ""),
                     "subject": f'the module "{ctx.path or "."}" of the repository "{self._repo}"'}
        # one field asked alone gets shorter evidence: the children's summaries, few import edges (a small
        # model copies long path lists into its answer)
        edges = 20 if section is None else SECTION_EDGES
        fixed = len(render_prompt(kind, **self._module_values(ctx, [], 0, notes, edges=edges), **extra))
        shown, omitted = fit_lines(children, budget - fixed)
        return (render_prompt(kind, **self._module_values(ctx, shown, omitted, notes, edges=edges), **extra),
                omitted)

    def _module_groups(self, ctx: ModuleContext) -> list[list[str]]:
        fixed = len(render_prompt("module_part", repo=self._repo, path=ctx.path, part=9, parts=9,
                                  children=[]))
        budget = self._chars(self._input_budget(PartNotes)) - fixed
        groups: list[list[str]] = []
        rest = self.module_children(ctx)
        while rest:
            shown, _ = fit_lines(rest, budget)
            if not shown:  # one child's summary alone overflows: cut it
                shown = [shorten(rest[0], budget)[0]]
            groups.append(shown)
            rest = rest[len(shown):]
        return groups

    def _module_known(self, ctx: ModuleContext) -> Known:
        items = [*(f.path for f in ctx.files), *(m.path for m in ctx.submodules)]
        paths = [ctx.path, *items, *(e.path for e in ctx.entry_points),
                 *(b for _, b in ctx.external_edges), *([ctx.parent.path] if ctx.parent else [])]
        return Known.build(symbols=[e.qualname for e in ctx.entry_points], paths=paths, items=items,
                           subject=f"{ctx.path} {self._repo}")

    def _write_module(self, ctx: ModuleContext) -> ModuleDraft:
        prompt, omitted = self.module_prompt(ctx)
        notes: list[str] = []
        if omitted:
            groups = self._module_groups(ctx)
            for i, group in enumerate(groups, start=1):
                text = render_prompt("module_part", repo=self._repo, path=ctx.path, part=i,
                                     parts=len(groups), children=group)
                label = f"module-part:{ctx.path or '.'}#{i}"
                part = self._ask(PartNotes, text, self._module_known(ctx), label)
                notes.append(part.summary)
            prompt = self._fit(self.module_prompt(ctx, notes)[0], LLMModuleDraft)
        known, label = self._module_known(ctx), f"module:{ctx.path or '.'}"

        def ask(section: str) -> BaseModel:
            model = _section_schema(section)
            text = self._fit(self.module_prompt(ctx, notes, section=section)[0], model)
            return self._single(model, text, known, f"{label}#{section}")

        draft: LLMModuleDraft
        if self._small_model("module"):
            draft = LLMModuleDraft.model_construct(summary=section_text(ask("summary"), "summary"))
            return self._sections_alone(draft, "module", CORE_SECTIONS["module"], ask)
        try:
            draft = self._ask(LLMModuleDraft, prompt, known, label)
        except ProviderOutputError as exc:
            log.info("%s: whole draft failed (%s); asking for its sections one at a time", label, exc)
            draft = LLMModuleDraft.model_construct(summary=section_text(ask("summary"), "summary"))
            return self._sections_alone(draft, "module", self._to_ask_alone(
                "module", CORE_SECTIONS["module"], failed_whole=True), ask)
        missing = [s for s in CORE_SECTIONS["module"] if not getattr(draft, s)]
        return self._sections_alone(draft, "module", self._to_ask_alone("module", missing,
                                                                         core=CORE_SECTIONS["module"]), ask)

    # -- overview ------------------------------------------------------------------------------------------
    def overview_prompt(self, ctx: OverviewContext, *, section: str | None = None) -> str:
        kind, budget = "overview", self._chars(self._input_budget(LLMOverviewDraft))
        if section is not None:
            kind, budget = "section", self._section_budget(section)
        modules = [f"{m.path}/: {redact_text(m.summary) or '(no summary)'}" for m in ctx.top_modules]
        files = [f"{f.path}: {redact_text(f.summary) or '(no summary)'}" for f in ctx.top_files]
        modules, _ = fit_lines(modules, budget // 3)
        files, _ = fit_lines(files, budget // 4)
        values: dict[str, Any] = {
            "repo": ctx.repo_name or self._repo, "max_items": 8, "file_count": ctx.file_count,
            "symbol_count": ctx.symbol_count, "languages": [f"{lang} ({n})" for lang, n in ctx.languages[:6]],
            "readme": "", "readme_path": ctx.readme_path, "readme_truncated": False,
            "modules": modules, "files": files,
            "entry_points": [f"{e.qualname} ({e.kind}) in {e.path}" for e in ctx.entry_points[:8]],
        }
        if section is not None:
            values.update(page="overview", field=section, guidance=SECTION_HELP.get(section, ""),
                          subject=f'the repository "{values["repo"]}"')
        room = budget - len(render_prompt(kind, **values))
        if ctx.readme and room > 200:
            values["readme"], values["readme_truncated"] = shorten(redact_text(ctx.readme), room)
        return render_prompt(kind, **values)

    def _write_overview(self, ctx: OverviewContext) -> OverviewDraft:
        items = [*(m.path for m in ctx.top_modules), *(f.path for f in ctx.top_files)]
        known = Known.build(symbols=[e.qualname for e in ctx.entry_points],
                            paths=[*items, ctx.readme_path, *(e.path for e in ctx.entry_points)], items=items,
                            subject=ctx.repo_name or self._repo)

        def ask(section: str) -> BaseModel:
            return self._single(_section_schema(section), self.overview_prompt(ctx, section=section), known,
                                f"overview#{section}")

        draft: LLMOverviewDraft
        if self._small_model("overview"):
            draft = LLMOverviewDraft.model_construct(summary=section_text(ask("summary"), "summary"))
            return self._sections_alone(draft, "overview", CORE_SECTIONS["overview"], ask)
        try:
            draft = self._ask(LLMOverviewDraft, self.overview_prompt(ctx), known, "overview")
        except ProviderOutputError as exc:
            log.info("overview: whole draft failed (%s); asking for its sections one at a time", exc)
            draft = LLMOverviewDraft.model_construct(summary=section_text(ask("summary"), "summary"))
            return self._sections_alone(draft, "overview", self._to_ask_alone(
                "overview", CORE_SECTIONS["overview"], failed_whole=True), ask)
        core = CORE_SECTIONS["overview"]
        missing = [s for s in core if not getattr(draft, s)]
        alone = self._to_ask_alone("overview", missing, core=core)
        return self._sections_alone(draft, "overview", alone, ask)

    # -- dry run -------------------------------------------------------------------------------------------
    def estimate_alone(self, ctx: FileContext | ModuleContext | OverviewContext) -> tuple[int, int, int]:
        """(calls, input tokens, output tokens) of the small-model path on top of `estimate`: the summary and
        each core section asked alone, and key symbols and docstrings asked one symbol per call. A run pays
        it for pages whose whole draft fails (or for every page once a kind has failed SINGLE_AFTER times)."""
        calls, tokens_in, tokens_out = 0, 0, 0

        def add(prompt: str, model: type[BaseModel], kind: str) -> None:
            nonlocal calls, tokens_in, tokens_out
            calls += 1
            tokens_in += estimate_prompt_tokens(_messages(prompt), model)
            tokens_out += EXPECTED_OUTPUT_TOKENS[kind]

        if isinstance(ctx, FileContext):
            if not self.wants_llm(ctx):
                return 0, 0, 0
            undocumented = self._undocumented(ctx)
            for section in ["summary", *_file_sections(len(ctx.facts.symbols), bool(undocumented))]:
                if section in ("key_symbols", "docstrings"):
                    continue
                add(self.file_prompt(ctx, section=section)[0], _section_schema(section), "section")
            by_name = {s.qualname: s for s in ctx.facts.symbols}
            for qualname in self._alone_symbols(ctx, undocumented):
                add(self.symbol_prompt(ctx, by_name[qualname]), SymbolExplanation, "symbol")
            return calls, tokens_in, tokens_out
        if isinstance(ctx, ModuleContext):
            if not ctx.files and not ctx.submodules:
                return 0, 0, 0
            for section in ("summary", *CORE_SECTIONS["module"]):
                add(self.module_prompt(ctx, section=section)[0], _section_schema(section), "section")
            return calls, tokens_in, tokens_out
        for section in ("summary", *CORE_SECTIONS["overview"]):
            add(self.overview_prompt(ctx, section=section), _section_schema(section), "section")
        return calls, tokens_in, tokens_out

    def estimate(self, ctx: FileContext | ModuleContext | OverviewContext) -> tuple[int, int, int]:
        """(calls, input tokens, output tokens) writing this page would take, without calling anything.

        Output tokens are the typical reply sizes in EXPECTED_OUTPUT_TOKENS, not the reply budget.
        """
        if isinstance(ctx, FileContext):
            if not self.wants_llm(ctx):
                return 0, 0, 0
            calls, tokens_in, tokens_out = 1, 0, EXPECTED_OUTPUT_TOKENS["file"]
            notes: list[str] = []
            if self.needs_parts(ctx):
                for prompt, _known, _label in self._file_parts(ctx):
                    calls += 1
                    tokens_in += estimate_prompt_tokens(_messages(prompt), PartNotes)
                    tokens_out += EXPECTED_OUTPUT_TOKENS["file_part"]
                    notes.append("x" * EXPECTED_OUTPUT_TOKENS["file_part"] * 3)
            prompt = self._fit(self.file_prompt(ctx, notes)[0], LLMFileDraft)
            return calls, tokens_in + estimate_prompt_tokens(_messages(prompt), LLMFileDraft), tokens_out
        if isinstance(ctx, ModuleContext):
            if not ctx.files and not ctx.submodules:
                return 0, 0, 0
            prompt, omitted = self.module_prompt(ctx)
            tokens_in = estimate_prompt_tokens(_messages(prompt), LLMModuleDraft)
            calls, tokens_out = 1, EXPECTED_OUTPUT_TOKENS["module"]
            if omitted:
                groups = self._module_groups(ctx)
                calls += len(groups)
                tokens_in += sum(estimate_tokens("\n".join(g)) for g in groups)
                tokens_out += EXPECTED_OUTPUT_TOKENS["module_part"] * len(groups)
            return calls, tokens_in, tokens_out
        prompt = self.overview_prompt(ctx)
        tokens_in = estimate_prompt_tokens(_messages(prompt), LLMOverviewDraft)
        return 1, tokens_in, EXPECTED_OUTPUT_TOKENS["overview"]


def make_llm_writer(chat: ChatModel | None, *, repo_name: str, concurrency: int,
                    max_pages: int | None = None, max_cost: float | None = None) -> LLMWriter | None:
    """The LLM writer for a configured chat model, or None (the build then uses the extractive writer)."""
    if chat is None:
        return None
    return LLMWriter(chat, repo_name=repo_name, concurrency=concurrency, max_pages=max_pages,
                     max_cost=max_cost)


def summaries_of(drafts: Mapping[str, FileDraft | ModuleDraft]) -> dict[str, str]:
    """Page summaries by path, for module contexts (convenience for callers building bottom-up)."""
    return {path: d.summary for path, d in drafts.items()}
