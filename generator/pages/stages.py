"""Pages: contexts -> drafts (through a PageWriter) -> Markdown in docs/, with the page state that makes it
incremental.

A page is written only when its key changed (plan.py); when only its rendering changed, it is re-rendered
from the draft kept in the state, without asking the writer. File pages come first, then modules bottom-up
(each sees its children's fresh summaries), then the overview. The state is saved every few seconds and at
the end, so an interrupted or killed build resumes where it stopped.
"""

from __future__ import annotations

import dataclasses
import html
import logging
import posixpath
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from generator.analyze.facts import FileFacts
from generator.analyze.manifests import project_description, project_name
from generator.analyze.plan import (
    OVERVIEW_ID,
    CachedPage,
    PagePlan,
    PageState,
    StateMemo,
    draft_key,
    is_stale,
    orphan_pages,
    page_key,
    retry_wait,
    save_state,
)
from generator.pages.contexts import file_context, module_context, overview_context, stable_key
from generator.pages.writer import (
    ExtractiveWriter,
    FileDraft,
    ModuleDraft,
    OverviewDraft,
    PageWriter,
    TopicDraft,
    apply_docstrings,
    generated_docstrings,
)
from sourcebook.atomic import atomic_write_text
from sourcebook.config import Config
from sourcebook.errors import SourcebookError

if TYPE_CHECKING:
    from generator.analyze.analysis import Notify
    from generator.markup.doc_html import DocumentCache, DocumentRender
    from generator.pages.anchors import SymbolIndex
    from generator.pages.call_links import FileRefs, XrefIndex
    from generator.pages.diagrams import Graph
    from generator.pages.name_links import NameIndex, Target
    from generator.pages.orientation import Orientation
    from generator.pages.remote import SourceLinks
    from generator.pages.topics import TopicContext

log = logging.getLogger(__name__)

T = TypeVar("T")
D = TypeVar("D", bound=BaseModel)
R = TypeVar("R")

SAVE_EVERY_S = 5.0  # page state is also saved this often while pages are written
# a file page rendered by a forked worker only (workers.ordered_map's `heavy`): on the monorepo the pages of
# larger files (reST changelogs, 400 kB modules) were the slow ones to render (docs/performance.md)
HEAVY_PAGE_BYTES = 50_000
README_NAMES = ("readme.md", "readme.markdown", "readme.rst", "readme.txt", "readme")


class PageReport(Protocol):
    """The part of the build's report the page stages fill in (generator/build_report.py BuildReport): the
    build passes its report in; pages never import the build stage."""

    pages_written: list[str]
    pages_unchanged: int
    pages_restored: list[str]
    drafts_reused: list[str]
    write_failures: list[str]
    kept_prose: list[str]


class CachedPages(Protocol):
    """The shared build cache as the page stages read it (generator/index/build_cache.py SharedCache, which
    the build opens and passes in: pages and the index are siblings)."""

    def page(self, page_id: str) -> CachedPage | None: ...

    def matches(self, page_id: str, key: str) -> bool: ...

    def summary(self, page_id: str) -> str | None: ...


