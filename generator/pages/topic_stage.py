"""The topic pages (Architecture, "How it works"): written by a model or not at all, after the overview.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator.analyze.facts import FileFacts
from generator.analyze.manifests import project_name
from generator.analyze.plan import PagePlan, PageState, draft_key, page_key
from generator.pages.contexts import stable_key
from generator.pages.stages import PageRun, Planning, known_summaries, map_pages, safely
from generator.pages.writer import PageWriter, TopicDraft
from sourcebook.config import Config

if TYPE_CHECKING:
    from generator.pages.anchors import SymbolIndex
    from generator.pages.diagrams import Graph
    from generator.pages.topics import TopicContext


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
                  index: SymbolIndex, *, build: frozenset[str] = frozenset()) -> Graph | None:
    """`build`: the folders of the build's own code (orientation.build_folders), out of the diagram."""
    from generator.analyze.plan import module_importance
    from generator.pages.topics import architecture_diagram, flow_diagram

    if ctx.kind == "flow":
        return flow_diagram(ctx, lambda path, qualname: index.href(ctx.page_id, path, qualname))
    return architecture_diagram(ctx, modules=plan.modules, files=plan.files, facts=facts,
                                depends_on=graph.depends_on, importance=module_importance(plan, graph),
                                build=build)


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


def planned_topics(inputs: Planning, summaries: Mapping[str, str]) -> list[TopicContext]:
    """The topic pages a build writes (none without a model: writes_topics), as the overview links them."""
    if not writes_topics(inputs.writer):
        return []
    return topic_contexts(inputs.config, inputs.plan, inputs.facts, inputs.graph, summaries)


@dataclass(frozen=True)
class TopicJob:
    """One topic page as planned: its context, diagram and key."""

    ctx: TopicContext
    key: str
    diagram: Graph | None

    @property
    def page_id(self) -> str:
        return self.ctx.page_id


def plan_topic_pages(inputs: Planning, topics: Sequence[TopicContext]) -> list[TopicJob]:
    """Each topic page's key (its diagram included), for the build and for `--check`."""
    from generator.pages.orientation import build_folders

    out = []
    build = build_folders(inputs.config.root)
    for ctx in topics:
        diagram = topic_diagram(ctx, inputs.plan, inputs.facts, inputs.graph, inputs.symbols, build=build)
        out.append(TopicJob(ctx, topic_key(ctx, inputs.writer.id, inputs.version, diagram), diagram))
    return out


def write_topic_pages(run: PageRun) -> list[TopicContext]:
    """The Architecture and "How it works" pages, after the overview (they read the module summaries); none
    without a model (writes_topics)."""
    from generator.pages.render_markdown import render_topic_page
    from generator.pages.topics import bodies, excerpts, extractive_topic

    plan, facts, writer, pages, notify = run.plan, run.facts, run.writer, run.pages, run.notify
    if not writes_topics(writer):
        notify("topics", 0, 0)
        return []
    inputs = run.planning()
    topics = planned_topics(inputs, known_summaries(plan, pages))
    index = run.symbols
    todo = [job for job in plan_topic_pages(inputs, topics) if not pages.fresh(job.page_id, job.key)]
    notify("topics", 0, len(todo))
    write_topic = getattr(writer, "topic_page", None)
    line_counts = {p: f.line_count for p, f in facts.items()}

    source_text = inputs.text

    def write(job: TopicJob) -> TopicDraft:
        ctx = job.ctx
        dkey = draft_key(ctx.fingerprint(), writer.id)
        stored = pages.stored_draft(ctx.page_id, dkey, TopicDraft)
        if stored is not None:
            return stored
        if write_topic is None:  # not reached: writes_topics() checked it
            return extractive_topic(ctx)
        ctx = dataclasses.replace(ctx, line_counts=line_counts)
        ctx = dataclasses.replace(ctx, excerpts=excerpts(ctx, source_text), bodies=bodies(ctx, source_text))
        draft = safely(write_topic, extractive_topic, ctx, ctx.page_id, pages.report)
        return pages.settle(ctx.page_id, draft, TopicDraft, stable_key(ctx, writer.id), dkey)

    for n, (job, draft) in enumerate(zip(todo, map_pages(write, todo, writer.concurrency), strict=True), 1):
        ctx, key = job.ctx, job.key
        markdown = render_topic_page(ctx, draft, writer_id=writer.id, facts=facts, index=index,
                                     diagram=job.diagram)
        pages.put(ctx.page_id, key, markdown, PageState(
            key=key, kind="topic", title=ctx.title, target_path="", summary=draft.summary,
            written_by=draft.written_by, retry=draft.fallback),
            dkey=draft_key(ctx.fingerprint(), writer.id), draft=draft, stable=stable_key(ctx, writer.id))
        notify("topics", n, len(todo))
    return topics
