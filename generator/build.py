"""The build pipeline, written out: scan -> parse -> graph -> plan -> write + render -> site -> index.

`build()` reads top to bottom as the stages it runs. Every expensive stage is content-addressed: a file whose
hash is unchanged is not re-parsed (facts cache), a page whose key is unchanged is neither re-written nor
re-rendered (page state), and the site is not rebuilt when no page changed. Pages of files that disappeared
are deleted. The page state is saved even when the run is interrupted, so the next run resumes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import posixpath
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from generator.facts import FileFacts, PageRecord, Skipped, SourceFile
from generator.plan import (
    OVERVIEW_ID,
    PagePlan,
    PageState,
    atomic_write_text,
    draft_key,
    file_context,
    is_stale,
    load_state,
    module_context,
    orphan_pages,
    overview_context,
    page_key,
    plan_pages,
    save_state,
)
from generator.write import ExtractiveWriter, FileDraft, ModuleDraft, OverviewDraft, PageWriter
from sourcebook.config import Config
from sourcebook.errors import SourcebookError

log = logging.getLogger(__name__)

STAGES = ("scan", "parse", "graph", "plan", "files", "modules", "overview", "site", "index")
# stage, done, total (total 0 = unknown); called from the building thread only
Progress = Callable[[str, int, int], None]
T = TypeVar("T")
D = TypeVar("D", bound=BaseModel)
R = TypeVar("R")

SAVE_EVERY_S = 5.0  # page state is also saved this often while pages are written
_README_NAMES = ("readme.md", "readme.markdown", "readme.rst", "readme.txt", "readme")


@dataclass
class BuildReport:
    root: Path
    out_dir: Path
    writer_id: str
    files: int = 0
    symbols: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    parsed: int = 0  # files parsed this run
    parse_cached: int = 0  # files whose facts came from the cache
    warnings: int = 0
    pages_total: int = 0
    pages_written: list[str] = field(default_factory=list)
    pages_unchanged: int = 0
    pages_deleted: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)  # --check: pages that would be (re)written or deleted
    write_failures: list[str] = field(default_factory=list)  # pages whose writer failed (fallback used)
    site_built: bool = False
    site_dir: Path | None = None
    index: Any = None  # generator.index.IndexReport when the index was updated
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def skip_reasons(self) -> dict[str, int]:
        return dict(Counter(s.reason for s in self.skipped).most_common())


def build(config: Config, *, writer: PageWriter | None = None, check: bool = False, site: bool = True,
          index: bool = True, progress: Progress | None = None) -> BuildReport:
    """Build (or with `check`, only assess) the wiki, the site and the index of `config.root`."""
    from generator.graph import build_graph
    from generator.scan import scan

    writer = writer or ExtractiveWriter()
    report = BuildReport(root=config.root, out_dir=config.out_dir, writer_id=writer.id)
    notify = progress or (lambda _stage, _done, _total: None)
    timer = _Timer(report.timings)

    with timer("scan"):
        notify("scan", 0, 0)
        scanned = scan(config)
        report.skipped = list(scanned.skipped)
        notify("scan", len(scanned.files), len(scanned.files))

    with timer("parse"):
        facts, texts = parse_files(config, scanned.files, report, notify, save=not check)
        report.files = len(facts)
        report.symbols = sum(len(f.symbols) for f in facts.values())
        report.warnings = sum(len(f.warnings) for f in facts.values())

    with timer("graph"):
        notify("graph", 0, 1)
        graph = build_graph(list(facts.values()), _go_modules(config, scanned.files, scanned.skipped))
        notify("graph", 1, 1)

    with timer("plan"):
        plan = plan_pages(sorted(facts))
        state = load_state(config.out_dir)
        previous = {row.target_path: row.source_sha for row in state.values() if row.kind == "file"}
        report.pages_total = len(plan.all_ids)
        notify("plan", 1, 1)

    if check:
        report.stale = check_stale(config, plan, facts, graph, state=state, writer=writer,
                                   skipped=len(report.skipped))
        return report

    pages = PageSink(config, state, report)
    run = PageRun(config, plan, facts, graph, writer, pages, notify, texts, len(report.skipped))
    try:
        with timer("files"):
            write_file_pages(run)
        with timer("modules"):
            write_module_pages(run)
        with timer("overview"):
            write_overview(run)
        report.pages_deleted = pages.prune(plan.all_ids)
    finally:
        pages.save()  # also on Ctrl-C or a provider outage: what was written is not written again
    if previous:  # not on a first build: every file would be "new"
        record_changes(config, facts, report, previous=previous)

    if site:
        with timer("site"):
            notify("site", 0, 1)
            report.site_built = build_site_if_needed(config, plan, pages.state, report)
            report.site_dir = config.site_dir
            notify("site", 1, 1)

    if index:
        with timer("index"):
            notify("index", 0, 1)
            from generator.embed import get_embedder
            from generator.index import update_index
            from generator.llm_writer import facts_with_docstrings

            # the symbols table stores LLM-written docstrings too (docstring_source="llm")
            generated = {p: pages.state[pid].docstrings
                         for p, pid in plan.files.items() if pid in pages.state}
            indexed = facts_with_docstrings(facts, generated)
            report.index = update_index(config, list(scanned.files), indexed, pages.records(plan.all_ids),
                                        get_embedder(config.embed), prune=True, texts=texts)
            notify("index", 1, 1)
    return report


# -- parse ---------------------------------------------------------------------------------------------------


def parse_files(config: Config, files: Sequence[SourceFile], report: BuildReport, notify: Progress, *,
                save: bool = True) -> tuple[dict[str, FileFacts], dict[str, str]]:
    """Facts for every scanned file: from the cache when (path, sha, parser) match, else parsed now.

    Returns the facts by path and the decoded text of the files read in this run (the index reuses them).
    """
    from generator.factcache import load_facts_cache, save_facts_cache
    from generator.parse import extract
    from generator.scan import decode, read_source

    cached = load_facts_cache(config.out_dir)
    facts: dict[str, FileFacts] = {}
    texts: dict[str, str] = {}
    for n, f in enumerate(files, 1):
        hit = cached.get((f.path, f.sha))
        if hit is not None and hit.file == f:
            facts[f.path] = hit
            report.parse_cached += 1
        else:
            try:
                source = read_source(config.root, f.path)
            except SourcebookError as exc:  # vanished or changed type since the scan: skip it, say why
                report.skipped.append(Skipped(f.path, f"unreadable: {exc}"))
                continue
            facts[f.path] = extract(f, source)
            texts[f.path] = decode(source)
            report.parsed += 1
        if n % 25 == 0 or n == len(files):
            notify("parse", n, len(files))
    if save and (report.parsed or len(cached) != len(facts)):
        save_facts_cache(config.out_dir, facts)
    return facts, texts


def _go_modules(config: Config, files: Iterable[SourceFile], skipped: Iterable[Skipped]) -> dict[str, str]:
    from generator.graph import go_modules

    texts = {}
    for path in {f.path for f in files} | {s.path for s in skipped}:
        if posixpath.basename(path) == "go.mod":
            try:
                texts[path] = (config.root / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
    return go_modules(texts)


# -- write + render ------------------------------------------------------------------------------------------


class PageSink:
    """Renders drafts to docs/, remembers keys and summaries in the page state, deletes orphans."""

    def __init__(self, config: Config, state: dict[str, PageState], report: BuildReport) -> None:
        self.config = config
        self.docs = config.docs_dir
        self.state = state
        self.report = report
        self.dirty = False
        self.saved_at = time.monotonic()

    def fresh(self, page_id: str, key: str) -> bool:
        if is_stale(page_id, key, self.state, self.docs):
            return False
        self.report.pages_unchanged += 1
        return True

    def summary(self, page_id: str) -> str:
        row = self.state.get(page_id)
        return row.summary if row else ""

    def stored_draft(self, page_id: str, dkey: str, model: type[D]) -> D | None:
        """The draft this page was last rendered from, if its inputs and writer are unchanged."""
        row = self.state.get(page_id)
        if row is None or row.retry or row.draft_key != dkey or not row.draft:
            return None
        try:
            return model.model_validate(row.draft)
        except ValidationError:
            return None  # a draft from an older model layout: write it again

    def put(self, page_id: str, key: str, markdown: str, row: PageState, *, dkey: str = "",
            draft: BaseModel | None = None) -> None:
        atomic_write_text(self.docs / page_id, markdown)
        row.key = key
        row.draft_key = dkey
        row.draft = draft.model_dump(mode="json") if draft is not None else {}
        self.state[page_id] = row
        self.report.pages_written.append(page_id)
        if row.retry and page_id not in self.report.write_failures:  # a writer's own fallback counts too
            self.report.write_failures.append(page_id)
        self.dirty = True
        if time.monotonic() - self.saved_at > SAVE_EVERY_S:
            self.save()  # a killed process (no finally) loses at most a few seconds of written pages

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
            save_state(self.config.out_dir, self.state)
            self.dirty = False
        self.saved_at = time.monotonic()

    def records(self, planned: Iterable[str]) -> list[PageRecord]:
        out = []
        for page_id in sorted(planned):
            row = self.state.get(page_id)
            path = self.docs / page_id
            if row is None or not path.is_file():
                continue
            out.append(PageRecord(id=page_id, kind=row.kind, title=row.title,  # type: ignore[arg-type]
                                  target_path=row.target_path, summary=row.summary,
                                  markdown=path.read_text(encoding="utf-8"), symbols=tuple(row.symbols),
                                  written_by="llm" if row.written_by == "llm" else "extracted"))
        return out


def _remove_empty_dirs(directory: Path, stop: Path) -> None:
    while directory != stop and directory.is_dir() and not any(directory.iterdir()):
        directory.rmdir()
        directory = directory.parent


def _safely(write: Callable[[Any], T], fallback: Callable[[Any], T], ctx: Any, page_id: str,
            report: BuildReport) -> T:
    """The writer's draft, or the extractive one marked as a fallback when the writer fails for this page."""
    try:
        return write(ctx)
    except SourcebookError as exc:
        log.warning("%s: writer failed, using extracted prose (will retry next run): %s", page_id, exc)
        report.write_failures.append(page_id)
        draft = fallback(ctx)
        draft.fallback = True  # type: ignore[attr-defined]
        return draft


