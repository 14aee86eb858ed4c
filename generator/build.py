"""The build pipeline, written out: analyze (scan, parse, graph, plan) -> write + render -> site -> index.

`build()` reads top to bottom as the stages it runs. Every expensive stage is content-addressed: a file whose
hash is unchanged is not re-parsed (facts cache), a page whose key is unchanged is neither re-written nor
re-rendered (page state, see pages/page_sink.py), and the site is not rebuilt when no page changed. Pages of
files that disappeared are deleted. The page state is saved even when the run is interrupted, so it resumes.
When a build changed few pages of an existing site, its site and index steps run side by side (the site
engine is a process of its own); a failed site build is then reported once the index step is done.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from generator.analyze.analysis import Analysis
from generator.analyze.factcache import cache_path
from generator.analyze.manifests import project_name, site_title
from generator.analyze.plan import PagePlan, PageState, fallback_pages, load_state, orphan_pages, state_path
from generator.build_report import BuildReport, Progress, file_changes
from generator.index.build_cache import CacheUpdate, SharedCache, cache_update, empty_cache
from generator.index.refresh import Checkout, IndexUpdate, read_source, update_from
from generator.pages.anchors import SymbolIndex
from generator.pages.index_inputs import PageInputs
from generator.pages.kinds import PAGE_KINDS, StaleCheck
from generator.pages.page_sink import PageSink
from generator.pages.stages import PageRun
from generator.pages.writer import ExtractiveWriter, PageWriter
from sourcebook.atomic import atomic_write_text
from sourcebook.config import Config

log = logging.getLogger(__name__)

STAGES = ("scan", "parse", "graph", "plan", *(kind.stage for kind in PAGE_KINDS), "site", "index")
T = TypeVar("T")
D = TypeVar("D", bound=BaseModel)
R = TypeVar("R")





def build(config: Config, *, writer: PageWriter | None = None, check: bool = False, site: bool = True,
          index: bool = True, progress: Progress | None = None,
          lock_wait: float | None = None, site_workers: int | None = None,
          parse_workers: int | None = None) -> BuildReport:
    """Build (or with `check`, only assess) the wiki, the site and the index of `config.root`.

    A build holds its output directory's lock (sourcebook/lock.py): a second build of the same repository
    waits for the first (at most `lock_wait` seconds, then LockError); `check` writes nothing and needs none.
    `site_workers`: the processes rendering pages, the wiki's Markdown and the site's HTML (default
    SOURCEBOOK_SITE_WORKERS, else the usable CPUs). `parse_workers`: the processes parsing files and making
    index rows (default SOURCEBOOK_PARSE_WORKERS, else `site_workers` when given: one number sets a build's
    share of the machine, else the usable CPUs).
    """
    if check:
        return run_stages(config, writer=writer, check=True, site=site, index=index, progress=progress,
                          site_workers=site_workers, parse_workers=parse_workers)
    from sourcebook.lock import output_lock

    with output_lock(config.out_dir, wait=lock_wait):
        if index:  # before anything reads the index (the facts and the build cache it shares)
            from generator.index.writer import recover_index

            recover_index(config)
        return run_stages(config, writer=writer, check=False, site=site, index=index, progress=progress,
                          site_workers=site_workers, parse_workers=parse_workers)


_OUTPUT_FOLDERS = ("state", "docs", "cache", "index", "site", "theme")


def _check_output_folders(config: Config) -> None:
    """One line, before any work, for a file where sourcebook keeps a folder (a committed `.sourcebook/state`
    file ended the build in a NotADirectoryError traceback at its first write)."""
    from sourcebook.errors import ConfigError

    files = [config.out_dir / name for name in _OUTPUT_FOLDERS
             if (config.out_dir / name).exists() and not (config.out_dir / name).is_dir()]
    if files:
        raise ConfigError(f"{', '.join(map(str, files))}: a file where sourcebook keeps a folder; "
                          "move it away (or pass --out DIR)")


def run_stages(config: Config, *, writer: PageWriter | None, check: bool, site: bool, index: bool,
               progress: Progress | None, site_workers: int | None = None,
               parse_workers: int | None = None) -> BuildReport:
    """The stages of `build`, top to bottom (the caller holds the output lock unless `check`)."""
    writer = writer or ExtractiveWriter()
    _check_output_folders(config)
    if site and not check:
        from generator.site.publish import THEME_DIR, check_owned, set_aside_foreign

        # before any page is written (or paid for): theme/ and site/ are replaced at the end; a committed
        # one (sourcebook's, not this user's) is moved aside first, so the build replaces it
        for directory in (config.out_dir / THEME_DIR, config.site_dir):
            set_aside_foreign(directory)
            check_owned(directory)
    report = BuildReport(root=config.root, out_dir=config.out_dir, writer_id=writer.id)
    notify = progress or (lambda _stage, _done, _total: None)
    timer = _Timer(report.timings, report.cpu)
    processes = _parse_processes(parse_workers, site_workers)  # this process and forked workers
    render = site_workers or _render_processes()  # the file pages' Markdown

    # read even by --check and --no-index runs (a pull request's check on a fresh runner): it is only loaded
    # when a page is missing here, and there is none to load without an index
    shared = shared_cache(config)
    with timer("scan+parse"):
        # a fresh runner has no facts cache: the facts the shared index holds for the same files are reused
        from generator.index.stored_analysis import indexed_facts

        known = None if cache_path(config.out_dir).is_file() else indexed_facts(config)
        analysis = read_source(config, Checkout(known=known, save_cache=not check, notify=notify,
                                                processes=processes))
        facts, texts = analysis.facts, analysis.texts
        report.skipped = analysis.skipped
        report.parsed, report.parse_cached = analysis.parsed, analysis.parse_cached
        report.files = len(facts)
        report.symbols = sum(len(f.symbols) for f in facts.values())
        report.warnings = sum(len(f.warnings) for f in facts.values())

    with timer("graph"):
        notify("graph", 0, 1)
        graph = analysis.graph
        notify("graph", 1, 1)

    with timer("plan"):
        plan = analysis.plan
        state = load_state(config.out_dir)
        previous = {row.target_path: row.source_sha for row in state.values() if row.kind == "file"}
        report.pages_total = len(plan.all_ids)
        notify("plan", 1, 1)

    if check:
        report.stale = check_stale(config, analysis, state=state, writer=writer, shared=shared)
        report.fallbacks = fallback_pages(state, analysis.plan.all_ids | {
            pid for pid in state if pid.startswith("topics/")})
        return report

    pages = PageSink(config, state, report, shared)
    run = PageRun(config, plan, facts, graph, writer, pages, notify, texts, len(report.skipped),
                  SymbolIndex.build(facts.values(), plan.files), processes=render)
    planned = set(plan.all_ids)
    topics: list[tuple[str, str]] = []  # (title, page id) of the pages beyond the plan (topics), for the nav
    try:
        for kind in PAGE_KINDS:  # in order: each kind reads the summaries of the kinds before it
            with timer(kind.stage):
                added = kind.write(run)
            topics += added
            planned |= {page_id for _, page_id in added}
        report.pages_total = len(planned)
        report.pages_deleted = pages.prune(planned)
    finally:
        pages.save()  # also on Ctrl-C or a provider outage: what was written is not written again
    if previous:  # not on a first build: every file would be "new"
        report.changes = file_changes(facts, previous)

    def site_step() -> None:
        from generator.pages.remote import source_links
        from generator.pages.wiki_map import wiki_map, write_wiki_map

        # what the served wiki's ask box links citations with (a docs asset: part of the site)
        links = source_links(config.root, config.repo_url)
        write_wiki_map(config.docs_dir, wiki_map(plan.files, facts, links))
        report.site_built = build_site_if_needed(config, plan, pages.state, report,
                                                 kinds={p: f.file.kind for p, f in facts.items()},
                                                 topics=topics, workers=site_workers)
        report.site_dir = config.site_dir

    beside = None
    if site:
        notify("site", 0, 1)
        if index and _small_update(config, report):
            beside = _Beside(site_step)  # the site engine renders while the index step runs
        else:
            with timer("site"):
                site_step()
            notify("site", 1, 1)

    try:
        if index:
            with timer("index"):
                notify("index", 0, 1)
                from generator.index.embed import get_embedder
                from generator.pages.writer import facts_with_docstrings

                # the symbols table stores LLM-written docstrings too (docstring_source="llm")
                generated = {p: pages.state[pid].docstrings
                             for p, pid in plan.files.items() if pid in pages.state}
                # the pages digested, made into index records only where the index step needs them
                records = PageInputs(config.docs_dir, pages.state, planned, config.out_dir,
                                     state_file=state_path(config.out_dir))  # saved above
                report.index = update_from(config, analysis, get_embedder(config.embed), IndexUpdate(
                    prune=True, pages=records, facts=facts_with_docstrings(facts, generated),
                    build_cache=_cache_update(planned, pages.state, writer, records), processes=processes))
                from generator.index.callers_cache import keep_callers

                keep_callers(config, graph.callers)  # the asks to come need not resolve the graph again
                notify("index", 1, 1)
    finally:
        if beside is not None:
            beside.join(report)  # a failed site build raises here, once the index step is over
            notify("site", 1, 1)
    return report


def _small_update(config: Config, report: BuildReport) -> bool:
    """Whether this build changed few pages of an existing site: its site and index steps then overlap (each
    is small, and the site step mostly waits on the engine's process). A cold build runs them one after the
    other: their memory peaks would add up."""
    changed = len(report.pages_written) + len(report.pages_deleted)
    return (config.site_dir / "index.html").is_file() and changed <= max(20, report.pages_total // 20)


class _Beside:
    """A step run in a thread beside the build's own (the site step beside the index step). `join` waits for
    it, records its wall time and its children's CPU (the site engine's process) as the "site" stage (taken
    out of the stage that ran meanwhile, whose timer saw the engine's CPU when the thread reaped it), then
    raises what the step raised."""

    def __init__(self, step: Callable[[], None]) -> None:
        import threading

        self.error: BaseException | None = None
        self.seconds = self.cpu = 0.0
        self.thread = threading.Thread(target=self._run, args=(step,), name="sourcebook-site", daemon=True)
        self.thread.start()

    def _run(self, step: Callable[[], None]) -> None:
        started, cpu = time.perf_counter(), _children_cpu()
        try:
            step()
        except BaseException as exc:  # noqa: BLE001 - handed to the build's thread by join()
            self.error = exc
        finally:
            self.seconds, self.cpu = time.perf_counter() - started, _children_cpu() - cpu

    def join(self, report: BuildReport) -> None:
        self.thread.join()
        report.timings["site"] = report.timings.get("site", 0.0) + self.seconds
        report.cpu["site"] = report.cpu.get("site", 0.0) + self.cpu
        if "index" in report.cpu:
            report.cpu["index"] = max(0.0, report.cpu["index"] - self.cpu)
        if self.error is not None:
            raise self.error


def _parse_processes(parse_workers: int | None, site_workers: int | None) -> int:
    """The processes parsing files and making index rows: `parse_workers`, SOURCEBOOK_PARSE_WORKERS,
    `site_workers`, SOURCEBOOK_SITE_WORKERS, else the CPUs this process may use (the first one given)."""
    from sourcebook.settings import current

    return parse_workers or current().parse_workers or site_workers or _render_processes()


def _render_processes() -> int:
    """SOURCEBOOK_SITE_WORKERS, else the CPUs this process may use: the processes that render pages."""
    from generator.site.publish import site_workers

    return site_workers()


# -- the shared build cache ----------------------------------------------------------------------------------


def shared_cache(config: Config) -> SharedCache:
    """The build cache stored beside the index (build_cache.py), read only if a page is missing here."""
    from generator.index.cache_table import BuildCacheReader

    reader = BuildCacheReader(config)
    return SharedCache(reader.rows, reader.rows)


def _cache_update(planned: set[str], state: Mapping[str, PageState], writer: PageWriter,
                  pages: PageInputs) -> CacheUpdate:
    """What this build publishes beside the index: every page's state and Markdown (read from docs/ when its
    row is made; `pages` also remembers what earlier runs derived from them), and its LLM ledger."""
    from generator.pages.model_writer import ModelWriter

    ledger = None
    if isinstance(writer, ModelWriter) and writer.ledger.entries:
        run = writer.ledger
        ledger = (f"{time.strftime('%Y%m%dT%H%M%S', time.gmtime(run.started))}-{os.getpid()}", run.to_dict())
    return cache_update(state, planned, pages.markdown, ledger, memo=pages)


# -- check ---------------------------------------------------------------------------------------------------


def check_stale(config: Config, analysis: Analysis, *, state: Mapping[str, PageState],
                writer: PageWriter, shared: SharedCache | None = None) -> list[str]:
    """Pages whose inputs changed (a build would rewrite them) or that it would delete; writes nothing.

    File pages are judged by their key. A module or the overview whose child's inputs changed is stale too
    (its children's new summaries are unknown until they are written); otherwise it is judged by its key.
    A fallback page waiting for its retry is not stale, and does not make its parents stale: the same
    inputs give the same extractive summary, so a failed retry changes nothing above it (`fallback_pages`
    lists those pages separately). A page the shared build cache holds at its current key is not stale:
    a build restores it as it is.
    """
    return sorted(judge_pages(config, analysis, state=state, writer=writer, shared=shared).stale)


def judge_pages(config: Config, analysis: Analysis, *, state: Mapping[str, PageState], writer: PageWriter,
                shared: SharedCache | None = None) -> StaleCheck:
    """`check_stale`'s walk of the page kinds: the pages found stale, and the key each page was judged by
    (`keys`: the keys a build would write, planned by the same functions)."""
    from generator.pages.render_markdown import render_version

    check = StaleCheck(config, analysis, state, writer, shared or empty_cache(), render_version())
    for kind in PAGE_KINDS:
        kind.stale(check)
    check.stale.update(orphan_pages(check.planned, state, config.docs_dir))
    return check


# -- site ----------------------------------------------------------------------------------------------------


def site_code_version() -> str:
    """The site step's code: the publisher's and the MkDocs hooks' import closures, the site engine with
    them. Their files are read with ast, not imported: a build whose stamp matches never loads the engine."""
    from sourcebook.code_version import stage_version

    return stage_version("generator.site.publish", "generator.site.hooks.mkdocs_hooks")


def build_site_if_needed(config: Config, plan: PagePlan, state: Mapping[str, PageState],
                         report: BuildReport, *, kinds: Mapping[str, str] | None = None,
                         topics: Sequence[tuple[str, str]] = (), workers: int | None = None) -> bool:
    """Write mkdocs.yml + theme and run `mkdocs build --strict`, unless nothing changed since the last one.
    `topics`: (title, page id) of the topic pages, listed in the nav after the overview. `workers`: render
    processes (generator/site/publish.py's build_site)."""
    from generator.pages.render_markdown import render_mkdocs_yml, site_footer
    from generator.site.nav import build_nav
    from generator.site.publish import THEME_DIR, mermaid_asset
    from sourcebook.data_files import data_dir
    from sourcebook.local_key import keyed, local_key

    # the root package's folder node is named as the manifest names the project (go.mod's `chi`), not
    # after a configured site name
    nav = topic_nav(build_nav(modules=plan.modules, files=plan.files, children=plan.children, kinds=kinds,
                              root_name=project_name(config.root)), topics)
    all_ids = plan.all_ids | {page_id for _, page_id in topics}
    from generator.pages.remote import source_links

    links = source_links(config.root, config.repo_url)
    mermaid = mermaid_asset()
    yml = render_mkdocs_yml(site_name=site_title(config.root, config.site_name), nav=nav,
                            repo_url=links.home if links else "",
                            footer=site_footer([report.writer_id], sum(
                                1 for pid in all_ids if pid in state and state[pid].written_by == "llm"),
                                len(all_ids)),
                            theme_dir=THEME_DIR, docs_dir="docs", site_dir="site",
                            mermaid_js=mermaid.url if mermaid else "")
    digest = hashlib.sha256(yml.encode())
    for page_id in sorted(all_ids):
        digest.update(page_id.encode() + b"\0" + (state[page_id].key if page_id in state else "").encode())
    for path in sorted(data_dir("site").rglob("*")):
        if path.is_file():
            digest.update(path.read_bytes())
    # a changed sanitizer re-cleans every page; a changed nav, page budget or engine re-renders them
    digest.update(site_code_version().encode())
    stamp = config.out_dir / "state" / "site.sha256"
    # keyed: a stamp committed with a doctored site/ (the output folder is the repository's) never matches
    fingerprint = keyed(digest.digest(), local_key())
    if (fingerprint is not None and stamp.is_file() and stamp.read_text() == fingerprint
            and (config.site_dir / "index.html").is_file() and not report.pages_written
            and not report.pages_deleted):
        return False
    from generator.site.publish import build_site, install_theme, write_config

    install_theme(config.out_dir)
    # a generous limit, far above what mkdocs needs per page: it only guards against a hung process
    build_site(write_config(config.out_dir, yml), site_dir=config.site_dir,
               timeout_s=600.0 + 0.5 * len(all_ids), workers=workers)
    if fingerprint is None:
        stamp.unlink(missing_ok=True)
    else:
        atomic_write_text(stamp, fingerprint)
    return True


def topic_nav(nav: list[Any], topics: Sequence[tuple[str, str]]) -> list[Any]:
    """`nav` with the pages beyond the plan after its first entry (the overview): the Public API page, then
    the topic pages: Architecture, then "How it works"."""
    import html

    if not topics:
        return nav
    # Material prints a nav title as HTML, and a topic's title carries a symbol name from the repository
    items: list[Any] = [{html.escape(title): page_id} for title, page_id in topics
                        if page_id.startswith("topics/")]
    others: list[Any] = [{html.escape(title): page_id} for title, page_id in topics
                         if not page_id.startswith("topics/")]  # the Public API page: right after the home
    extra = others + items[:1] + ([{"How it works": items[1:]}] if items[1:] else [])
    return nav[:1] + extra + nav[1:]


class _Timer:
    def __init__(self, into: dict[str, float], cpu: dict[str, float]) -> None:
        self.into = into
        self.cpu = cpu

    def __call__(self, stage: str) -> _Timer:
        self.stage = stage
        return self

    def __enter__(self) -> None:
        self.started = time.perf_counter()
        self.started_cpu = _cpu_seconds()

    def __exit__(self, *exc: object) -> None:
        self.into[self.stage] = self.into.get(self.stage, 0.0) + time.perf_counter() - self.started
        self.cpu[self.stage] = self.cpu.get(self.stage, 0.0) + _cpu_seconds() - self.started_cpu


def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def _cpu_seconds() -> float:
    """CPU time of this process and of its children that ended (os.times counts those once waited for)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system