class PageSink:
    """Renders drafts to docs/, remembers keys and summaries in the page state, deletes orphans."""

    def __init__(self, config: Config, state: dict[str, PageState], report: PageReport,
                 shared: CachedPages | None = None) -> None:
        self.config = config
        self.docs = config.docs_dir
        self.state = state
        self.report = report
        self.shared = shared
        self.adopted: set[str] = set()  # pages whose state row came from the shared cache
        # page id -> (a draft re-used from a stored row, that row's draft as stored): stored again as it was,
        # not re-dumped through a narrower model (a cached LLM draft keeps its fields, so it does not churn)
        self.reused: dict[str, tuple[BaseModel, dict[str, Any]]] = {}
        self.dirty = False
        self.saved_at = time.monotonic()
        self.encoded: StateMemo = {}  # each row's JSON as last saved: a save encodes new rows only

    def fresh(self, page_id: str, key: str) -> bool:
        if is_stale(page_id, key, self.state, self.docs) and (
                not self._restore(page_id, key) or is_stale(page_id, key, self.state, self.docs)):
            return False
        row = self.state[page_id]
        if row.retry:  # a fallback waiting out its backoff: one run less to wait
            row.retry_wait -= 1
            self.encoded.pop(page_id, None)  # changed in place: encoded again
            self.dirty = True
        self.report.pages_unchanged += 1
        return True

    def _restore(self, page_id: str, key: str) -> bool:
        """Take this page from the shared build cache (build_cache.py) when it holds it at exactly `key`:
        its Markdown is written out and its state adopted, so nothing is written or rendered. A cached page
        at another key, when this machine knows nothing of the page, lends its state (summary, drafts) to
        the rewrite, which may then re-render a cached draft instead of asking the writer.
        True if restored."""
        cached = self.shared.page(page_id) if self.shared is not None else None
        if cached is None:
            return False
        if cached.state.key == key and cached.markdown is not None:
            atomic_write_text(self.docs / page_id, cached.markdown)
            self.state[page_id] = dataclasses.replace(cached.state)
            self.report.pages_restored.append(page_id)
            self.dirty = True
            return True
        if page_id not in self.state:
            self.state[page_id] = dataclasses.replace(cached.state)
            self.adopted.add(page_id)
        return False

    def settle(self, page_id: str, draft: D, model: type[D], stable: str, dkey: str) -> D:
        """The draft to render. A writer's fallback keeps the model's earlier prose for this page when what
        that prose was written about is unchanged (`stable`): a failed retry never replaces model-written
        prose with extractive text. Kept prose for changed inputs stays marked for a (backed-off) retry."""
        row = self.state.get(page_id)
        if not getattr(draft, "fallback", False) or row is None or not row.llm_draft or row.llm_key != stable:
            return draft
        try:
            kept = model.model_validate(row.llm_draft)
        except ValidationError:
            return draft
        exact = stable == dkey  # a file page: the very inputs the prose was written from
        log.info("%s: the model failed; kept its earlier prose%s", page_id,
                 "" if exact else " (its children changed: retried later)")
        self.report.kept_prose.append(page_id)
        return kept.model_copy(update={"written_by": "llm", "fallback": not exact})

    def model_draft(self, page_id: str, dkey: str, model: type[D]) -> D | None:
        """The model's last prose for this page if it was written from exactly these inputs (`dkey`, the
        same writer): a file whose inputs changed, fell back, and then changed back gets that prose again,
        without asking the model and without a stale or extractive page in between."""
        row = self.state.get(page_id)
        if row is None or not row.llm_draft or row.llm_key != dkey:
            return None
        try:
            draft = model.model_validate(row.llm_draft)
        except ValidationError:
            return None
        log.info("%s: its inputs are back to those the model wrote for; its prose reused", page_id)
        return draft.model_copy(update={"written_by": "llm", "fallback": False})

    def summary(self, page_id: str) -> str:
        row = self.state.get(page_id)
        return row.summary if row else ""

    def stored_draft(self, page_id: str, dkey: str, model: type[D]) -> D | None:
        """The draft this page was last rendered from, if its inputs and writer are unchanged."""
        found = self.stored(page_id, dkey, model)
        return found[0] if found is not None else None

    def stored(self, page_id: str, dkey: str, model: type[D]) -> tuple[D, PageState] | None:
        """stored_draft, with the state row it came from (this machine's, else the shared cache's)."""
        rows = [self.state.get(page_id)]
        cached = self.shared.page(page_id) if self.shared is not None else None
        if cached is not None:
            rows.append(cached.state)  # another machine's draft for the same inputs and writer
        for row in rows:
            if row is None or row.retry or row.draft_key != dkey or not row.draft:
                continue
            try:
                draft = model.model_validate(row.draft)
            except ValidationError:
                continue  # a draft from an older model layout: write it again
            if row is not rows[0] or page_id in self.adopted:
                self.report.drafts_reused.append(page_id)
            self.reused[page_id] = (draft, row.draft)
            return draft, row
        return None

    def put(self, page_id: str, key: str, markdown: str | None, row: PageState, *, dkey: str = "",
            draft: BaseModel | None = None, stable: str = "") -> None:
        """Write the page's Markdown (None: already written, by write_markdown in a render worker) and then
        its state row."""
        if markdown is not None:
            self.write_markdown(page_id, markdown)
        previous = self.state.get(page_id)
        row.key = key
        row.draft_key = dkey
        origin = self.reused.pop(page_id, None)
        if draft is not None and origin is not None and origin[0] is draft:
            row.draft = origin[1]
        else:
            row.draft = draft.model_dump(mode="json") if draft is not None else {}
        if draft is not None and row.written_by == "llm" and not row.retry:
            row.llm_draft, row.llm_key = row.draft, stable  # fresh model prose: what a later failure keeps
        elif previous is not None:
            row.llm_draft, row.llm_key = previous.llm_draft, previous.llm_key
        if row.retry:  # consecutive failures back the retries off: 0, 1, 3, 7 ... runs skipped
            failed_before = previous.failures if previous is not None and previous.retry else 0
            deferred = bool(getattr(draft, "deferred", False))  # not asked this run: not a model failure
            row.failures = failed_before + (0 if deferred else 1)
            row.retry_wait = 0 if deferred else retry_wait(row.failures)
        self.state[page_id] = row
        self.report.pages_written.append(page_id)
        if row.retry and page_id not in self.report.write_failures:  # a writer's own fallback counts too
            self.report.write_failures.append(page_id)
        self.dirty = True
        if time.monotonic() - self.saved_at > SAVE_EVERY_S:
            self.save()  # a killed process (no finally) loses at most a few seconds of written pages

    def write_markdown(self, page_id: str, markdown: str) -> None:
        """The page's file in docs/ (in whichever process rendered it; its row follows in put)."""
        atomic_write_text(self.docs / page_id, markdown)

    def prune(self, planned: set[str]) -> list[str]:
        gone = orphan_pages(planned, self.state, self.docs)
        for page_id in gone:
            (self.docs / page_id).unlink(missing_ok=True)
            self.state.pop(page_id, None)
            _remove_empty_dirs((self.docs / page_id).parent, self.docs)
        self.dirty = self.dirty or bool(gone)
        return gone

    def save(self) -> None:
        if self.dirty or not (self.config.out_dir / "state" / "pages.json").is_file():
            save_state(self.config.out_dir, self.state, self.encoded)
            self.dirty = False
        self.saved_at = time.monotonic()


