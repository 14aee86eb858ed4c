"""What a build shows and keeps of a writer that calls a model, beyond its pages: the protocol the build and
the CLI ask for (never the LLMWriter class), so any writer offering it is reported and recorded the same way.

Kept out of writer.py on purpose: that module's import closure is part of the extractive writer's id (every
page key), and this protocol changes no extractive page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from generator.pages.writer import PageWriter

if TYPE_CHECKING:
    from sourcebook.ledger import Ledger


@runtime_checkable
class ModelWriter(PageWriter, Protocol):
    """A PageWriter that calls a model (llm/writer.py's LLMWriter)."""

    @property
    def ledger(self) -> Ledger:
        """Every call of this run: tokens and cost (published beside the index, saved under ledger/)."""
        ...

    @property
    def stop_reason(self) -> str:
        """Why the writer stopped calling the provider this run ("" while it has not)."""
        ...

    def progress(self) -> str:
        """Pages, tokens and cost so far, for a progress line."""
        ...
