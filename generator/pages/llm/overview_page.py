"""The overview page: the prompt from the README and the top modules and files, and the draft.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import BaseModel

from generator.pages.llm.drafts import SECTION_HELP, Known, LLMOverviewDraft, section_text
from generator.pages.llm.excerpt import fit_lines, shorten
from generator.pages.llm.small_model import CORE_SECTIONS, SmallModelPolicy, section_schema
from generator.pages.llm.templates import render_prompt
from generator.pages.writer import OverviewContext, OverviewDraft
from sourcebook.errors import ProviderOutputError
from sourcebook.redaction import redact_text

log = logging.getLogger(__name__)


class OverviewPage(SmallModelPolicy):
    """The overview's prompt and draft."""

    def overview_prompt(self, ctx: OverviewContext, *, section: str | None = None) -> str:
        kind, budget = "overview", self._chars(self._input_budget(LLMOverviewDraft))
        if section is not None:
            kind, budget = "section", self._section_budget(section)
        modules = [f"{m.path}/: {redact_text(m.summary) or '(no summary)'}" for m in ctx.top_modules]
        files = [f"{f.path}: {redact_text(f.summary) or '(no summary)'}" for f in ctx.top_files]
        modules, _ = fit_lines(modules, budget // 3)
        files, _ = fit_lines(files, budget // 4)
        values: dict[str, Any] = {
            "repo": ctx.repo_name or self._repo, "max_items": 8, "file_count": ctx.file_count,
            "symbol_count": ctx.symbol_count, "languages": [f"{lang} ({n})" for lang, n in ctx.languages[:6]],
            "readme": "", "readme_path": ctx.readme_path, "readme_truncated": False,
            "modules": modules, "files": files,
            "entry_points": [f"{e.qualname} ({e.kind}) in {e.path}" for e in ctx.entry_points[:8]],
        }
        if section is not None:
            values.update(page="overview", field=section, guidance=SECTION_HELP.get(section, ""),
                          subject=f'the repository "{values["repo"]}"')
        room = budget - len(render_prompt(kind, **values))
        if ctx.readme and room > 200:
            values["readme"], values["readme_truncated"] = shorten(redact_text(ctx.readme), room)
        return render_prompt(kind, **values)

    def _write_overview(self, ctx: OverviewContext) -> OverviewDraft:
        items = [*(m.path for m in ctx.top_modules), *(f.path for f in ctx.top_files)]
        known = Known.build(symbols=[e.qualname for e in ctx.entry_points],
                            paths=[*items, ctx.readme_path, *(e.path for e in ctx.entry_points)], items=items,
                            subject=ctx.repo_name or self._repo)

        def ask(section: str) -> BaseModel:
            return self._single(section_schema(section), self.overview_prompt(ctx, section=section), known,
                                f"overview#{section}")

        draft: LLMOverviewDraft
        if self._small_model("overview"):
            draft = LLMOverviewDraft.model_construct(summary=section_text(ask("summary"), "summary"))
            return self._sections_alone(draft, "overview", CORE_SECTIONS["overview"], ask)
        try:
            draft = self._ask(LLMOverviewDraft, self.overview_prompt(ctx), known, "overview")
        except ProviderOutputError as exc:
            log.info("overview: whole draft failed (%s); asking for its sections one at a time", exc)
            draft = LLMOverviewDraft.model_construct(summary=section_text(ask("summary"), "summary"))
            return self._sections_alone(draft, "overview", self._to_ask_alone(
                "overview", CORE_SECTIONS["overview"], failed_whole=True), ask)
        core = CORE_SECTIONS["overview"]
        missing = [s for s in core if not getattr(draft, s)]
        alone = self._to_ask_alone("overview", missing, core=core)
        return self._sections_alone(draft, "overview", alone, ask)
