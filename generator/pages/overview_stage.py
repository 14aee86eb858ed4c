"""The home page: the overview draft from the README and the top modules, with its orientation (entry points,
abstractions, reading order) and the topic pages it links to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator.analyze.facts import FileFacts
from generator.analyze.manifests import project_description, project_name
from generator.analyze.plan import OVERVIEW_ID, PagePlan, PageState, draft_key, page_key
from generator.pages.contexts import overview_context, stable_key
from generator.pages.stages import (
    PageRun,
    Planning,
    known_summaries,
    module_readme,
    readme_resolver,
    safely,
    symbol_anchors,
)
from generator.pages.topic_stage import planned_topics
from generator.pages.writer import ExtractiveWriter, OverviewContext, OverviewDraft
from sourcebook.config import Config

if TYPE_CHECKING:
    from generator.pages.orientation import Orientation
    from generator.pages.topics import TopicContext


def root_readme(config: Config, plan: PagePlan) -> tuple[str, str]:
    found = module_readme(config, plan, "")
    return found if found[0] else ("", "")


def overview_orientation(config: Config, plan: PagePlan, facts: Mapping[str, FileFacts], graph: Any,
                         readme: str) -> Orientation:
    """The home page's entry points, abstractions, diagram and reading order (render-time inputs)."""
    from generator.analyze.plan import module_importance
    from generator.pages.orientation import build_folders, cli_texts, manifest_texts, orientation
    from generator.pages.stages import file_text

    def read(path: str) -> str | None:  # only the files the scan accepted
        return file_text(config.root, path) if path in facts else None

    return orientation(modules=plan.modules, files=plan.files, facts=facts, graph=graph,
                       importance=module_importance(plan, graph),
                       manifests=manifest_texts(config.root, plan.files), readme=readme,
                       sources=cli_texts(config.root, facts), read=read, build=build_folders(config.root))


def topic_links(topics: Sequence[TopicContext]) -> list[tuple[str, str, str]]:
    """(title, page id, what it covers) of each topic page, for the home page's "Read next"."""
    from generator.markup.docmarkup import code_span
    from generator.pages.anchors import shown_qualname

    out = []
    for t in topics:
        if t.kind == "architecture":
            about = "the source packages, what each imports, how the project is started"
        else:
            first = t.steps[0]
            about = (f"{len(t.steps)} functions in {len({s.path for s in t.steps})} files, starting at "
                     f"{code_span(shown_qualname(first.qualname) or first.path)} in {code_span(first.path)}")
        out.append((t.title, t.page_id, about))
    return out


def overview_render_key(version: str, orient: Orientation, topics: Sequence[tuple[str, str, str]]) -> str:
    """The rendering part of the home page's key: its orientation and the topic pages it links to."""
    return version + "\x1f" + orient.key() + "\x1f" + repr(list(topics))


@dataclass(frozen=True)
class OverviewJob:
    """The home page as planned: its context, key, and what its rendering reads besides the draft."""

    ctx: OverviewContext
    key: str
    orient: Orientation
    reading: list[tuple[str, str, str]]  # topic_links: the topic pages it links to
    readme_path: str


def plan_overview(inputs: Planning, summaries: Mapping[str, str], topics: Sequence[TopicContext]
                  ) -> OverviewJob:
    """The home page's context and key, for the build and for `--check` (`summaries` and `topics`: those
    each knows, see topic_stage.planned_topics)."""
    from generator.pages.orientation import build_folders

    config, plan, facts, graph = inputs.config, inputs.plan, inputs.facts, inputs.graph
    readme_path, readme = root_readme(config, plan)
    ctx = overview_context(project_name(config.root, config.site_name), plan, facts, graph,
                           summaries=summaries, readme=readme, readme_path=readme_path,
                           skipped_count=inputs.skipped, description=project_description(config.root),
                           build=build_folders(config.root))
    orient = overview_orientation(config, plan, facts, graph, readme)
    reading = topic_links(topics)
    key = page_key(ctx.fingerprint(), inputs.writer.id, overview_render_key(inputs.version, orient, reading))
    return OverviewJob(ctx, key, orient, reading, readme_path)


def write_overview(run: PageRun) -> None:
    from generator.pages.render_markdown import render_overview_page

    plan, facts, writer, pages, notify = run.plan, run.facts, run.writer, run.pages, run.notify
    inputs = run.planning()
    summaries = known_summaries(plan, pages)
    job = plan_overview(inputs, summaries, planned_topics(inputs, summaries))
    ctx, key = job.ctx, job.key
    notify("overview", 0, 1)
    if not pages.fresh(OVERVIEW_ID, key):
        dkey = draft_key(ctx.fingerprint(), writer.id)
        draft: OverviewDraft | None = pages.stored_draft(OVERVIEW_ID, dkey, OverviewDraft)
        if draft is None:
            written = safely(writer.overview, ExtractiveWriter().overview, ctx, OVERVIEW_ID, pages.report)
            draft = pages.settle(OVERVIEW_ID, written, OverviewDraft, stable_key(ctx, writer.id), dkey)
        markdown = render_overview_page(ctx, draft, writer_id=writer.id,
                                        resolve=readme_resolver(plan, job.readme_path),
                                        file_pages=plan.files, file_anchors=symbol_anchors(facts),
                                        orient=job.orient, index=run.symbols,
                                        summaries=known_summaries(plan, pages), topics=job.reading)
        pages.put(OVERVIEW_ID, key, markdown, PageState(
            key=key, kind="overview", title=ctx.title, target_path="", summary=draft.summary,
            written_by=draft.written_by, retry=draft.fallback), dkey=dkey, draft=draft,
            stable=stable_key(ctx, writer.id))
    notify("overview", 1, 1)
