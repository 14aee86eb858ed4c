"""The kinds of wiki page, registered in one place: each kind's name, the build stage that writes its pages,
its writer, and its part of `--check`.

The order of PAGE_KINDS is the order of the build: module pages read their children's fresh summaries, the
overview reads the modules', the topic pages read the overview's neighbours. `build()` runs the writers in
this order and `check_stale` asks the kinds for their stale pages in the same order, so a new kind of page is
one entry here (its writer and its plan live in its stage module, file_stage.py and the others).

Each kind plans its pages once, in its stage module (`plan_file_pages`, `ModulePlanner`, `plan_overview`,
`plan_topic_pages`, `plan_api_page`: page id, context, key), from a `Planning` a build and a check make
alike; the writer writes the planned pages whose key is not fresh, `--check` compares the same keys. A page
cannot be stale by one recipe and fresh by another (tests/e2e/test_page_plan.py builds a real repository and
compares).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from generator.analyze.plan import OVERVIEW_ID, PageState, inputs_changed
from generator.pages.api_stage import plan_api_page, write_api_page
from generator.pages.file_stage import plan_file_pages, write_file_pages
from generator.pages.module_stage import ModulePlanner, write_module_pages
from generator.pages.overview_stage import plan_overview, write_overview
from generator.pages.page_sink import CachedPages
from generator.pages.stages import PageRun, Planning
from generator.pages.topic_stage import plan_topic_pages, planned_topics, write_topic_pages

if TYPE_CHECKING:
    from pathlib import Path

    from generator.analyze.analysis import Analysis
    from generator.pages.anchors import SymbolIndex
    from generator.pages.topics import TopicContext
    from generator.pages.writer import PageWriter
    from sourcebook.config import Config

NavEntry = tuple[str, str]  # (title, page id) of a page the nav lists besides the planned ones


@dataclass
class StaleCheck:
    """What `--check` knows while it walks the kinds: the build's inputs, and the pages found stale so far."""

    config: Config
    analysis: Analysis
    state: Mapping[str, PageState]
    writer: PageWriter
    cache: CachedPages
    version: str  # the renderer's version (render.render_version)
    stale: set[str] = field(default_factory=set)
    planned: set[str] = field(default_factory=set)  # every page id a build would keep
    keys: dict[str, str] = field(default_factory=dict)  # page id -> the key it was judged by

    def __post_init__(self) -> None:
        self.planned |= self.analysis.plan.all_ids

    @property
    def docs(self) -> Path:
        return self.config.docs_dir

    def changed(self, page_id: str, key: str) -> bool:
        """The page's inputs changed since it was written, and the shared cache has no page at this key."""
        self.keys[page_id] = key
        return inputs_changed(page_id, key, self.state, self.docs) and not self.cache.matches(page_id, key)

    @cached_property
    def planning(self) -> Planning:
        """What the kinds plan the pages from: the inputs a build's pages are planned from."""
        a = self.analysis
        return Planning(self.config, a.plan, a.facts, a.graph, self.writer, self.version, a.texts,
                        len(a.skipped), self.symbols)

    def summary(self, page_id: str) -> str:
        if page_id in self.state and (self.docs / page_id).is_file():
            return self.state[page_id].summary
        return self.cache.summary(page_id) or (self.state[page_id].summary if page_id in self.state else "")

    @cached_property
    def symbols(self) -> SymbolIndex:
        """Every public symbol's section, repository-wide (what module and topic pages link to), built once a
        check."""
        from generator.pages.anchors import SymbolIndex

        return SymbolIndex.build(self.analysis.facts.values(), self.analysis.plan.files)

    @cached_property
    def summaries(self) -> dict[str, str]:
        """The summaries a module or the overview reads of its children: files by path, modules by 'dir/'."""
        plan = self.analysis.plan
        out = {p: self.summary(pid) for p, pid in plan.files.items()}
        out.update({d + "/": self.summary(pid) for d, pid in plan.modules.items()})
        return out

    @cached_property
    def topics(self) -> list[TopicContext]:
        return planned_topics(self.planning, self.summaries)


@dataclass(frozen=True)
class PageKind:
    name: str  # PageState.kind, and the `kind` column of the index's pages table
    stage: str  # the build stage that writes these pages (progress, timings)
    write: Callable[[PageRun], list[NavEntry]]  # writes them; returns the nav entries of pages it added
    stale: Callable[[StaleCheck], None]  # adds those of its pages a build would rewrite to check.stale


def _write_files(run: PageRun) -> list[NavEntry]:
    write_file_pages(run)
    return []


def _stale_files(check: StaleCheck) -> None:
    """File pages are judged by their key."""
    for job in plan_file_pages(check.planning).jobs:
        if check.changed(job.page_id, job.key):
            check.stale.add(job.page_id)


def _write_modules(run: PageRun) -> list[NavEntry]:
    write_module_pages(run)
    return []


def _stale_modules(check: StaleCheck) -> None:
    """A module is stale when a child is (its new summary is unknown until written), else by its key."""
    planner = ModulePlanner(check.planning)
    for d in check.analysis.plan.bottom_up_modules():
        job = planner.job(d, check.summaries)
        changed = check.changed(job.page_id, job.key)  # asked first: every key planned is recorded
        if changed or any(c in check.stale for c in job.children):
            check.stale.add(job.page_id)


def _write_overview(run: PageRun) -> list[NavEntry]:
    write_overview(run)
    return []


def _stale_overview(check: StaleCheck) -> None:
    """The overview is stale when any page above is, else by its key."""
    job = plan_overview(check.planning, check.summaries, check.topics)
    changed = check.changed(OVERVIEW_ID, job.key)
    if changed or check.stale:
        check.stale.add(OVERVIEW_ID)


def _write_topics(run: PageRun) -> list[NavEntry]:
    return [(t.title, t.page_id) for t in write_topic_pages(run)]


def _stale_topics(check: StaleCheck) -> None:
    """Topic pages are judged by their key (their diagram included)."""
    for job in plan_topic_pages(check.planning, check.topics):
        check.planned.add(job.page_id)
        if check.changed(job.page_id, job.key):
            check.stale.add(job.page_id)


def _stale_api(check: StaleCheck) -> None:
    """The Public API page is judged by its key (the names and the pages they link to)."""
    from generator.pages.render_markdown import API_PAGE

    job = plan_api_page(check.planning)
    if job is None:
        return
    check.planned.add(API_PAGE)
    if check.changed(API_PAGE, job.key):
        check.stale.add(API_PAGE)


PAGE_KINDS: tuple[PageKind, ...] = (
    PageKind("file", "files", _write_files, _stale_files),
    PageKind("module", "modules", _write_modules, _stale_modules),
    PageKind("overview", "overview", _write_overview, _stale_overview),
    PageKind("topic", "topics", _write_topics, _stale_topics),
    PageKind("api", "api", write_api_page, _stale_api),
)