def _map(fn: Callable[[T], R], items: Sequence[T], concurrency: int) -> Iterator[R]:
    """fn over items, in order; threads when the writer allows (LLM calls wait on the network)."""
    if concurrency <= 1 or len(items) <= 1:
        yield from map(fn, items)
        return
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        yield from pool.map(fn, items)


@dataclass(frozen=True)
class PageRun:
    """Everything the page stages share in one build."""

    config: Config
    plan: PagePlan
    facts: Mapping[str, FileFacts]
    graph: Any  # generator.graph.RepoGraph
    writer: PageWriter
    pages: PageSink
    notify: Progress
    texts: Mapping[str, str]
    skipped: int


def write_file_pages(run: PageRun) -> None:
    from generator.llm_writer import apply_docstrings, generated_docstrings
    from generator.render import render_file_page, render_version

    config, plan, facts, graph, texts, writer, pages, notify = (
        run.config, run.plan, run.facts, run.graph, run.texts, run.writer, run.pages, run.notify)
    from generator.scan import decode, read_source

    version = render_version() + "\x1f" + config.repo_url
    extractive = ExtractiveWriter()
    todo = []
    for path in sorted(facts):
        ctx = file_context(facts[path], plan, graph)
        key = page_key(ctx.fingerprint(), writer.id, version)
        if not pages.fresh(ctx.page_id, key):
            todo.append((ctx, key))
    notify("files", 0, len(todo))

    def write(item: tuple[Any, str]) -> tuple[FileDraft, dict[str, str]]:
        """(draft, generated docstrings): re-used from the state when only the rendering changed."""
        ctx, _ = item
        stored = pages.stored_draft(ctx.page_id, draft_key(ctx.fingerprint(), writer.id), FileDraft)
        if stored is not None:
            return stored, dict(pages.state[ctx.page_id].docstrings)
        text = texts.get(ctx.path)
        if text is None:
            try:
                text = decode(read_source(config.root, ctx.path))
            except SourcebookError:
                text = ""
        ctx = dataclasses.replace(ctx, source=text)
        draft = _safely(writer.file_page, extractive.file_page, ctx, ctx.page_id, pages.report)
        return draft, generated_docstrings(draft)

    for n, ((ctx, key), (draft, generated)) in enumerate(
            zip(todo, _map(write, todo, writer.concurrency), strict=True), 1):
        # generated docstrings are shown (marked as generated) on the page only; the key stays on the facts
        shown = dataclasses.replace(ctx, facts=apply_docstrings(ctx.facts, generated))
        markdown = render_file_page(shown, draft, writer_id=writer.id, repo_url=config.repo_url,
                                    module_page=plan.modules[ctx.module])
        pages.put(ctx.page_id, key, markdown, PageState(
            key=key, kind="file", title=posixpath.basename(ctx.path), target_path=ctx.path,
            summary=draft.summary, written_by=draft.written_by, retry=draft.fallback,
            symbols=[s.qualname for s in ctx.facts.symbols], docstrings=generated,
            source_sha=ctx.facts.file.sha),
            dkey=draft_key(ctx.fingerprint(), writer.id), draft=draft)
        notify("files", n, len(todo))