def _remove_empty_dirs(directory: Path, stop: Path) -> None:
    while directory != stop and directory.is_dir() and not any(directory.iterdir()):
        directory.rmdir()
        directory = directory.parent


def _safely(write: Callable[[Any], T], fallback: Callable[[Any], T], ctx: Any, page_id: str,
            report: PageReport) -> T:
    """The writer's draft, or the extractive one marked as a fallback when the writer fails for this page."""
    try:
        return write(ctx)
    except SourcebookError as exc:
        log.warning("%s: writer failed, using extracted prose (will retry next run): %s", page_id, exc)
        report.write_failures.append(page_id)
        draft = fallback(ctx)
        draft.fallback = True  # type: ignore[attr-defined]
        return draft


def _map(fn: Callable[[T], R], items: Sequence[T], concurrency: int,
         describe: Callable[[T], str] = repr) -> Iterator[R]:
    """fn over items, in order; threads when the writer allows (LLM calls wait on the network). When no
    item finishes for `stall_seconds()` the map fails naming the item it waits on (a hung call), and on any
    error or interrupt the queued items are dropped, not waited for."""
    if concurrency <= 1 or len(items) <= 1:
        yield from map(fn, items)
        return
    from sourcebook.workers import StallError, stall_seconds

    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="sourcebook-writer")
    finished: list[float] = []
    done = False
    try:
        futures = []
        for item in items:
            future = pool.submit(fn, item)
            future.add_done_callback(lambda _future: finished.append(time.monotonic()))
            futures.append(future)
        stall = stall_seconds()
        for item, future in zip(items, futures, strict=True):
            while True:
                try:
                    yield future.result(timeout=stall)
                    break
                except FutureTimeout:
                    if finished and time.monotonic() - finished[-1] < stall:
                        continue  # others finish: this one waits its turn
                    raise StallError(f"{describe(item)}: no page finished for {stall:.0f} s; stopped "
                                     "(SOURCEBOOK_STALL_SECONDS sets the limit)") from None
        done = True
    finally:
        # a hung call's thread cannot be stopped; the build does not wait for it (the CLI exits without
        # joining writer threads after an error)
        pool.shutdown(wait=done, cancel_futures=True)


@dataclass(frozen=True)
class PageRun:
    """Everything the page stages share in one build."""

    config: Config
    plan: PagePlan
    facts: Mapping[str, FileFacts]
    graph: Any  # generator.analyze.graph.RepoGraph
    writer: PageWriter
    pages: PageSink
    notify: Notify
    texts: Mapping[str, str]
    skipped: int
    symbols: SymbolIndex  # the analysis's, built once for every page kind
    processes: int = 1  # processes rendering file pages, this one included (the site's worker count)


def file_render_inputs(config: Config, facts: Mapping[str, FileFacts], graph: Any) -> tuple[
        SourceLinks | None, XrefIndex]:
    """What file pages render besides their draft and the symbol index: source links, cross-references."""
    from generator.pages.call_links import XrefIndex
    from generator.pages.remote import source_links

    return source_links(config.root, config.repo_url), XrefIndex.build(facts, graph.calls, graph.callers)


def file_render_key(base: str, links: SourceLinks | None, refs: FileRefs,
                    doc_links: Mapping[str, Target] | None = None, document: str = "") -> str:
    """The rendering part of a file page's key: a new commit (links), a new caller (refs), a docstring
    name now naming another section (doc_links) or a file a document includes changing (`document`:
    document_key) re-renders the page from its stored draft; none is part of the draft key, so no prose is
    rewritten. With doc_links in the key a page never keeps a link to a page that is gone."""
    docs = repr(sorted((doc_links or {}).items()))
    return "\x1f".join([base, links.key() if links else "", refs.key(), docs, document])


def docstring_links(names: NameIndex, f: FileFacts) -> dict[str, Target]:
    """Every name in the file's docstrings that names a symbol in another file, with that symbol."""
    from generator.markup.docmarkup import xref_names

    asked: set[str] = set()
    for text in [f.docstring, *(s.docstring for s in f.symbols)]:
        if text and ("`" in text or "{@" in text or "[" in text):
            asked |= xref_names(text)
    out: dict[str, Target] = {}
    for name in asked:
        target = names.lookup(name, f.path)
        if target is not None and target.path != f.path:
            out[name] = target
    return out


