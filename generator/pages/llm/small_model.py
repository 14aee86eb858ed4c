"""The small-model policy: a section the model left out or got rejected SINGLE_AFTER times (in this run,
or the whole draft failing after its re-ask) is asked for alone, with a shorter prompt, on every later page.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

from generator.pages.llm.calls import D, WriterCalls
from generator.pages.llm.drafts import (
    DocstringsOnly,
    KeySymbolsOnly,
    Known,
    SymbolExplanation,
    section_model,
    section_text,
)
from sourcebook.errors import ProviderError, ProviderOutputError

log = logging.getLogger(__name__)


# The small-model strategy: a section the model left out or got rejected this many times (in this run, or
# the whole draft failing after its re-ask) is asked for alone, with a shorter prompt, on every later page.
SINGLE_AFTER = 2
SECTION_SHARE = 0.6  # of the full prompt's input budget: a one-field call gets shorter evidence
SYMBOL_REPLY_TOKENS = 200  # JSON around at most MAX_DOCSTRING_CHARS (400) of explanation
CORE_SECTIONS = {"file": ("purpose", "how_it_works", "key_symbols", "docstrings"),
                 "module": ("purpose", "structure"), "overview": ("architecture",)}


def section_schema(section: str) -> type[BaseModel]:
    if section == "key_symbols":
        return KeySymbolsOnly
    if section == "docstrings":
        return DocstringsOnly
    return section_model(section)


class SmallModelPolicy(WriterCalls):
    """When a page's sections are asked for one at a time, and asking them."""

    def alone_mode(self, kind: str) -> bool:
        """Whether pages of `kind` go straight to the small-model path (whole drafts kept failing)."""
        return self._small_model(kind)

    def whole_failed(self, kind: str) -> None:
        """Count a failed whole draft of `kind` (after SINGLE_AFTER, later pages skip whole drafts)."""
        with self._lock:
            self._misses[f"{kind}:whole"] += 1

    def _small_model(self, kind: str) -> bool:
        """Whether whole drafts of this kind failed SINGLE_AFTER times this run: then later pages skip the
        whole draft (and its re-asks) and are asked for section by section from the start."""
        with self._lock:
            return self._misses[f"{kind}:whole"] >= SINGLE_AFTER

    def _to_ask_alone(self, kind: str, missing: Sequence[str], *, failed_whole: bool = False,
                      core: Sequence[str] = ()) -> list[str]:
        """Count this page's missing sections as failures; return those the model has now failed twice.

        A draft that leaves out most of the page's `core` sections (a summary and little else: what a small
        model returns) counts as a failed whole draft: its missing sections are asked alone at once."""
        if core and len(missing) * 2 > len(core):
            log.info("%s: the draft lacks %s; asking for them one at a time", kind, ", ".join(missing))
            failed_whole = True
        with self._lock:
            if failed_whole:
                self._misses[f"{kind}:whole"] += 1
            out = []
            for section in missing:
                key = f"{kind}:{section}"
                self._misses[key] += SINGLE_AFTER if failed_whole else 1  # a failed draft + its re-ask
                if self._misses[key] >= SINGLE_AFTER:
                    out.append(section)
            return out

    def _sections_alone(self, draft: D, kind: str, sections: Sequence[str],
                        ask: Callable[[str], BaseModel | None]) -> D:
        """`draft` with each of `sections` asked for alone; a section that still fails is left out."""
        updates: dict[str, Any] = {}
        for section in sections:
            try:
                reply = ask(section)
            except ProviderOutputError as exc:
                log.info("%s section %s: no valid reply alone either (%s)", kind, section, exc)
                continue
            except ProviderError as exc:
                # the provider failed mid-page: keep what the model already wrote rather than lose it all
                log.warning("%s section %s: provider failed (%s); the page keeps the sections it has",
                            kind, section, exc)
                break
            if reply is not None:
                updates[section] = section_text(reply, section)
        return draft.model_copy(update=updates) if updates else draft

    def _single(self, model: type[BaseModel], text: str, known: Known, label: str) -> BaseModel:
        tally = getattr(self._page, "tally", None)
        if tally is not None:
            tally.singles += 1
        # a one-symbol reply is a sentence or two: a small cap stops a rambling small model early, and keeps
        # its rejected reply small enough for the re-ask to fit the window
        cap = min(self._reply_tokens(), SYMBOL_REPLY_TOKENS) if model is SymbolExplanation else None
        return self._ask(model, text, known, label, reply_tokens=cap)

    def _section_budget(self, section: str) -> int:
        """Characters of evidence for a one-field call: a share of what the full draft would get."""
        return int(self._chars(self._input_budget(section_schema(section))) * SECTION_SHARE)