def _summaries(plan: PagePlan, pages: PageSink) -> dict[str, str]:
    """Known summaries by source path, and by `dir/` for modules (current state, including this run)."""
    out = {path: pages.summary(pid) for path, pid in plan.files.items()}
    out.update({d + "/": pages.summary(pid) for d, pid in plan.modules.items()})
    return out


def _anchors(facts: Mapping[str, FileFacts]) -> dict[tuple[str, str], str]:
    from generator.render import anchor_ids

    out = {}
    for path, f in facts.items():
        for qualname, anchor in anchor_ids(f.symbols).items():
            out[(path, qualname)] = anchor
    return out


def _module_readme(config: Config, plan: PagePlan, directory: str) -> tuple[str, str]:
    """(path, text) of the README directly in `directory`, if it is one of the scanned files."""
    for path in plan.children[directory][0]:
        if posixpath.basename(path).lower() in _README_NAMES:
            try:
                return path, (config.root / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                return path, ""
    return "", ""


def write_module_pages(run: PageRun) -> None:
    """Bottom-up, one depth level at a time, so every module sees its submodules' fresh summaries."""
    from generator.render import render_module_page, render_version

    config, plan, facts, graph, writer, pages, notify = (
        run.config, run.plan, run.facts, run.graph, run.writer, run.pages, run.notify)

    version = render_version()
    extractive = ExtractiveWriter()
    anchors = _anchors(facts)
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
                                 readme=_module_readme(config, plan, d)[1] if d else "")
            key = page_key(ctx.fingerprint(), writer.id, version)
            if not pages.fresh(ctx.page_id, key):
                todo.append((ctx, key))

        def write(item: tuple[Any, str]) -> ModuleDraft:
            ctx = item[0]
            stored = pages.stored_draft(ctx.page_id, draft_key(ctx.fingerprint(), writer.id), ModuleDraft)
            if stored is not None:
                return stored
            return _safely(writer.module_page, extractive.module_page, ctx, ctx.page_id, pages.report)

        for (ctx, key), draft in zip(todo, _map(write, todo, writer.concurrency), strict=True):
            markdown = render_module_page(ctx, draft, writer_id=writer.id, file_anchors=anchors,
                                          file_pages=plan.files)
            pages.put(ctx.page_id, key, markdown, PageState(
                key=key, kind="module", title=ctx.title, target_path=ctx.path, summary=draft.summary,
                written_by=draft.written_by, retry=draft.fallback),
                dkey=draft_key(ctx.fingerprint(), writer.id), draft=draft)
        done += len(levels[depth])
        notify("modules", done, len(ordered))