def write_file_pages(run: PageRun) -> None:
    from generator.pages.markdown import relative_link, render_file_page, render_version
    from generator.pages.name_links import NameIndex, page_resolver
    from sourcebook.workers import ordered_map

    config, plan, facts, graph, texts, writer, pages, notify = (
        run.config, run.plan, run.facts, run.graph, run.texts, run.writer, run.pages, run.notify)

    version = render_version()
    links, xref = file_render_inputs(config, facts, graph)
    index = run.symbols
    extractive = ExtractiveWriter()
    names = NameIndex.build(facts, plan.files)
    doc_links: dict[str, dict[str, Target]] = {}
    todo = []

    def source_text(path: str) -> str:
        return _source_text(config.root, texts, path)

    documents = document_cache(config)
    read = repository_reader(facts, source_text)
    doc_keys: dict[str, str] = {}
    for path in sorted(facts):
        ctx = file_context(facts[path], plan, graph)
        refs = xref.file_refs(facts[path])
        doc_links[path] = page_links(names, facts[path], source_text, read)
        if is_rendered_document(facts[path]):
            doc_keys[path] = document_key(facts[path], source_text(path), read)
            # an unchanged doc's page is not re-rendered: its entry stays
            documents.keep(source_text(path), doc_keys[path])
        fingerprint = ctx.fingerprint()  # once: it writes out every symbol (3% of a cold files stage)
        key = page_key(fingerprint, writer.id, file_render_key(version, links, refs, doc_links[path],
                                                               doc_keys.get(path, "")))
        if not pages.fresh(ctx.page_id, key):
            # a file page's draft key is also its stable key (plan.stable_key): what its prose was about
            todo.append((ctx, key, refs, draft_key(fingerprint, writer.id)))
    notify("files", 0, len(todo))

    # the extractive writer's drafts are made where the page is rendered (a forked worker too): it is
    # deterministic and reads only the page's context; a model's are asked here, its threads in this process
    local = drafts_where_rendered(writer)

    def write(item: tuple[Any, str, FileRefs, str]) -> tuple[FileDraft, dict[str, str]] | None:
        """(draft, generated docstrings): the draft re-used from the state when only the rendering changed;
        None when the render makes it (`local`)."""
        ctx, dkey = item[0], item[3]
        stored = pages.stored(ctx.page_id, dkey, FileDraft)
        if stored is not None:
            return stored[0], dict(stored[1].docstrings)
        earlier = pages.model_draft(ctx.page_id, dkey, FileDraft)
        if earlier is not None:
            notes = pages.state[ctx.page_id].llm_draft.get("docstrings") or []
            return earlier, {str(n["qualname"]): str(n["explanation"]) for n in notes}
        if local:
            return None
        # the source is no part of the fingerprint
        ctx = dataclasses.replace(ctx, source=source_text(ctx.path))
        draft = _safely(writer.file_page, extractive.file_page, ctx, ctx.page_id, pages.report)
        if draft.fallback:
            kept = pages.settle(ctx.page_id, draft, FileDraft, dkey, dkey)
            if kept is not draft:
                notes = pages.state[ctx.page_id].llm_draft.get("docstrings") or []
                return kept, {str(n["qualname"]): str(n["explanation"]) for n in notes}
        return draft, generated_docstrings(draft)

    made: dict[int, tuple[FileDraft, dict[str, str]]] = {}  # drafts handed to render, until their page is put

    def drafts() -> Iterator[tuple[int, FileDraft | None, dict[str, str]]]:
        for n, written in enumerate(_map(write, todo, writer.concurrency, lambda item: item[0].path)):
            if written is None:
                yield n, None, {}
            else:
                made[n] = written
                yield n, *written

    def render(item: tuple[int, FileDraft | None, dict[str, str]]
               ) -> tuple[int, str, tuple[FileDraft, dict[str, str]] | None]:
        """(n, "hit"/"miss" of its reST document in the cache or "", the draft made here if any): run by
        this process or a forked worker (workers.py), which inherits all it reads and writes the page's
        Markdown itself (only its row is kept here)."""
        n, draft, generated = item
        ctx, _key, refs, _dkey = todo[n]
        text = source_text(ctx.path)
        made_here = None
        if draft is None:  # the local writer's, as `write` above would have made it
            draft = writer.file_page(dataclasses.replace(ctx, source=text))
            generated = generated_docstrings(draft)
            made_here = (draft, generated)
        # generated docstrings are shown (marked as generated) on the page only; the key stays on the facts
        shown = dataclasses.replace(ctx, facts=apply_docstrings(ctx.facts, generated), source=text)
        resolve = page_resolver(names, ctx.path, ctx.page_id, doc_links[ctx.path], relative_link)
        document, cached = "", ""
        if is_rendered_document(ctx.facts):
            misses = documents.misses
            document = documents.render(text, _readme_resolver(plan, ctx.path, ctx.page_id), resolve,
                                        salt=doc_keys[ctx.path], render=document_renderer(ctx.facts, read))
            cached = "miss" if documents.misses > misses else "hit"
            if ctx.facts.file.language == "markdown":
                document = autodoc_summaries(document, doc_links[ctx.path])
        markdown = render_file_page(shown, draft, writer_id=writer.id, links=links, refs=refs, index=index,
                                    module_page=plan.modules[ctx.module], resolve_symbol=resolve,
                                    document=document)
        pages.write_markdown(ctx.page_id, markdown)
        return n, cached, made_here

    def heavy(item: tuple[int, FileDraft | None, dict[str, str]]) -> bool:
        return todo[item[0]][0].facts.file.size > HEAVY_PAGE_BYTES

    tally = {"hit": 0, "miss": 0, "": 0}
    def name(item: tuple[int, FileDraft | None, dict[str, str]]) -> str:
        return f"the page of {todo[item[0]][0].path}"

    for n, cached, made_here in ordered_map(render, drafts(), run.processes, expected=len(todo), heavy=heavy,
                                            describe=name):
        (ctx, key, _refs, dkey), (draft, generated) = todo[n], made_here or made.pop(n)
        tally[cached] += 1
        pages.put(ctx.page_id, key, None, PageState(
            key=key, kind="file", title=posixpath.basename(ctx.path), target_path=ctx.path,
            summary=draft.summary, written_by=draft.written_by, retry=draft.fallback,
            symbols=[s.qualname for s in ctx.facts.symbols], docstrings=generated,
            source_sha=ctx.facts.file.sha),
            dkey=dkey, draft=draft, stable=dkey)
        notify("files", n + 1, len(todo))
    documents.prune()
    if tally["hit"] or tally["miss"]:
        log.info("documents (reST, Markdown): %d rendered, %d from the cache", tally["miss"], tally["hit"])


