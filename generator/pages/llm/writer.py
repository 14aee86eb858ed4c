"""The LLM PageWriter: file, module and overview prose (and missing docstrings) through a ChatModel.

Prompts are versioned Jinja templates in `generator/pages/llm/prompts/` (`<name>.v<N>.j2`); their versions are
part of
the writer id and so of every page key: changing a prompt or the model rewrites the pages, nothing else does.

Every prompt is built to fit the model's window: reply budget + schema + prompt <= context_tokens (counted
by sourcebook.provider's chars-per-token rule). A file whose source does not fit is shown as an excerpt
around its most important symbols; when even that would cover too little, the file is summarised in parts
first (`file_part`), and the page is written from those notes. Modules are written from their children's
summaries (grouped into part notes when they do not fit), the overview from the README and the top modules.

Secrets: a file whose name marks it as secret is never sent (its page is extractive). The provider redacts
every message it sends (`provider.outbound_messages`); this module also redacts each text before it is
excerpted, shortened or split to fit the window, on purpose: a cut can end a secret's line or a key block
mid-way, leaving a fragment the rules no longer recognise when the provider scans the finished prompt.

Failure handling: a page whose draft fails after the provider's retries and re-asks falls back to the
extractive draft with `fallback=True` (the build marks it for retry next run). After `outage_after`
consecutive transport failures the writer stops calling the provider for the rest of the run, and it stops
cleanly when `max_pages` or `max_cost` is reached: the remaining pages are extractive fallbacks, retried on
the next run. The build never fails because of the model.

One job a module, composed by inheritance into LLMWriter: templates.py (the prompt templates and their
version), calls.py (the writer's state, budgets and calls, the attempt wrapper and its stop rules),
small_model.py (the small-model policy: sections and symbols asked one at a time), file_pages.py,
module_pages.py and overview_page.py (each kind's prompts and draft), estimate.py (the dry run's estimate).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from generator.pages.llm.estimate import Estimates
from generator.pages.writer import (
    FileContext,
    FileDraft,
    ModuleContext,
    ModuleDraft,
    OverviewContext,
    OverviewDraft,
    TopicDraft,
)
from sourcebook.provider import ChatModel

if TYPE_CHECKING:
    from generator.pages.topics import TopicContext


class LLMWriter(Estimates):
    """PageWriter over a ChatModel. Thread-safe: the build may call it from `concurrency` threads."""

    def file_page(self, ctx: FileContext) -> FileDraft:
        if not self.wants_llm(ctx):
            return self._fallback.file_page(ctx)
        return self._attempt(f"file:{ctx.path}", lambda: self._write_file(ctx),
                             lambda: self._fallback.file_page(ctx))

    def module_page(self, ctx: ModuleContext) -> ModuleDraft:
        if not ctx.files and not ctx.submodules:
            return self._fallback.module_page(ctx)
        return self._attempt(f"module:{ctx.path or '.'}", lambda: self._write_module(ctx),
                             lambda: self._fallback.module_page(ctx))

    def overview(self, ctx: OverviewContext) -> OverviewDraft:
        return self._attempt("overview", lambda: self._write_overview(ctx),
                             lambda: self._fallback.overview(ctx))

    def topic_page(self, ctx: TopicContext) -> TopicDraft:
        """An Architecture or "How it works" page (llm/topics.py); extractive when it fails."""
        from generator.pages.llm.topics import write_topic
        from generator.pages.topics import extractive_topic

        return self._attempt(f"topic:{ctx.page_id}", lambda: write_topic(self, ctx),
                             lambda: extractive_topic(ctx))


def make_llm_writer(chat: ChatModel | None, *, repo_name: str, concurrency: int,
                    max_pages: int | None = None, max_cost: float | None = None) -> LLMWriter | None:
    """The LLM writer for a configured chat model, or None (the build then uses the extractive writer)."""
    if chat is None:
        return None
    return LLMWriter(chat, repo_name=repo_name, concurrency=concurrency, max_pages=max_pages,
                     max_cost=max_cost)


def summaries_of(drafts: Mapping[str, FileDraft | ModuleDraft]) -> dict[str, str]:
    """Page summaries by path, for module contexts (convenience for callers building bottom-up)."""
    return {path: d.summary for path, d in drafts.items()}