def _readme_resolver(plan: PagePlan, readme_path: str) -> Callable[[str], str | None]:
    """README links to repository files/dirs -> links to their pages; anything else is dropped."""
    from urllib.parse import unquote, urlsplit

    from generator.render import relative_link

    base = posixpath.dirname(readme_path)

    def resolve(url: str) -> str | None:
        parts = urlsplit(url)
        target = posixpath.normpath(posixpath.join(base, unquote(parts.path))).strip("/")
        if target in ("", "."):
            target = ""
        if target in plan.files:
            return relative_link(OVERVIEW_ID, plan.files[target])
        if target in plan.modules:
            return relative_link(OVERVIEW_ID, plan.modules[target])
        return None

    return resolve


def _readme(config: Config, plan: PagePlan) -> tuple[str, str]:
    found = _module_readme(config, plan, "")
    return found if found[0] else ("", "")


def write_overview(run: PageRun) -> None:
    from generator.render import render_overview_page, render_version

    config, plan, facts, graph, writer, pages, notify = (
        run.config, run.plan, run.facts, run.graph, run.writer, run.pages, run.notify)

    readme_path, readme = _readme(config, plan)
    ctx = overview_context(config.site_name or config.root.name, plan, facts, graph,
                           summaries=_summaries(plan, pages), readme=readme, readme_path=readme_path,
                           skipped_count=run.skipped)
    key = page_key(ctx.fingerprint(), writer.id, render_version())
    notify("overview", 0, 1)
    if not pages.fresh(OVERVIEW_ID, key):
        dkey = draft_key(ctx.fingerprint(), writer.id)
        draft: OverviewDraft = pages.stored_draft(OVERVIEW_ID, dkey, OverviewDraft) or _safely(
            writer.overview, ExtractiveWriter().overview, ctx, OVERVIEW_ID, pages.report)
        markdown = render_overview_page(ctx, draft, writer_id=writer.id,
                                        resolve=_readme_resolver(plan, readme_path), file_pages=plan.files,
                                        file_anchors=_anchors(facts))
        pages.put(OVERVIEW_ID, key, markdown, PageState(
            key=key, kind="overview", title=ctx.repo_name, target_path="", summary=draft.summary,
            written_by=draft.written_by, retry=draft.fallback), dkey=dkey, draft=draft)
    notify("overview", 1, 1)