def drafts_where_rendered(writer: PageWriter) -> bool:
    """Whether file pages' drafts may be made where they are rendered, a forked worker included: the
    extractive writer's (deterministic, local, no threads, never a fallback). A model's drafts are asked
    by this process, with its threads, and its fallbacks and retries kept in this process's state."""
    return type(writer) is ExtractiveWriter


def page_links(names: NameIndex, f: FileFacts, text: Callable[[str], str],
               read: Callable[[str], str | None] | None = None) -> dict[str, Target]:
    """The names a file page links to other pages' symbols (part of its key): its docstrings', and for a
    rendered reST document those its API roles and autodoc directives give, in the files it includes too
    (`read`: repository_reader)."""
    out = docstring_links(names, f)
    if is_rendered_document(f) and f.file.language == "rst":
        body = text(f.path)
        if read is not None and "include::" in body:
            from generator.markup.doc_includes import included_files

            body = "\n\n".join([body, *(read(p) or "" for p in included_files(f.path, body, read))])
        out.update(document_links(names, f.path, body))
    elif is_rendered_document(f) and f.file.language == "markdown":
        out.update(autodoc_links(names, f.path, text(f.path)))
    return out


def autodoc_links(names: NameIndex, path: str, text: str) -> dict[str, Target]:
    """The symbols a Markdown document's `::: name` directives document, each with its summary (the page
    shows it after the link, so a new summary re-renders the page)."""
    from generator.markup.docstrings import docstring_summary
    from generator.markup.md_html import autodoc_names

    out = {}
    for name in autodoc_names(text) if ":::" in text else ():
        target = names.lookup(name, path)
        if target is not None:
            doc = names.docstrings.get((target.path, target.anchor), "")
            out[name] = dataclasses.replace(target, summary=docstring_summary(doc, 160)) if doc else target
    return out


_AUTODOC_PARAGRAPH = re.compile(
    r'(<p class="sb-autodoc">(?:<a href="[^"]*">)?<code>([^<]*)</code>(?:</a>)?)</p>')


def autodoc_summaries(document: str, targets: Mapping[str, Target]) -> str:
    """A rendered Markdown document with each `::: name` directive's link followed by that symbol's
    summary (autodoc_links), as mkdocstrings would show its docstring: after the document cache, which
    keeps links, not summaries."""
    from generator.pages.markdown import rich_cell

    def one(m: re.Match[str]) -> str:
        target = targets.get(html.unescape(m.group(2)))
        return f"{m.group(1)}: {rich_cell(target.summary)}</p>" if target and target.summary else m.group(0)

    return _AUTODOC_PARAGRAPH.sub(one, document) if 'class="sb-autodoc"' in document else document


def document_links(names: NameIndex, path: str, text: str) -> dict[str, Target]:
    """Every name a rendered document's API roles and autodoc directives give that names a symbol."""
    from generator.markup.rst import xref_targets

    found = {name: names.lookup(name, path) for name in xref_targets(text)}
    return {name: target for name, target in found.items() if target is not None}


def is_rendered_document(f: FileFacts) -> bool:
    """A documentation file whose page shows it rendered: reST (what a reader cannot read as typed) and
    Markdown."""
    return f.file.kind == "doc" and f.file.language in ("rst", "markdown")


def repository_reader(facts: Mapping[str, FileFacts],
                      text: Callable[[str], str]) -> Callable[[str], str | None]:
    """A reST include's view of the repository: the text of a file the scan accepted (a text file inside
    the repository: symlinks out, binaries and oversized files never are), None for any other path."""
    def read(path: str) -> str | None:
        return text(path) if path in facts else None

    return read


def document_key(f: FileFacts, text: str, read: Callable[[str], str | None]) -> str:
    """What a rendered document's HTML depends on beyond its own text and links: its language, and the
    files a reST document includes (generator/markup/doc_includes.py)."""
    from generator.markup.doc_includes import includes_key

    language = f.file.language or ""
    return language + ("\x1f" + includes_key(f.path, text, read) if language == "rst" else "")


def document_renderer(f: FileFacts, read: Callable[[str], str | None]) -> DocumentRender:
    """How the document cache renders `f` on a miss: (text, link resolver, symbol resolver) -> HTML."""
    if f.file.language == "markdown":
        from generator.markup.md_html import render_markdown

        return lambda text, link, symbol: render_markdown(text, link, symbol=symbol)
    from generator.markup.rst import render_rst

    return lambda text, link, symbol: render_rst(text, link, symbol=symbol, path=f.path, read=read)


