"""The LLM's topic pages (the Architecture page and the "How it works" flows of generator/pages/topics.py).

The model is given the topic's evidence (symbols with their `path:start-end`, the calls between them, the
packages, excerpts of the source) and asked for a summary plus sections, each citing its sources. Every
citation is checked against the analysis: a file that is not in it, lines past its end, or a symbol the
evidence does not hold is dropped (and counted); a section left without a valid source is dropped; a draft
left without any section is rejected with the reason, so the provider re-asks, and a topic that still fails
falls back to its extractive page (the build marks it for retry). Text checks are llm_drafts' own.

Small models (the same strategy as file pages): when the whole draft fails, re-ask included, or whole topic
drafts already failed SINGLE_AFTER times this run, the page is written part by part. Its outline is the
extractive page's (sections per file of the flow, or per package), so every heading and source comes from
the analysis; the model is asked for the summary, then for each section's explanation alone, over that
section's facts and the code it cites (TOPIC_SECTION_PROMPT, one field). Sources are still checked against
the catalog. A section the model cannot explain keeps its extractive text; a summary it cannot write makes
the page fall back like any failed page.

The prompts' versions (TOPIC_PROMPT, TOPIC_SECTION_PROMPT) are part of the topic pages' keys only: adding
topics did not change the writer id, so no file, module or overview page was rewritten for it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any, Protocol, TypeVar

import jinja2
from pydantic import BaseModel

from generator.pages.llm.drafts import MAX_TOPIC_SECTIONS, Catalog, Known, LLMTopicDraft, TopicPartOnly
from generator.pages.llm.excerpt import fit_lines
from generator.pages.topics import TopicContext, extractive_topic
from generator.pages.writer import TopicDraft, TopicSection
from sourcebook.errors import ProviderOutputError
from sourcebook.provider import estimate_prompt_tokens
from sourcebook.redaction import redact_text

log = logging.getLogger(__name__)

D = TypeVar("D", bound=BaseModel)


class TopicAsker(Protocol):
    """What a topic page needs of the LLM writer (llm/writer.py's LLMWriter), which calls in here."""

    def prompt_chars(self, model: type[BaseModel]) -> int: ...

    def ask_with(self, model: type[D], text: str, context: dict[str, Any], label: str) -> D: ...

    def ask_alone_with(self, model: type[D], text: str, context: dict[str, Any], label: str, *,
                       reply_tokens: int) -> D: ...

    def alone_mode(self, kind: str) -> bool: ...

    def whole_failed(self, kind: str) -> None: ...


TOPIC_PROMPT = "topic_page.v1.j2"
TOPIC_SECTION_PROMPT = "topic_section.v1.j2"
TOPIC_OUTPUT_TOKENS = 600  # a typical reply (summary + sections with sources), for --dry-run estimates
PART_OUTPUT_TOKENS = 120  # a typical one-part reply, for --dry-run estimates
PART_REPLY_TOKENS = 300  # the cap of a one-part reply: a few sentences; a rambling small model stops early
PART_SHARE = 0.5  # of the full prompt's budget: one part gets shorter evidence
PART_EXCERPTS = 3  # code blocks shown with one part, at most
SUMMARY_HELP = ("2-3 sentences: what this page explains and why a reader cares, naming the main symbols in "
                "backticks.")
SECTION_HELP = "2-4 sentences: what happens in this part and why, naming its symbols in backticks."


@cache
def _environment() -> jinja2.Environment:
    # a prompt is plain text for a model, never HTML: escaping would corrupt the code it quotes
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "prompts"), undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, autoescape=False)  # noqa: S701


def prompt_version() -> str:
    return "+".join(name.removesuffix(".j2") for name in (TOPIC_PROMPT, TOPIC_SECTION_PROMPT))


def _item(s: Any) -> str:
    sig = redact_text(s.signature)[:160]
    return (f"[{s.cite}] {s.qualname or '(top level)'} ({s.kind})" + (f": {sig}" if sig else "")
            + (f" -- {redact_text(s.summary)}" if s.summary else ""))