def record_changes(config: Config, facts: Mapping[str, FileFacts], report: BuildReport, *,
                   previous: Mapping[str, str], limit: int = 20) -> None:
    """Dated facts for the answer engine: files added, changed or deleted since the previous build.

    `previous` maps each file documented by the last build to its content hash then. At most `limit` facts
    of each kind are recorded per build (a mass change is one commit, not a history).
    """
    from answer.episodes import EpisodeStore

    store = EpisodeStore(config.out_dir)
    changed = [p for p, f in sorted(facts.items()) if previous.get(p) not in (None, "", f.file.sha)]
    added = [p for p in sorted(facts) if p not in previous]
    gone = [p for p in sorted(previous) if p not in facts]
    for path in changed[:limit]:
        store.record_auto(f"{path} changed; its wiki page was regenerated", scope=path)
    for path in added[:limit]:
        store.record_auto(f"{path} was added to the repository and the wiki", scope=path)
    for path in gone[:limit]:
        store.record_auto(f"{path} was deleted; its wiki page was removed", scope=posixpath.dirname(path))


# -- check ---------------------------------------------------------------------------------------------------


def check_stale(config: Config, plan: PagePlan, facts: Mapping[str, FileFacts], graph: Any, *,
                state: Mapping[str, PageState], writer: PageWriter, skipped: int) -> list[str]:
    """Pages a build would write or delete, without writing anything.

    File pages are judged by their key. A module or the overview whose child is stale is stale too (its
    children's new summaries are unknown until they are written); otherwise it is judged by its key.
    """
    from generator.render import render_version

    version = render_version()
    docs = config.docs_dir
    stale: set[str] = set()
    for path in sorted(facts):
        ctx = file_context(facts[path], plan, graph)
        if is_stale(ctx.page_id, page_key(ctx.fingerprint(), writer.id, version + "\x1f" + config.repo_url),
                    state, docs):
            stale.add(ctx.page_id)
    summaries = {p: (state[pid].summary if pid in state else "") for p, pid in plan.files.items()}
    summaries.update({d + "/": (state[pid].summary if pid in state else "")
                      for d, pid in plan.modules.items()})
    for d in plan.bottom_up_modules():
        files, subdirs = plan.children[d]
        children = [plan.files[p] for p in files] + [plan.modules[s] for s in subdirs]
        mctx = module_context(d, plan, facts, graph, summaries=summaries,
                              readme=_module_readme(config, plan, d)[1] if d else "")
        if any(c in stale for c in children) or is_stale(
                mctx.page_id, page_key(mctx.fingerprint(), writer.id, version), state, docs):
            stale.add(mctx.page_id)
    readme_path, readme = _readme(config, plan)
    octx = overview_context(config.site_name or config.root.name, plan, facts, graph, summaries=summaries,
                            readme=readme, readme_path=readme_path, skipped_count=skipped)
    if stale or is_stale(OVERVIEW_ID, page_key(octx.fingerprint(), writer.id, version), state, docs):
        stale.add(OVERVIEW_ID)
    stale.update(orphan_pages(plan.all_ids, state, docs))
    return sorted(stale)