def document_cache(config: Config) -> DocumentCache:
    from generator.markup.doc_html import CACHE_SUBDIR, DocumentCache
    from sourcebook.local_key import local_key

    return DocumentCache(config.out_dir / "cache" / CACHE_SUBDIR, local_key())


def _summaries(plan: PagePlan, pages: PageSink) -> dict[str, str]:
    """Known summaries by source path, and by `dir/` for modules (current state, including this run)."""
    out = {path: pages.summary(pid) for path, pid in plan.files.items()}
    out.update({d + "/": pages.summary(pid) for d, pid in plan.modules.items()})
    return out


def _anchors(facts: Mapping[str, FileFacts]) -> dict[tuple[str, str], str]:
    from generator.pages.anchors import anchor_ids

    out = {}
    for path, f in facts.items():
        for qualname, anchor in anchor_ids(f.symbols).items():
            out[(path, qualname)] = anchor
    return out


def module_readme(config: Config, plan: PagePlan, directory: str) -> tuple[str, str]:
    """(path, text) of the README directly in `directory`, if it is one of the scanned files."""
    from generator.analyze.scan import decode

    for path in plan.children[directory][0]:
        if posixpath.basename(path).lower() in README_NAMES:
            try:
                return path, decode((config.root / path).read_bytes())  # by BOM, like every source
            except OSError:
                return path, ""
    return "", ""


def module_hierarchies(plan: PagePlan, facts: Mapping[str, FileFacts], index: SymbolIndex
                       ) -> Callable[[str], Graph | None]:
    """directory -> the class hierarchy diagram of its direct files (None when nothing inherits)."""
    from generator.pages.diagrams import class_hierarchy, class_index, site_href

    classes = class_index(facts)

    def hierarchy(directory: str) -> Graph | None:
        page = plan.modules[directory]

        def href(path: str, qualname: str) -> str | None:
            link = index.href(page, path, qualname)
            return site_href(link) if link else None

        files = [facts[p] for p in plan.children[directory][0] if p in facts]
        return class_hierarchy(files, classes, href)

    return hierarchy


def module_import_diagrams(plan: PagePlan, graph: Any) -> Callable[[str], Graph | None]:
    """directory -> its import diagram (diagrams.module_imports: capped, subpackages folded, clustered)."""
    from generator.pages.diagrams import module_imports

    def imports(directory: str) -> Graph | None:
        files, subdirs = plan.children[directory]
        # the diagram reads the imports of the module's files and its subpackages' only: those, not all
        below = plan.files_under(directory)
        depends_on = {p: graph.depends_on[p] for p in below if p in graph.depends_on}
        return module_imports(directory, files=files, subdirs=subdirs, depends_on=depends_on,
                              pages=plan.files, modules=plan.modules, from_page=plan.modules[directory])

    return imports


def module_render_key(base: str, hierarchy: Graph | None, imports: Graph | None = None) -> str:
    """The rendering part of a module page's key (its diagrams are drawn from facts, not prose)."""
    return (base + ("\x1f" + hierarchy.mermaid() if hierarchy else "")
            + ("\x1e" + imports.mermaid() + imports.left_out if imports else ""))


def write_module_pages(run: PageRun) -> None:
    """Bottom-up, one depth level at a time, so every module sees its submodules' fresh summaries."""
    from generator.pages.markdown import render_module_page, render_version

    config, plan, facts, graph, writer, pages, notify = (
        run.config, run.plan, run.facts, run.graph, run.writer, run.pages, run.notify)

    version = render_version()
    extractive = ExtractiveWriter()
    anchors = _anchors(facts)
    hierarchies = module_hierarchies(plan, facts, run.symbols)
    import_diagrams = module_import_diagrams(plan, graph)
    ordered = plan.bottom_up_modules()
    levels: dict[int, list[str]] = {}
    for d in ordered:
        levels.setdefault(d.count("/") + 1 if d else 0, []).append(d)
    done = 0
    for depth in sorted(levels, reverse=True):
        summaries = _summaries(plan, pages)
        todo = []
        for d in levels[depth]:
            ctx = module_context(d, plan, facts, graph, summaries=summaries,
                                 readme=module_readme(config, plan, d)[1] if d else "")
            hierarchy, imports = hierarchies(d), import_diagrams(d)
            key = page_key(ctx.fingerprint(), writer.id, module_render_key(version, hierarchy, imports))
            if not pages.fresh(ctx.page_id, key):
                todo.append((ctx, key, (hierarchy, imports)))

        def write(item: tuple[Any, str, Any]) -> ModuleDraft:
            ctx = item[0]
            stored = pages.stored_draft(ctx.page_id, draft_key(ctx.fingerprint(), writer.id), ModuleDraft)
            if stored is not None:
                return stored
            draft = _safely(writer.module_page, extractive.module_page, ctx, ctx.page_id, pages.report)
            return pages.settle(ctx.page_id, draft, ModuleDraft, stable_key(ctx, writer.id),
                                draft_key(ctx.fingerprint(), writer.id))

        for (ctx, key, (hierarchy, imports)), draft in zip(todo, _map(write, todo, writer.concurrency),
                                                           strict=True):
            markdown = render_module_page(ctx, draft, writer_id=writer.id, file_anchors=anchors,
                                          file_pages=plan.files, module_pages=plan.modules,
                                          hierarchy=hierarchy, imports=imports)
            pages.put(ctx.page_id, key, markdown, PageState(
                key=key, kind="module", title=ctx.title, target_path=ctx.path, summary=draft.summary,
                written_by=draft.written_by, retry=draft.fallback),
                dkey=draft_key(ctx.fingerprint(), writer.id), draft=draft, stable=stable_key(ctx, writer.id))
        done += len(levels[depth])
        notify("modules", done, len(ordered))