def topic_prompt(ctx: TopicContext, budget: int) -> str:
    """The topic prompt within `budget` characters: facts first, each list capped to a share of the budget,
    then source excerpts (`ctx.excerpts`) while they fit."""
    evidence = ctx.evidence()
    items, omitted = fit_lines([_item(s) for s in evidence], budget // 3)
    calls = [f"{ctx.steps[a].qualname} -> {ctx.steps[b].qualname}" for a, b in ctx.calls]
    packages = [f"{p.path}/ ({p.files} files)" + (f": {redact_text(p.summary)}" if p.summary else "")
                + (f"; imports {', '.join(d + '/' for d in p.imports)}" if p.imports else "")
                for p in ctx.packages]
    entries = [f"{e.name} ({e.how}) -> {e.path}" + (f" {e.qualname}" if e.qualname else "")
               for e in ctx.entries]
    values: dict[str, Any] = {
        "repo": ctx.repo, "title": ctx.title, "kind": ctx.kind, "max_sections": MAX_TOPIC_SECTIONS,
        "seed": ctx.steps[0].qualname if ctx.steps else "", "evidence": items, "omitted": omitted,
        "calls": fit_lines(calls, budget // 8)[0], "packages": fit_lines(packages, budget // 6)[0],
        "entries": fit_lines(entries, budget // 12)[0], "excerpts": [],
    }
    template = _environment().get_template(TOPIC_PROMPT)
    room = budget - len(template.render(**values))
    for cite, text in ctx.excerpts:
        block = {"cite": cite, "text": text}
        cost = len(cite) + len(text) + 12
        if cost > room:
            break
        values["excerpts"].append(block)
        room -= cost
    return re.sub(r"\n{3,}", "\n\n", template.render(**values)).strip()


def write_topic(writer: TopicAsker, ctx: TopicContext) -> TopicDraft:
    """The model's draft of one topic page (raises ProviderError / ProviderOutputError like every call).

    Names in the prose are checked like every page's (paths and file names must exist); members are not
    checked against the evidence, since a topic may mention any of a class's methods. Sources are checked
    strictly (Catalog)."""
    catalog = catalog_of(ctx.line_counts, ctx)
    label = f"topic:{ctx.page_id}"
    if not writer.alone_mode("topic"):
        text = topic_prompt(ctx, writer.prompt_chars(LLMTopicDraft))
        try:
            context = {**_known(ctx, catalog).as_context(), "catalog": catalog}
            return writer.ask_with(LLMTopicDraft, text, context, label)
        except ProviderOutputError as exc:
            log.info("%s: whole draft failed (%s); asking for it part by part", label, exc)
            writer.whole_failed("topic")
    return write_topic_alone(writer, ctx, catalog)


def _known(ctx: TopicContext, catalog: Catalog, subject: str = "") -> Known:
    return Known.build(symbols=[s.qualname for s in ctx.evidence()], paths=[*ctx.paths, *catalog.lines],
                       subject=f"{subject} {ctx.title} {ctx.repo}")


def _outline(ctx: TopicContext) -> tuple[str, list[TopicSection]]:
    """The page's outline: the extractive page's summary and sections (headings and sources from the
    analysis), at most MAX_TOPIC_SECTIONS."""
    base = extractive_topic(ctx)
    return base.summary, list(base.sections[:MAX_TOPIC_SECTIONS])


def section_prompt(ctx: TopicContext, budget: int, *, facts: str, cites: Sequence[str],
                   heading: str = "") -> str:
    """One part's prompt within `budget` characters: the extractive text as facts, then the code of the
    evidence it cites while it fits."""
    template = _environment().get_template(TOPIC_SECTION_PROMPT)
    values: dict[str, Any] = {"repo": ctx.repo, "title": ctx.title, "heading": heading,
                              "guidance": SECTION_HELP if heading else SUMMARY_HELP,
                              "facts": redact_text(facts)[:max(200, budget // 3)], "excerpts": []}
    room = budget - len(template.render(**values))
    code = dict(ctx.excerpts)
    for cite in cites:
        if cite not in code or len(values["excerpts"]) >= PART_EXCERPTS:
            continue
        text = code[cite]
        cost = len(cite) + len(text) + 20
        if cost > room:
            continue
        values["excerpts"].append({"cite": cite, "text": text})
        room -= cost
    return re.sub(r"\n{3,}", "\n\n", template.render(**values)).strip()


def _part_prompts(ctx: TopicContext, budget: int) -> list[tuple[str, str, TopicSection | None]]:
    """(subject words, prompt, outline section) for the summary (section None) and each section."""
    summary, sections = _outline(ctx)
    headings = "; ".join(s.heading for s in sections)
    first = [cite for s in sections for cite in s.sources][:PART_EXCERPTS]
    out: list[tuple[str, str, TopicSection | None]] = [
        ("", section_prompt(ctx, budget, facts=f"{summary}\nIts parts: {headings}.", cites=first), None)]
    for section in sections:
        out.append((section.heading, section_prompt(ctx, budget, facts=section.body, cites=section.sources,
                                                    heading=section.heading), section))
    return out


def write_topic_alone(writer: TopicAsker, ctx: TopicContext, catalog: Catalog) -> TopicDraft:
    """The topic page part by part (the small-model path): the summary, then each outline section's
    explanation, each in its own call; headings and checked sources come from the outline."""
    label = f"topic:{ctx.page_id}"
    budget = int(writer.prompt_chars(TopicPartOnly) * PART_SHARE)
    parts = _part_prompts(ctx, budget)
    _, text, _ = parts[0]
    reply = writer.ask_alone_with(TopicPartOnly, text, _known(ctx, catalog).as_context(), f"{label}#summary",
                                  reply_tokens=PART_REPLY_TOKENS)  # required: its failure fails the page
    sections: list[TopicSection] = []
    for subject, text, outline in parts[1:]:
        assert outline is not None
        sources = []
        for raw in outline.sources:
            try:
                sources.append(catalog.normalize(raw))
            except ValueError as exc:  # the outline comes from the analysis: a bug, never the model's
                log.warning("%s: outline source dropped (%s)", label, exc)
        if not sources:
            continue
        body = outline.body
        try:
            body = writer.ask_alone_with(
                TopicPartOnly, text, _known(ctx, catalog, subject).as_context(), f"{label}#{outline.heading}",
                reply_tokens=PART_REPLY_TOKENS).explanation
        except ProviderOutputError as exc:
            log.info("%s: section %r keeps its extractive text (%s)", label, outline.heading, exc)
        sections.append(TopicSection(heading=outline.heading, body=body,
                                     sources=list(dict.fromkeys(sources))))
    return TopicDraft(summary=reply.explanation, sections=sections)


def estimate_alone(ctx: TopicContext, prompt_chars: int) -> tuple[int, int, int]:
    """(calls, input tokens, output tokens) of writing `ctx` part by part (for `--dry-run`)."""
    prompts = _part_prompts(ctx, int(prompt_chars * PART_SHARE))
    tokens_in = sum(estimate_prompt_tokens([{"role": "user", "content": p}], TopicPartOnly)
                    for _, p, _ in prompts)
    return len(prompts), tokens_in, PART_OUTPUT_TOKENS * len(prompts)


def catalog_of(lines: Mapping[str, int], ctx: TopicContext) -> Catalog:
    return Catalog(lines=lines, named={s.qualname: s.cite for s in ctx.evidence() if s.qualname})
