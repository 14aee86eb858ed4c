"""The kinds of wiki page, registered in one place: each kind's name, the build stage that writes its pages,
its writer, and its part of `--check`.

The order of PAGE_KINDS is the order of the build: module pages read their children's fresh summaries, the
overview reads the modules', the topic pages read the overview's neighbours. `build()` runs the writers in
this order and `check_stale` asks the kinds for their stale pages in the same order, so a new kind of page is
one entry here (its writer and its key live in its stage module, file_stage.py and the others).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from generator.analyze.manifests import project_description, project_name
from generator.analyze.plan import OVERVIEW_ID, PageState, inputs_changed, page_key
from generator.pages.api_stage import api_key, api_names_of, write_api_page, writes_api_page
from generator.pages.constructors import package_builders
from generator.pages.contexts import file_context, module_context, overview_context
from generator.pages.file_stage import (
    document_key,
    file_render_inputs,
    file_render_key,
    is_rendered_document,
    page_links,
    repository_reader,
    write_file_pages,
)
from generator.pages.module_stage import (
    module_hierarchies,
    module_import_diagrams,
    module_render_key,
    write_module_pages,
)
from generator.pages.overview_stage import (
    overview_orientation,
    overview_render_key,
    root_readme,
    topic_links,
    write_overview,
)
from generator.pages.page_sink import CachedPages
from generator.pages.stages import PageRun, file_text, module_readme
from generator.pages.topic_stage import (
    topic_contexts,
    topic_diagram,
    topic_key,
    write_topic_pages,
    writes_topics,
)

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

    def __post_init__(self) -> None:
        self.planned |= self.analysis.plan.all_ids

    @property
    def docs(self) -> Path:
        return self.config.docs_dir

    def changed(self, page_id: str, key: str) -> bool:
        """The page's inputs changed since it was written, and the shared cache has no page at this key."""
        return inputs_changed(page_id, key, self.state, self.docs) and not self.cache.matches(page_id, key)

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
        a = self.analysis
        if not writes_topics(self.writer):
            return []
        return topic_contexts(self.config, a.plan, a.facts, a.graph, self.summaries)


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
    from generator.pages.name_links import NameIndex

    config, a = check.config, check.analysis
    links, xref = file_render_inputs(config, a.facts, a.graph)
    names = NameIndex.build(a.facts, a.plan.files)
    def text(p: str) -> str:
        return file_text(config.root, p)

    read = repository_reader(a.facts, text)
    builders = package_builders(a.facts)
    for path in sorted(a.facts):
        ctx = file_context(a.facts[path], a.plan, a.graph)
        f = a.facts[path]
        rkey = file_render_key(check.version, links, xref.file_refs(f), page_links(names, f, text, read),
                               document_key(f, text(path), read) if is_rendered_document(f) else "",
                               builders=builders.get(path, ()))
        if check.changed(ctx.page_id, page_key(ctx.fingerprint(), check.writer.id, rkey)):
            check.stale.add(ctx.page_id)


def _write_modules(run: PageRun) -> list[NavEntry]:
    write_module_pages(run)
    return []


def _stale_modules(check: StaleCheck) -> None:
    """A module is stale when a child is (its new summary is unknown until written), else by its key."""
    config, a, plan = check.config, check.analysis, check.analysis.plan
    hierarchies = module_hierarchies(plan, a.facts, check.symbols)
    import_diagrams = module_import_diagrams(plan, a.graph)
    root_name = project_name(config.root)
    for d in plan.bottom_up_modules():
        files, subdirs = plan.children[d]
        children = [plan.files[p] for p in files] + [plan.modules[s] for s in subdirs]
        mctx = module_context(d, plan, a.facts, a.graph, summaries=check.summaries,
                              readme=module_readme(config, plan, d)[1] if d else "", root_name=root_name)
        mkey = page_key(mctx.fingerprint(), check.writer.id,
                        module_render_key(check.version, hierarchies(d), import_diagrams(d)))
        if any(c in check.stale for c in children) or check.changed(mctx.page_id, mkey):
            check.stale.add(mctx.page_id)


def _write_overview(run: PageRun) -> list[NavEntry]:
    write_overview(run)
    return []


def _stale_overview(check: StaleCheck) -> None:
    """The overview is stale when any page above is, else by its key."""
    config, a = check.config, check.analysis
    readme_path, readme = root_readme(config, a.plan)
    octx = overview_context(project_name(config.root, config.site_name), a.plan, a.facts, a.graph,
                            summaries=check.summaries, readme=readme, readme_path=readme_path,
                            skipped_count=len(a.skipped), description=project_description(config.root))
    okey = overview_render_key(check.version, overview_orientation(config, a.plan, a.facts, a.graph, readme),
                               topic_links(check.topics))
    if check.stale or check.changed(OVERVIEW_ID, page_key(octx.fingerprint(), check.writer.id, okey)):
        check.stale.add(OVERVIEW_ID)


def _write_topics(run: PageRun) -> list[NavEntry]:
    return [(t.title, t.page_id) for t in write_topic_pages(run)]


def _stale_topics(check: StaleCheck) -> None:
    """Topic pages are judged by their key (their diagram included)."""
    a = check.analysis
    for topic in check.topics:
        check.planned.add(topic.page_id)
        diagram = topic_diagram(topic, a.plan, a.facts, a.graph, check.symbols)
        key = topic_key(topic, check.writer.id, check.version, diagram)
        if check.changed(topic.page_id, key):
            check.stale.add(topic.page_id)


def _stale_api(check: StaleCheck) -> None:
    """The Public API page is judged by its key (the names and the pages they link to)."""
    from generator.pages.render_markdown import API_PAGE

    a = check.analysis
    names = api_names_of(check.config, a.plan, a.facts, a.graph)
    if not writes_api_page(names):
        return
    check.planned.add(API_PAGE)
    if check.changed(API_PAGE, api_key(check.version, names, a.plan.files, check.symbols)):
        check.stale.add(API_PAGE)


PAGE_KINDS: tuple[PageKind, ...] = (
    PageKind("file", "files", _write_files, _stale_files),
    PageKind("module", "modules", _write_modules, _stale_modules),
    PageKind("overview", "overview", _write_overview, _stale_overview),
    PageKind("topic", "topics", _write_topics, _stale_topics),
    PageKind("api", "api", write_api_page, _stale_api),
)