def _readme_resolver(plan: PagePlan, readme_path: str, page_id: str = "") -> Callable[[str], str | None]:
    """A README's (or doc's) links to repository files/dirs -> links from `page_id` (default: the overview) to
    their pages; anything else is dropped."""
    from urllib.parse import unquote, urlsplit

    from generator.pages.markdown import relative_link

    base = posixpath.dirname(readme_path)
    here = page_id or OVERVIEW_ID

    def resolve(url: str) -> str | None:
        parts = urlsplit(url)
        target = posixpath.normpath(posixpath.join(base, unquote(parts.path))).strip("/")
        if target in ("", "."):
            target = ""
        if target in plan.files:
            return relative_link(here, plan.files[target])
        if target in plan.modules:
            return relative_link(here, plan.modules[target])
        return None

    return resolve


def root_readme(config: Config, plan: PagePlan) -> tuple[str, str]:
    found = module_readme(config, plan, "")
    return found if found[0] else ("", "")


def overview_orientation(config: Config, plan: PagePlan, facts: Mapping[str, FileFacts], graph: Any,
                         readme: str) -> Orientation:
    """The home page's entry points, abstractions, diagram and reading order (render-time inputs)."""
    from generator.analyze.plan import module_importance
    from generator.pages.orientation import cli_texts, manifest_texts, orientation

    return orientation(modules=plan.modules, files=plan.files, facts=facts, graph=graph,
                       importance=module_importance(plan, graph),
                       manifests=manifest_texts(config.root, plan.files), readme=readme,
                       sources=cli_texts(config.root, facts))


def topic_links(topics: Sequence[TopicContext]) -> list[tuple[str, str, str]]:
    """(title, page id, what it covers) of each topic page, for the home page's "Read next"."""
    from generator.markup.docmarkup import code_span

    out = []
    for t in topics:
        if t.kind == "architecture":
            about = "the source packages, what each imports, how the project is started"
        else:
            first = t.steps[0]
            about = (f"{len(t.steps)} functions in {len({s.path for s in t.steps})} files, starting at "
                     f"{code_span(first.qualname or first.path)} in {code_span(first.path)}")
        out.append((t.title, t.page_id, about))
    return out


def overview_render_key(version: str, orient: Orientation, topics: Sequence[tuple[str, str, str]]) -> str:
    """The rendering part of the home page's key: its orientation and the topic pages it links to."""
    return version + "\x1f" + orient.key() + "\x1f" + repr(list(topics))


def write_overview(run: PageRun) -> None:
    from generator.pages.markdown import render_overview_page, render_version

    config, plan, facts, graph, writer, pages, notify = (
        run.config, run.plan, run.facts, run.graph, run.writer, run.pages, run.notify)

    readme_path, readme = root_readme(config, plan)
    ctx = overview_context(project_name(config.root, config.site_name), plan, facts, graph,
                           summaries=_summaries(plan, pages), readme=readme, readme_path=readme_path,
                           skipped_count=run.skipped, description=project_description(config.root))
    orient = overview_orientation(config, plan, facts, graph, readme)
    reading = topic_links(topic_contexts(config, plan, facts, graph, _summaries(plan, pages))) \
        if writes_topics(writer) else []
    key = page_key(ctx.fingerprint(), writer.id, overview_render_key(render_version(), orient, reading))
    notify("overview", 0, 1)
    if not pages.fresh(OVERVIEW_ID, key):
        dkey = draft_key(ctx.fingerprint(), writer.id)
        draft: OverviewDraft | None = pages.stored_draft(OVERVIEW_ID, dkey, OverviewDraft)
        if draft is None:
            written = _safely(writer.overview, ExtractiveWriter().overview, ctx, OVERVIEW_ID, pages.report)
            draft = pages.settle(OVERVIEW_ID, written, OverviewDraft, stable_key(ctx, writer.id), dkey)
        markdown = render_overview_page(ctx, draft, writer_id=writer.id,
                                        resolve=_readme_resolver(plan, readme_path), file_pages=plan.files,
                                        file_anchors=_anchors(facts), orient=orient,
                                        index=run.symbols,
                                        summaries=_summaries(plan, pages), topics=reading)
        pages.put(OVERVIEW_ID, key, markdown, PageState(
            key=key, kind="overview", title=ctx.repo_name, target_path="", summary=draft.summary,
            written_by=draft.written_by, retry=draft.fallback), dkey=dkey, draft=draft,
            stable=stable_key(ctx, writer.id))
    notify("overview", 1, 1)


