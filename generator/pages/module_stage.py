"""Module pages, bottom-up one depth level at a time (every module sees its submodules' fresh summaries), with
their class hierarchy and import diagrams.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator.analyze.facts import FileFacts
from generator.analyze.manifests import project_name
from generator.analyze.plan import PagePlan, PageState, draft_key, page_key
from generator.pages.contexts import module_context, stable_key
from generator.pages.stages import (
    PageRun,
    Planning,
    known_summaries,
    map_pages,
    module_readme,
    safely,
    symbol_anchors,
)
from generator.pages.writer import ExtractiveWriter, ModuleDraft

if TYPE_CHECKING:
    from generator.pages.anchors import SymbolIndex
    from generator.pages.diagrams import Graph
    from generator.pages.writer import ModuleContext


def module_hierarchies(plan: PagePlan, facts: Mapping[str, FileFacts], index: SymbolIndex
                       ) -> Callable[[str], list[Graph]]:
    """directory -> the class hierarchy diagrams of its direct files (at most 25 classes each; [] when
    nothing inherits)."""
    from generator.pages.diagrams import class_hierarchy, class_index, site_href

    classes = class_index(facts)

    def hierarchy(directory: str) -> list[Graph]:
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


def module_render_key(base: str, hierarchy: Sequence[Graph], imports: Graph | None = None) -> str:
    """The rendering part of a module page's key (its diagrams are drawn from facts, not prose)."""
    return (base + "".join("\x1f" + g.title + "\x1d" + g.mermaid() for g in hierarchy)
            + ("\x1e" + imports.mermaid() + imports.left_out if imports else ""))


@dataclass(frozen=True)
class ModuleJob:
    """One module page as planned: its context (its children's summaries in it), key and diagrams."""

    ctx: ModuleContext
    key: str
    children: list[str]  # the page ids of its files and submodules
    hierarchy: list[Graph]
    imports: Graph | None

    @property
    def page_id(self) -> str:
        return self.ctx.page_id


class ModulePlanner:
    """Plans module pages for the build and for `--check` by one recipe. A module's context holds its
    children's summaries, known only once they are written: a build plans a depth level at a time (`job`
    with the summaries of the level below), `--check` with the summaries it has."""

    def __init__(self, inputs: Planning) -> None:
        self.inputs = inputs
        self.hierarchies = module_hierarchies(inputs.plan, inputs.facts, inputs.symbols)
        self.import_diagrams = module_import_diagrams(inputs.plan, inputs.graph)
        # the root page is named like its nav node (build_site_if_needed)
        self.root_name = project_name(inputs.config.root)

    def job(self, directory: str, summaries: Mapping[str, str]) -> ModuleJob:
        inputs, plan = self.inputs, self.inputs.plan
        ctx = module_context(directory, plan, inputs.facts, inputs.graph, summaries=summaries,
                             readme=module_readme(inputs.config, plan, directory)[1] if directory else "",
                             root_name=self.root_name)
        hierarchy, imports = self.hierarchies(directory), self.import_diagrams(directory)
        key = page_key(ctx.fingerprint(), inputs.writer.id,
                       module_render_key(inputs.version, hierarchy, imports))
        files, subdirs = plan.children[directory]
        children = [plan.files[p] for p in files] + [plan.modules[d] for d in subdirs]
        return ModuleJob(ctx, key, children, hierarchy, imports)


def write_module_pages(run: PageRun) -> None:
    """Bottom-up, one depth level at a time, so every module sees its submodules' fresh summaries."""
    from generator.pages.render_markdown import render_module_page

    plan, facts, writer, pages, notify = run.plan, run.facts, run.writer, run.pages, run.notify

    extractive = ExtractiveWriter()
    anchors = symbol_anchors(facts)
    planner = ModulePlanner(run.planning())
    ordered = plan.bottom_up_modules()
    levels: dict[int, list[str]] = {}
    for d in ordered:
        levels.setdefault(d.count("/") + 1 if d else 0, []).append(d)
    done = 0
    for depth in sorted(levels, reverse=True):
        summaries = known_summaries(plan, pages)
        jobs = [planner.job(d, summaries) for d in levels[depth]]
        todo = [job for job in jobs if not pages.fresh(job.page_id, job.key)]

        def write(job: ModuleJob) -> ModuleDraft:
            ctx = job.ctx
            stored = pages.stored_draft(ctx.page_id, draft_key(ctx.fingerprint(), writer.id), ModuleDraft)
            if stored is not None:
                return stored
            draft = safely(writer.module_page, extractive.module_page, ctx, ctx.page_id, pages.report)
            return pages.settle(ctx.page_id, draft, ModuleDraft, stable_key(ctx, writer.id),
                                draft_key(ctx.fingerprint(), writer.id))

        for job, draft in zip(todo, map_pages(write, todo, writer.concurrency), strict=True):
            ctx, key = job.ctx, job.key
            markdown = render_module_page(ctx, draft, writer_id=writer.id, file_anchors=anchors,
                                          file_pages=plan.files, module_pages=plan.modules,
                                          hierarchy=job.hierarchy, imports=job.imports)
            pages.put(ctx.page_id, key, markdown, PageState(
                key=key, kind="module", title=ctx.title, target_path=ctx.path, summary=draft.summary,
                written_by=draft.written_by, retry=draft.fallback),
                dkey=draft_key(ctx.fingerprint(), writer.id), draft=draft, stable=stable_key(ctx, writer.id))
        done += len(levels[depth])
        notify("modules", done, len(ordered))
