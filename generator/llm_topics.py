"""The LLM's topic pages (the Architecture page and the "How it works" flows of generator/topics.py).

The model is given the topic's evidence (symbols with their `path:start-end`, the calls between them, the
packages, excerpts of the source) and asked for a summary plus sections, each citing its sources. Every
citation is checked against the analysis: a file that is not in it, lines past its end, or a symbol the
evidence does not hold is dropped (and counted); a section left without a valid source is dropped; a draft
left without any section is rejected with the reason, so the provider re-asks, and a topic that still fails
falls back to its extractive page (the build marks it for retry). Text checks are llm_drafts' own.

The prompt's version (TOPIC_PROMPT) is part of the topic pages' keys only: adding topics did not change the
writer id, so no file, module or overview page was rewritten for it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any, Protocol, TypeVar

import jinja2
from pydantic import BaseModel

from generator.excerpt import fit_lines
from generator.llm_drafts import MAX_TOPIC_SECTIONS, Catalog, Known, LLMTopicDraft
from generator.secrets import redact_text
from generator.topics import TopicContext
from generator.write import TopicDraft

D = TypeVar("D", bound=BaseModel)


class TopicAsker(Protocol):
    """What a topic page needs of the LLM writer (generator.llm_writer.LLMWriter), which calls in here."""

    def prompt_chars(self, model: type[BaseModel]) -> int: ...

    def ask_with(self, model: type[D], text: str, context: dict[str, Any], label: str) -> D: ...

TOPIC_PROMPT = "topic_page.v1.j2"
EXCERPT_LINES = 30  # of each cited symbol's source, at most
TOPIC_OUTPUT_TOKENS = 600  # a typical reply (summary + sections with sources), for --dry-run estimates


@cache
def _environment() -> jinja2.Environment:
    # a prompt is plain text for a model, never HTML: escaping would corrupt the code it quotes
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "prompts"), undefined=jinja2.StrictUndefined,
        trim_blocks=True, lstrip_blocks=True, autoescape=False)  # noqa: S701


def prompt_version() -> str:
    return TOPIC_PROMPT.removesuffix(".j2")


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


def excerpts(ctx: TopicContext, text_of: Callable[[str], str]) -> tuple[tuple[str, str], ...]:
    """(cite, source lines) of each evidence symbol, at most EXCERPT_LINES lines each, redacted whole-file
    first (a cut could shorten a secret below what the rules recognise)."""
    out = []
    redacted: dict[str, list[str]] = {}
    for s in ctx.evidence():
        if s.path not in redacted:
            redacted[s.path] = redact_text(text_of(s.path) or "").splitlines()
        lines = redacted[s.path][s.start - 1:min(s.end, s.start + EXCERPT_LINES - 1)]
        if lines:
            out.append((s.cite, "\n".join(lines)))
    return tuple(out)


def write_topic(writer: TopicAsker, ctx: TopicContext) -> TopicDraft:
    """The model's draft of one topic page (raises ProviderError / ProviderOutputError like every call).

    Names in the prose are checked like every page's (paths and file names must exist); members are not
    checked against the evidence, since a topic may mention any of a class's methods. Sources are checked
    strictly (Catalog)."""
    catalog = catalog_of(ctx.line_counts, ctx)
    known = Known.build(symbols=[s.qualname for s in ctx.evidence()], paths=[*ctx.paths, *catalog.lines],
                        subject=f"{ctx.title} {ctx.repo}")
    text = topic_prompt(ctx, writer.prompt_chars(LLMTopicDraft))
    return writer.ask_with(LLMTopicDraft, text, {**known.as_context(), "catalog": catalog},
                           f"topic:{ctx.page_id}")


def catalog_of(lines: Mapping[str, int], ctx: TopicContext) -> Catalog:
    return Catalog(lines=lines, named={s.qualname: s.cite for s in ctx.evidence() if s.qualname})