# -- site ----------------------------------------------------------------------------------------------------


def build_site_if_needed(config: Config, plan: PagePlan, state: Mapping[str, PageState],
                         report: BuildReport) -> bool:
    """Write mkdocs.yml + theme and run `mkdocs build --strict`, unless nothing changed since the last one."""
    from generator.render import build_nav, data_dir, render_mkdocs_yml
    from generator.site import THEME_DIR, build_site, install_theme, write_config

    nav = build_nav(modules=plan.modules, files=plan.files, children=plan.children)
    yml = render_mkdocs_yml(site_name=config.site_name or config.root.name, nav=nav, repo_url=config.repo_url,
                            theme_dir=THEME_DIR, docs_dir="docs", site_dir="site")
    digest = hashlib.sha256(yml.encode())
    for page_id in sorted(plan.all_ids):
        digest.update(page_id.encode() + b"\0" + (state[page_id].key if page_id in state else "").encode())
    for path in sorted(data_dir("site").rglob("*")):
        if path.is_file():
            digest.update(path.read_bytes())
    stamp = config.out_dir / "state" / "site.sha256"
    fingerprint = digest.hexdigest()
    if (stamp.is_file() and stamp.read_text() == fingerprint and (config.site_dir / "index.html").is_file()
            and not report.pages_written and not report.pages_deleted):
        return False
    install_theme(config.out_dir)
    # mkdocs needs ~15 ms of CPU per page; the generous limit only guards against a hung process
    build_site(write_config(config.out_dir, yml), timeout_s=600.0 + 0.5 * len(plan.all_ids))
    atomic_write_text(stamp, fingerprint)
    return True


class _Timer:
    def __init__(self, into: dict[str, float]) -> None:
        self.into = into

    def __call__(self, stage: str) -> _Timer:
        self.stage = stage
        return self

    def __enter__(self) -> None:
        self.started = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        self.into[self.stage] = self.into.get(self.stage, 0.0) + time.perf_counter() - self.started
