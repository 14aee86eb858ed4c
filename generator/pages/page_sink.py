"""The page state of a build: PageSink renders drafts to docs/, remembers keys, drafts and summaries in the
state (restored from the shared build cache when it holds a page), deletes orphans, and saves the state
every few seconds so a killed build resumes where it stopped.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from pathlib import Path
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from generator.analyze.plan import (
    CachedPage,
    PageState,
    StateMemo,
    is_stale,
    orphan_pages,
    retry_wait,
    save_state,
)
from sourcebook.atomic import atomic_write_text
from sourcebook.config import Config

log = logging.getLogger(__name__)

D = TypeVar("D", bound=BaseModel)
SAVE_EVERY_S = 5.0  # page state is also saved this often while pages are written


class PageReport(Protocol):
    """The part of the build's report the page stages fill in (generator/build_report.py BuildReport): the
    build passes its report in; pages never import the build stage."""

    pages_written: list[str]
    pages_unchanged: int
    pages_restored: list[str]
    drafts_reused: list[str]
    write_failures: list[str]
    kept_prose: list[str]


class CachedPages(Protocol):
    """The shared build cache as the page stages read it (generator/index/build_cache.py SharedCache, which
    the build opens and passes in: pages and the index are siblings)."""

    def page(self, page_id: str) -> CachedPage | None: ...

    def matches(self, page_id: str, key: str) -> bool: ...

    def summary(self, page_id: str) -> str | None: ...


class PageSink:
    """Renders drafts to docs/, remembers keys and summaries in the page state, deletes orphans."""

    def __init__(self, config: Config, state: dict[str, PageState], report: PageReport,
                 shared: CachedPages | None = None) -> None:
        self.config = config
        self.docs = config.docs_dir
        self.state = state
        self.report = report
        self.shared = shared
        self.adopted: set[str] = set()  # pages whose state row came from the shared cache
        # page id -> (a draft re-used from a stored row, that row's draft as stored): stored again as it was,
        # not re-dumped through a narrower model (a cached LLM draft keeps its fields, so it does not churn)
        self.reused: dict[str, tuple[BaseModel, dict[str, Any]]] = {}
        self.dirty = False
        self.saved_at = time.monotonic()
        self.encoded: StateMemo = {}  # each row's JSON as last saved: a save encodes new rows only

    def fresh(self, page_id: str, key: str) -> bool:
        if is_stale(page_id, key, self.state, self.docs) and (
                not self._restore(page_id, key) or is_stale(page_id, key, self.state, self.docs)):
            return False
        row = self.state[page_id]
        if row.retry:  # a fallback waiting out its backoff: one run less to wait
            row.retry_wait -= 1
            self.encoded.pop(page_id, None)  # changed in place: encoded again
            self.dirty = True
        self.report.pages_unchanged += 1
        return True

    def _restore(self, page_id: str, key: str) -> bool:
        """Take this page from the shared build cache (build_cache.py) when it holds it at exactly `key`:
        its Markdown is written out and its state adopted, so nothing is written or rendered. A cached page
        at another key, when this machine knows nothing of the page, lends its state (summary, drafts) to
        the rewrite, which may then re-render a cached draft instead of asking the writer.
        True if restored."""
        cached = self.shared.page(page_id) if self.shared is not None else None
        if cached is None:
            return False
        if cached.state.key == key and cached.markdown is not None:
            atomic_write_text(self.docs / page_id, cached.markdown)
            self.state[page_id] = dataclasses.replace(cached.state)
            self.report.pages_restored.append(page_id)
            self.dirty = True
            return True
        if page_id not in self.state:
            self.state[page_id] = dataclasses.replace(cached.state)
            self.adopted.add(page_id)
        return False

    def settle(self, page_id: str, draft: D, model: type[D], stable: str, dkey: str) -> D:
        """The draft to render. A writer's fallback keeps the model's earlier prose for this page when what
        that prose was written about is unchanged (`stable`): a failed retry never replaces model-written
        prose with extractive text. Kept prose for changed inputs stays marked for a (backed-off) retry."""
        row = self.state.get(page_id)
        if not getattr(draft, "fallback", False) or row is None or not row.llm_draft or row.llm_key != stable:
            return draft
        try:
            kept = model.model_validate(row.llm_draft)
        except ValidationError:
            return draft
        exact = stable == dkey  # a file page: the very inputs the prose was written from
        log.info("%s: the model failed; kept its earlier prose%s", page_id,
                 "" if exact else " (its children changed: retried later)")
        self.report.kept_prose.append(page_id)
        return kept.model_copy(update={"written_by": "llm", "fallback": not exact})

    def model_draft(self, page_id: str, dkey: str, model: type[D]) -> D | None:
        """The model's last prose for this page if it was written from exactly these inputs (`dkey`, the
        same writer): a file whose inputs changed, fell back, and then changed back gets that prose again,
        without asking the model and without a stale or extractive page in between."""
        row = self.state.get(page_id)
        if row is None or not row.llm_draft or row.llm_key != dkey:
            return None
        try:
            draft = model.model_validate(row.llm_draft)
        except ValidationError:
            return None
        log.info("%s: its inputs are back to those the model wrote for; its prose reused", page_id)
        return draft.model_copy(update={"written_by": "llm", "fallback": False})

    def summary(self, page_id: str) -> str:
        row = self.state.get(page_id)
        return row.summary if row else ""

    def stored_draft(self, page_id: str, dkey: str, model: type[D]) -> D | None:
        """The draft this page was last rendered from, if its inputs and writer are unchanged."""
        found = self.stored(page_id, dkey, model)
        return found[0] if found is not None else None

    def stored(self, page_id: str, dkey: str, model: type[D]) -> tuple[D, PageState] | None:
        """stored_draft, with the state row it came from (this machine's, else the shared cache's)."""
        rows = [self.state.get(page_id)]
        cached = self.shared.page(page_id) if self.shared is not None else None
        if cached is not None:
            rows.append(cached.state)  # another machine's draft for the same inputs and writer
        for row in rows:
            if row is None or row.retry or row.draft_key != dkey or not row.draft:
                continue
            try:
                draft = model.model_validate(row.draft)
            except ValidationError:
                continue  # a draft from an older model layout: write it again
            if row is not rows[0] or page_id in self.adopted:
                self.report.drafts_reused.append(page_id)
            self.reused[page_id] = (draft, row.draft)
            return draft, row
        return None

    def put(self, page_id: str, key: str, markdown: str | None, row: PageState, *, dkey: str = "",
            draft: BaseModel | None = None, stable: str = "") -> None:
        """Write the page's Markdown (None: already written, by write_markdown in a render worker) and then
        its state row."""
        if markdown is not None:
            self.write_markdown(page_id, markdown)
        previous = self.state.get(page_id)
        row.key = key
        row.draft_key = dkey
        origin = self.reused.pop(page_id, None)
        if draft is not None and origin is not None and origin[0] is draft:
            row.draft = origin[1]
        else:
            row.draft = draft.model_dump(mode="json") if draft is not None else {}
        if draft is not None and row.written_by == "llm" and not row.retry:
            row.llm_draft, row.llm_key = row.draft, stable  # fresh model prose: what a later failure keeps
        elif previous is not None:
            row.llm_draft, row.llm_key = previous.llm_draft, previous.llm_key
        if row.retry:  # consecutive failures back the retries off: 0, 1, 3, 7 ... runs skipped
            failed_before = previous.failures if previous is not None and previous.retry else 0
            deferred = bool(getattr(draft, "deferred", False))  # not asked this run: not a model failure
            row.failures = failed_before + (0 if deferred else 1)
            row.retry_wait = 0 if deferred else retry_wait(row.failures)
        self.state[page_id] = row
        self.report.pages_written.append(page_id)
        if row.retry and page_id not in self.report.write_failures:  # a writer's own fallback counts too
            self.report.write_failures.append(page_id)
        self.dirty = True
        if time.monotonic() - self.saved_at > SAVE_EVERY_S:
            self.save()  # a killed process (no finally) loses at most a few seconds of written pages

    def write_markdown(self, page_id: str, markdown: str) -> None:
        """The page's file in docs/ (in whichever process rendered it; its row follows in put)."""
        atomic_write_text(self.docs / page_id, markdown)

    def prune(self, planned: set[str]) -> list[str]:
        gone = orphan_pages(planned, self.state, self.docs)
        for page_id in gone:
            (self.docs / page_id).unlink(missing_ok=True)
            self.state.pop(page_id, None)
            _remove_empty_dirs((self.docs / page_id).parent, self.docs)
        self.dirty = self.dirty or bool(gone)
        return gone

    def save(self) -> None:
        if self.dirty or not (self.config.out_dir / "state" / "pages.json").is_file():
            save_state(self.config.out_dir, self.state, self.encoded)
            self.dirty = False
        self.saved_at = time.monotonic()


def _remove_empty_dirs(directory: Path, stop: Path) -> None:
    while directory != stop and directory.is_dir() and not any(directory.iterdir()):
        directory.rmdir()
        directory = directory.parent
