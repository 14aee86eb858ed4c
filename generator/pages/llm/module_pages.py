"""Module pages: the module prompt from its children's summaries within budget (grouped into part notes
when they do not fit), and the draft.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from generator.pages.llm.drafts import SECTION_HELP, Known, LLMModuleDraft, PartNotes, section_text
from generator.pages.llm.excerpt import fit_lines, shorten
from generator.pages.llm.small_model import CORE_SECTIONS, SmallModelPolicy, section_schema
from generator.pages.llm.templates import of_repository, render_prompt
from generator.pages.writer import ModuleContext, ModuleDraft
from sourcebook.errors import ProviderOutputError
from sourcebook.redaction import redact_text

log = logging.getLogger(__name__)


SECTION_EDGES = 6  # import edges (and outside modules) shown with a module's one-field call


class ModulePages(SmallModelPolicy):
    """Module pages' prompts and drafts."""

    def _module_values(self, ctx: ModuleContext, children: list[str], omitted: int,
                       notes: Sequence[str], *, edges: int = 20) -> dict[str, Any]:
        return {
            "repo": self._repo, "path": ctx.path, "max_items": 8,
            "readme": shorten(redact_text(ctx.readme),
                              self._chars(self._input_budget(LLMModuleDraft)) // 4)[0],
            "files": [c for c in children if not c.startswith("submodule ")],
            "submodules": [c.removeprefix("submodule ") for c in children if c.startswith("submodule ")],
            "part_notes": list(notes), "omitted": omitted,
            "entry_points": [f"{e.qualname} ({e.kind}) in {e.path}" for e in ctx.entry_points],
            "edges": [f"{a} -> {b}" for a, b in ctx.internal_edges[:edges]],
            "external": sorted({b for _, b in ctx.external_edges if b})[:edges],
        }

    def module_children(self, ctx: ModuleContext) -> list[str]:
        lines = [f"{f.path}: {redact_text(f.summary) or '(no summary)'}" for f in ctx.files]
        lines += [f"submodule {m.path}/: {redact_text(m.summary) or '(no summary)'}" for m in ctx.submodules]
        return lines

    def module_prompt(self, ctx: ModuleContext, notes: Sequence[str] = (), *,
                      section: str | None = None) -> tuple[str, int]:
        """The module prompt within budget, and how many children did not fit (0 = all shown)."""
        children = self.module_children(ctx)
        kind, extra = "module", {}
        budget = self._chars(self._input_budget(LLMModuleDraft))
        if section is not None:
            kind, budget = "section", self._section_budget(section)
            extra = {"page": "module", "field": section, "guidance": SECTION_HELP.get(section, ""),
                     "subject": f'the module "{ctx.path or "."}" of {of_repository(self._repo)}'}
        # one field asked alone gets shorter evidence: the children's summaries, few import edges (a small
        # model copies long path lists into its answer)
        edges = 20 if section is None else SECTION_EDGES
        fixed = len(render_prompt(kind, **self._module_values(ctx, [], 0, notes, edges=edges), **extra))
        shown, omitted = fit_lines(children, budget - fixed)
        return (render_prompt(kind, **self._module_values(ctx, shown, omitted, notes, edges=edges), **extra),
                omitted)

    def _module_groups(self, ctx: ModuleContext) -> list[list[str]]:
        fixed = len(render_prompt("module_part", repo=self._repo, path=ctx.path, part=9, parts=9,
                                  children=[]))
        budget = self._chars(self._input_budget(PartNotes)) - fixed
        groups: list[list[str]] = []
        rest = self.module_children(ctx)
        while rest:
            shown, _ = fit_lines(rest, budget)
            if not shown:  # one child's summary alone overflows: cut it
                shown = [shorten(rest[0], budget)[0]]
            groups.append(shown)
            rest = rest[len(shown):]
        return groups

    def _module_known(self, ctx: ModuleContext) -> Known:
        items = [*(f.path for f in ctx.files), *(m.path for m in ctx.submodules)]
        paths = [ctx.path, *items, *(e.path for e in ctx.entry_points),
                 *(b for _, b in ctx.external_edges), *([ctx.parent.path] if ctx.parent else [])]
        return Known.build(symbols=[e.qualname for e in ctx.entry_points], paths=paths, items=items,
                           subject=f"{ctx.path} {self._repo}")

    def _write_module(self, ctx: ModuleContext) -> ModuleDraft:
        prompt, omitted = self.module_prompt(ctx)
        notes: list[str] = []
        if omitted:
            groups = self._module_groups(ctx)
            for i, group in enumerate(groups, start=1):
                text = render_prompt("module_part", repo=self._repo, path=ctx.path, part=i,
                                     parts=len(groups), children=group)
                label = f"module-part:{ctx.path or '.'}#{i}"
                part = self._ask(PartNotes, text, self._module_known(ctx), label)
                notes.append(part.summary)
            prompt = self._fit(self.module_prompt(ctx, notes)[0], LLMModuleDraft)
        known, label = self._module_known(ctx), f"module:{ctx.path or '.'}"

        def ask(section: str) -> BaseModel:
            model = section_schema(section)
            text = self._fit(self.module_prompt(ctx, notes, section=section)[0], model)
            return self._single(model, text, known, f"{label}#{section}")

        draft: LLMModuleDraft
        if self._small_model("module"):
            draft = LLMModuleDraft.model_construct(summary=section_text(ask("summary"), "summary"))
            return self._sections_alone(draft, "module", CORE_SECTIONS["module"], ask)
        try:
            draft = self._ask(LLMModuleDraft, prompt, known, label)
        except ProviderOutputError as exc:
            log.info("%s: whole draft failed (%s); asking for its sections one at a time", label, exc)
            draft = LLMModuleDraft.model_construct(summary=section_text(ask("summary"), "summary"))
            return self._sections_alone(draft, "module", self._to_ask_alone(
                "module", CORE_SECTIONS["module"], failed_whole=True), ask)
        missing = [s for s in CORE_SECTIONS["module"] if not getattr(draft, s)]
        return self._sections_alone(draft, "module", self._to_ask_alone("module", missing,
                                                                         core=CORE_SECTIONS["module"]), ask)
