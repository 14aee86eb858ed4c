"""The dry run's estimate: the calls and tokens a page would take, whole and on the small-model path,
without calling anything.
"""

from __future__ import annotations

from pydantic import BaseModel

from generator.pages.llm.drafts import (
    LLMFileDraft,
    LLMModuleDraft,
    LLMOverviewDraft,
    PartNotes,
    SymbolExplanation,
)
from generator.pages.llm.file_pages import FilePages, file_sections
from generator.pages.llm.module_pages import ModulePages
from generator.pages.llm.overview_page import OverviewPage
from generator.pages.llm.small_model import CORE_SECTIONS, section_schema
from generator.pages.llm.templates import user_messages
from generator.pages.writer import FileContext, ModuleContext, OverviewContext
from sourcebook.provider import estimate_prompt_tokens, estimate_tokens

EXPECTED_OUTPUT_TOKENS = {"file": 450, "file_part": 200, "module": 350, "module_part": 200, "overview": 450,
                          "section": 150, "symbol": 60}


class Estimates(FilePages, ModulePages, OverviewPage):
    """(calls, input tokens, output tokens) of a page, from the prompts the writer would send."""

    def estimate_alone(self, ctx: FileContext | ModuleContext | OverviewContext) -> tuple[int, int, int]:
        """(calls, input tokens, output tokens) of the small-model path on top of `estimate`: the summary and
        each core section asked alone, and key symbols and docstrings asked one symbol per call. A run pays
        it for pages whose whole draft fails (or for every page once a kind has failed SINGLE_AFTER times)."""
        calls, tokens_in, tokens_out = 0, 0, 0

        def add(prompt: str, model: type[BaseModel], kind: str) -> None:
            nonlocal calls, tokens_in, tokens_out
            calls += 1
            tokens_in += estimate_prompt_tokens(user_messages(prompt), model)
            tokens_out += EXPECTED_OUTPUT_TOKENS[kind]

        if isinstance(ctx, FileContext):
            if not self.wants_llm(ctx):
                return 0, 0, 0
            undocumented = self._undocumented(ctx)
            for section in ["summary", *file_sections(len(ctx.facts.symbols), bool(undocumented))]:
                if section in ("key_symbols", "docstrings"):
                    continue
                add(self.file_prompt(ctx, section=section)[0], section_schema(section), "section")
            by_name = {s.qualname: s for s in ctx.facts.symbols}
            for qualname in self._alone_symbols(ctx, undocumented):
                add(self.symbol_prompt(ctx, by_name[qualname]), SymbolExplanation, "symbol")
            return calls, tokens_in, tokens_out
        if isinstance(ctx, ModuleContext):
            if not ctx.files and not ctx.submodules:
                return 0, 0, 0
            for section in ("summary", *CORE_SECTIONS["module"]):
                add(self.module_prompt(ctx, section=section)[0], section_schema(section), "section")
            return calls, tokens_in, tokens_out
        for section in ("summary", *CORE_SECTIONS["overview"]):
            add(self.overview_prompt(ctx, section=section), section_schema(section), "section")
        return calls, tokens_in, tokens_out

    def estimate(self, ctx: FileContext | ModuleContext | OverviewContext) -> tuple[int, int, int]:
        """(calls, input tokens, output tokens) writing this page would take, without calling anything.

        Output tokens are the typical reply sizes in EXPECTED_OUTPUT_TOKENS, not the reply budget.
        """
        if isinstance(ctx, FileContext):
            if not self.wants_llm(ctx):
                return 0, 0, 0
            calls, tokens_in, tokens_out = 1, 0, EXPECTED_OUTPUT_TOKENS["file"]
            notes: list[str] = []
            if self.needs_parts(ctx):
                for prompt, _known, _label in self._file_parts(ctx):
                    calls += 1
                    tokens_in += estimate_prompt_tokens(user_messages(prompt), PartNotes)
                    tokens_out += EXPECTED_OUTPUT_TOKENS["file_part"]
                    notes.append("x" * EXPECTED_OUTPUT_TOKENS["file_part"] * 3)
            prompt = self._fit(self.file_prompt(ctx, notes)[0], LLMFileDraft)
            return calls, tokens_in + estimate_prompt_tokens(user_messages(prompt), LLMFileDraft), tokens_out
        if isinstance(ctx, ModuleContext):
            if not ctx.files and not ctx.submodules:
                return 0, 0, 0
            prompt, omitted = self.module_prompt(ctx)
            tokens_in = estimate_prompt_tokens(user_messages(prompt), LLMModuleDraft)
            calls, tokens_out = 1, EXPECTED_OUTPUT_TOKENS["module"]
            if omitted:
                groups = self._module_groups(ctx)
                calls += len(groups)
                tokens_in += sum(estimate_tokens("\n".join(g)) for g in groups)
                tokens_out += EXPECTED_OUTPUT_TOKENS["module_part"] * len(groups)
            return calls, tokens_in, tokens_out
        prompt = self.overview_prompt(ctx)
        tokens_in = estimate_prompt_tokens(user_messages(prompt), LLMOverviewDraft)
        return 1, tokens_in, EXPECTED_OUTPUT_TOKENS["overview"]
