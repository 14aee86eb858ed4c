"""The LLM writer's state and its calls to the model: prompt budgets that fit the window, one call and its
counting, and the attempt wrapper that falls back to the extractive page and applies the stop rules
(`outage_after`, `max_pages`, `max_cost`).
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import Counter
from typing import Any, TypeVar

from pydantic import BaseModel

from generator.pages.llm.drafts import Known, dropped_of, offered_of
from generator.pages.llm.excerpt import shorten
from generator.pages.llm.templates import prompt_version, user_messages
from generator.pages.writer import ExtractiveWriter, WriterStats
from sourcebook.errors import ProviderError, ProviderOutputError
from sourcebook.ledger import Ledger, PageRichness
from sourcebook.provider import CHARS_PER_TOKEN, MESSAGE_OVERHEAD_TOKENS, ChatModel, estimate_prompt_tokens

log = logging.getLogger(__name__)


D = TypeVar("D", bound=BaseModel)
SAFETY = 0.9  # of the window: the chars-per-token rule is an estimate, keep a margin on top of it
PROSE_FIELDS = {"topic": ("summary", "sections"),
                "file": ("summary", "purpose", "how_it_works", "relationships", "key_symbols", "caveats"),
                "module": ("summary", "purpose", "structure", "key_items", "caveats"),
                "overview": ("summary", "architecture", "key_modules", "getting_started")}


@dataclasses.dataclass
class _PageTally:
    """What the calls for one page offered, and what the validators dropped."""

    offered: int = 0
    rejected: int = 0
    singles: int = 0


class WriterCalls:
    """The writer's state (thread-safe: the build may call it from `concurrency` threads) and its calls."""

    def __init__(self, chat: ChatModel, *, repo_name: str = "", concurrency: int = 4,
                 max_pages: int | None = None, max_cost: float | None = None, outage_after: int = 3) -> None:
        self._chat = chat
        self._repo = repo_name
        self._concurrency = max(1, concurrency)
        self._max_pages = max_pages
        self._max_cost = max_cost
        self._outage_after = outage_after
        self._fallback = ExtractiveWriter()
        self._lock = threading.Lock()
        self._written = 0
        self._failed = 0
        self._skipped = 0
        self._started = 0
        self._consecutive_outages = 0
        self._stop_reason = ""
        self._misses: Counter[str] = Counter()  # "file:purpose" -> times the model failed that section
        self._page = threading.local()  # the page being written by this thread: its _PageTally

    @property
    def id(self) -> str:
        return f"llm/{self._chat.id}/{prompt_version()}"

    @property
    def concurrency(self) -> int:
        return self._concurrency

    @property
    def chat(self) -> ChatModel:
        return self._chat

    @property
    def ledger(self) -> Ledger:
        return self._chat.ledger

    def prompt_chars(self, model: type[BaseModel]) -> int:
        """Characters of prompt text a call for `model` may send (its reply and schema reserved)."""
        return self._chars(self._input_budget(model))

    def ask_with(self, model: type[D], text: str, context: dict[str, Any], label: str) -> D:
        """One call whose validators read `context` (a Known under "known", plus what the model needs)."""
        draft = self._chat.complete(model, user_messages(text), max_tokens=self._reply_tokens(),
                                    context=context, label=label)
        self._count(draft, label)
        return draft

    def ask_alone_with(self, model: type[D], text: str, context: dict[str, Any], label: str, *,
                       reply_tokens: int) -> D:
        """One call for one part of a page (the small-model path: a single-section call, and one offered
        claim, rejected when no reply validates)."""
        tally = getattr(self._page, "tally", None)
        if tally is not None:
            tally.singles += 1
            tally.offered += 1
        try:
            draft = self._chat.complete(model, user_messages(text), context=context, label=label,
                                        max_tokens=min(self._reply_tokens(), reply_tokens))
        except ProviderOutputError:
            if tally is not None:
                tally.rejected += 1
            raise
        self._count(draft, label)
        return draft

    def stats(self) -> WriterStats:
        totals = self._chat.ledger.totals()
        with self._lock:
            return WriterStats(pages=self._written, failures=self._failed, extra={
                "skipped": float(self._skipped), "calls": float(totals.calls),
                "requests": float(totals.requests), "input_tokens": float(totals.input_tokens),
                "output_tokens": float(totals.output_tokens), "cost": totals.cost})

    @property
    def stop_reason(self) -> str:
        """Why the writer stopped calling the provider this run ("" while it has not)."""
        with self._lock:
            return self._stop_reason

    def progress(self) -> str:
        t = self._chat.ledger.totals()
        with self._lock:
            return (f"{self._written} LLM pages, {self._failed} failed, {t.input_tokens + t.output_tokens:,} "
                    f"tokens, ${t.cost:.4f}")

    def _reply_tokens(self) -> int:
        return min(self._chat.max_output_tokens, max(256, self._chat.context_tokens // 4))

    def _input_budget(self, model: type[BaseModel]) -> int:
        """Tokens left for the prompt text once the reply, the schema and a margin are reserved."""
        window = int(self._chat.context_tokens * SAFETY)
        return window - self._reply_tokens() - estimate_prompt_tokens([], model) - MESSAGE_OVERHEAD_TOKENS

    def _chars(self, tokens: int) -> int:
        return max(0, int(tokens * CHARS_PER_TOKEN))

    def _fit(self, prompt: str, model: type[BaseModel]) -> str:
        budget = self._chars(self._input_budget(model))
        return prompt if len(prompt) <= budget else shorten(prompt, budget)[0]

    def _attempt(self, label: str, write: Any, fallback: Any) -> Any:
        reason = self._should_skip()
        if reason:
            draft = fallback()
            with self._lock:
                self._skipped += 1
            return draft.model_copy(update={"fallback": True, "deferred": True})
        tally = self._page.tally = _PageTally()
        try:
            draft = write()
        except ProviderOutputError as exc:
            log.warning("%s: LLM draft rejected (%s); extractive page used, retried later", label, exc)
            with self._lock:
                self._failed += 1
                self._consecutive_outages = 0
            self._record(label, "fallback", None, tally)
            return fallback().model_copy(update={"fallback": True})
        except ProviderError as exc:
            log.warning("%s: provider failed (%s); extractive page used, retried later", label, exc)
            with self._lock:
                self._failed += 1
                self._consecutive_outages += 1
                if self._consecutive_outages >= self._outage_after and not self._stop_reason:
                    self._stop_reason = f"provider unavailable ({exc})"
                    log.error("llm: %d consecutive provider failures; no more LLM calls this run",
                              self._consecutive_outages)
            self._record(label, "fallback", None, tally)
            return fallback().model_copy(update={"fallback": True})
        finally:
            self._page.tally = None
        with self._lock:
            self._written += 1
            self._consecutive_outages = 0
        self._record(label, "llm", draft, tally)
        log.info("%s: written by %s (%s)", label, self._chat.id, self.progress())
        return draft.model_copy(update={"written_by": "llm", "fallback": False})

    def _record(self, label: str, outcome: str, draft: BaseModel | None, tally: _PageTally) -> None:
        kind = label.split(":", 1)[0]
        fields = PROSE_FIELDS.get(kind, ())
        sections = 0 if draft is None else sum(1 for f in fields if getattr(draft, f, None))
        docstrings = len(getattr(draft, "docstrings", ()) or ()) if draft is not None else 0
        self._chat.ledger.record_page(PageRichness(
            label=label, outcome=outcome, sections=sections, docstrings=docstrings, offered=tally.offered,
            rejected=tally.rejected, single_calls=tally.singles))

    def _should_skip(self) -> str:
        """Why this page must not call the model (stop rules), or "" after reserving a page slot."""
        # The cost is known only after a call: with N threads a run may overshoot by N-1 pages' cost.
        over_cost = self._max_cost is not None and self._chat.ledger.totals().cost >= self._max_cost
        with self._lock:
            if not self._stop_reason:
                if over_cost:
                    self._stop_reason = f"--max-cost {self._max_cost} reached"
                elif self._max_pages is not None and self._started >= self._max_pages:
                    self._stop_reason = f"--max-pages {self._max_pages} reached"
                else:
                    self._started += 1  # reserved under the lock: threads cannot exceed --max-pages
            return self._stop_reason

    def _ask(self, model: type[D], text: str, known: Known, label: str, *,
             reply_tokens: int | None = None) -> D:
        draft = self._chat.complete(model, user_messages(text),
                                    max_tokens=reply_tokens or self._reply_tokens(),
                                    context=known.as_context(), label=label)
        self._count(draft, label)
        return draft

    def _count(self, draft: BaseModel, label: str) -> None:
        """The page tally and the log line of what the validators dropped from `draft`."""
        dropped = dropped_of(draft)
        tally = getattr(self._page, "tally", None)
        if tally is not None:
            tally.offered += offered_of(draft)
            tally.rejected += len(dropped)
        if dropped:
            log.info("%s: kept the draft, dropped %d invalid optional entr%s: %s", label, len(dropped),
                     "y" if len(dropped) == 1 else "ies", "; ".join(dropped))