def topic_contexts(config: Config, plan: PagePlan, facts: Mapping[str, FileFacts], graph: Any,
                   summaries: Mapping[str, str]) -> list[TopicContext]:
    """The topic pages of this build: Architecture and the flows (generator/pages/topics.py)."""
    from generator.analyze.entry_points import find_entry_points
    from generator.analyze.plan import module_importance
    from generator.pages.orientation import cli_texts, manifest_texts, most_used
    from generator.pages.topics import plan_topics

    return plan_topics(repo=project_name(config.root, config.site_name), facts=facts, graph=graph,
                       modules=plan.modules,
                       entries=find_entry_points(manifest_texts(config.root, plan.files), facts,
                                                 sources=cli_texts(config.root, facts)),
                       abstractions=most_used(facts, graph.callers), summaries=summaries,
                       importance=module_importance(plan, graph))


def topic_diagram(ctx: TopicContext, plan: PagePlan, facts: Mapping[str, FileFacts], graph: Any,
                  index: SymbolIndex) -> Graph | None:
    from generator.analyze.plan import module_importance
    from generator.pages.topics import architecture_diagram, flow_diagram

    if ctx.kind == "flow":
        return flow_diagram(ctx, lambda path, qualname: index.href(ctx.page_id, path, qualname))
    return architecture_diagram(ctx, modules=plan.modules, files=plan.files, facts=facts,
                                depends_on=graph.depends_on, importance=module_importance(plan, graph))


def topic_key(ctx: TopicContext, writer_id: str, version: str, diagram: Graph | None) -> str:
    """A topic page's key: its evidence and writer (the draft), the renderer and its diagram."""
    return page_key(ctx.fingerprint(), writer_id, version + "\x1f" + (diagram.mermaid() if diagram else ""))


def writes_topics(writer: PageWriter) -> bool:
    """Topic pages are written by a model or not at all. Extracted, an Architecture page repeated the
    overview (package diagram, entry points, most-used abstractions) and a "How it works" page listed
    name-resolved calls as if they were the flow (flask: `_AppCtxGlobals.pop` "calls" `AppContext.pop`, from
    `self.__dict__.pop`): a page promising an explanation it cannot give. The extractive draft stays as the
    outline a small model fills part by part and as a failed model page's fallback (retried next run)."""
    return callable(getattr(writer, "topic_page", None))


def write_topic_pages(run: PageRun) -> list[TopicContext]:
    """The Architecture and "How it works" pages, after the overview (they read the module summaries); none
    without a model (writes_topics)."""
    from generator.pages.markdown import render_topic_page, render_version
    from generator.pages.topics import excerpts, extractive_topic

    config, plan, facts, graph, writer, pages, notify = (
        run.config, run.plan, run.facts, run.graph, run.writer, run.pages, run.notify)
    if not writes_topics(writer):
        notify("topics", 0, 0)
        return []
    topics = topic_contexts(config, plan, facts, graph, _summaries(plan, pages))
    index = run.symbols
    version = render_version()
    todo = []
    for ctx in topics:
        diagram = topic_diagram(ctx, plan, facts, graph, index)
        key = topic_key(ctx, writer.id, version, diagram)
        if not pages.fresh(ctx.page_id, key):
            todo.append((ctx, key, diagram))
    notify("topics", 0, len(todo))
    write_topic = getattr(writer, "topic_page", None)
    line_counts = {p: f.line_count for p, f in facts.items()}

    def source_text(path: str) -> str:
        return _source_text(config.root, run.texts, path)

    def write(item: tuple[Any, str, Any]) -> TopicDraft:
        ctx = item[0]
        dkey = draft_key(ctx.fingerprint(), writer.id)
        stored = pages.stored_draft(ctx.page_id, dkey, TopicDraft)
        if stored is not None:
            return stored
        if write_topic is None:  # not reached: writes_topics() checked it
            return extractive_topic(ctx)
        ctx = dataclasses.replace(ctx, line_counts=line_counts)
        ctx = dataclasses.replace(ctx, excerpts=excerpts(ctx, source_text))
        draft = _safely(write_topic, extractive_topic, ctx, ctx.page_id, pages.report)
        return pages.settle(ctx.page_id, draft, TopicDraft, stable_key(ctx, writer.id), dkey)

    for n, ((ctx, key, diagram), draft) in enumerate(
            zip(todo, _map(write, todo, writer.concurrency), strict=True), 1):
        markdown = render_topic_page(ctx, draft, writer_id=writer.id, facts=facts, index=index,
                                     diagram=diagram)
        pages.put(ctx.page_id, key, markdown, PageState(
            key=key, kind="topic", title=ctx.title, target_path="", summary=draft.summary,
            written_by=draft.written_by, retry=draft.fallback),
            dkey=draft_key(ctx.fingerprint(), writer.id), draft=draft, stable=stable_key(ctx, writer.id))
        notify("topics", n, len(todo))
    return topics


def file_text(root: Path, path: str) -> str:
    """A file's text read from the checkout ('' when it can no longer be read)."""
    return _source_text(root, {}, path)


def _source_text(root: Path, texts: Mapping[str, str], path: str) -> str:
    """A file's text: the scan's copy when it kept one, else read again; '' when it can no longer be read."""
    from generator.analyze.scan import decode, read_source

    text = texts.get(path)
    if text is not None:
        return text
    try:
        return decode(read_source(root, path))
    except SourcebookError:
        return ""
