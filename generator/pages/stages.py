"""Pages: contexts -> drafts (through a PageWriter) -> Markdown in docs/, with the page state that makes it
incremental; this module holds what the page stages share (PageRun, the threaded map, the fallback on a
writer's failure, summaries, source text).

A page is written only when its key changed (plan.py); when only its rendering changed, it is re-rendered
from the draft kept in the state, without asking the writer. File pages come first (file_stage.py), then
modules bottom-up (module_stage.py: each sees its children's fresh summaries), then the overview
(overview_stage.py) and the topic pages (topic_stage.py). The state (page_sink.py) is saved every few seconds
and at the end, so an interrupted or killed build resumes where it stopped.
"""

from __future__ import annotations

import logging
import posixpath
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from generator.analyze.facts import FileFacts
from generator.analyze.plan import OVERVIEW_ID, PagePlan
from generator.pages.page_sink import PageSink
from generator.pages.writer import PageWriter
from sourcebook.config import Config
from sourcebook.errors import SourcebookError

if TYPE_CHECKING:
    from generator.analyze.analysis import Notify
    from generator.pages.anchors import SymbolIndex
    from generator.pages.page_sink import PageReport


log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")
README_NAMES = ("readme.md", "readme.markdown", "readme.rst", "readme.txt", "readme")


def safely(write: Callable[[Any], T], fallback: Callable[[Any], T], ctx: Any, page_id: str,
           report: PageReport) -> T:
    """The writer's draft, or the extractive one marked as a fallback when the writer fails for this page."""
    try:
        return write(ctx)
    except SourcebookError as exc:
        log.warning("%s: writer failed, using extracted prose (will retry next run): %s", page_id, exc)
        report.write_failures.append(page_id)
        draft = fallback(ctx)
        draft.fallback = True  # type: ignore[attr-defined]
        return draft


def map_pages(fn: Callable[[T], R], items: Sequence[T], concurrency: int,
              describe: Callable[[T], str] = repr) -> Iterator[R]:
    """fn over items, in order; threads when the writer allows (LLM calls wait on the network). When no
    item finishes for `stall_seconds()` the map fails naming the item it waits on (a hung call), and on any
    error or interrupt the queued items are dropped, not waited for."""
    if concurrency <= 1 or len(items) <= 1:
        yield from map(fn, items)
        return
    from sourcebook.workers import StallError, stall_seconds

    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="sourcebook-writer")
    finished: list[float] = []
    done = False
    try:
        futures = []
        for item in items:
            future = pool.submit(fn, item)
            future.add_done_callback(lambda _future: finished.append(time.monotonic()))
            futures.append(future)
        stall = stall_seconds()
        for item, future in zip(items, futures, strict=True):
            while True:
                try:
                    yield future.result(timeout=stall)
                    break
                except FutureTimeout:
                    if finished and time.monotonic() - finished[-1] < stall:
                        continue  # others finish: this one waits its turn
                    raise StallError(f"{describe(item)}: no page finished for {stall:.0f} s; stopped "
                                     "(SOURCEBOOK_STALL_SECONDS sets the limit)") from None
        done = True
    finally:
        # a hung call's thread cannot be stopped; the build does not wait for it (the CLI exits without
        # joining writer threads after an error)
        pool.shutdown(wait=done, cancel_futures=True)


@dataclass(frozen=True)
class PageRun:
    """Everything the page stages share in one build."""

    config: Config
    plan: PagePlan
    facts: Mapping[str, FileFacts]
    graph: Any  # generator.analyze.graph.RepoGraph
    writer: PageWriter
    pages: PageSink
    notify: Notify
    texts: Mapping[str, str]
    skipped: int
    symbols: SymbolIndex  # the analysis's, built once for every page kind
    processes: int = 1  # processes rendering file pages, this one included (the site's worker count)


    def planning(self) -> Planning:
        """What the page kinds plan this build's pages from (the same a `--check` plans from)."""
        from generator.pages.render_markdown import render_version

        return Planning(self.config, self.plan, self.facts, self.graph, self.writer, render_version(),
                        self.texts, self.skipped, self.symbols)


@dataclass(frozen=True)
class Planning:
    """The inputs every page kind plans its pages from: a build's (PageRun.planning) and `--check`'s
    (kinds.StaleCheck), so both compute each page's id, context and key by the same recipe, once."""

    config: Config
    plan: PagePlan
    facts: Mapping[str, FileFacts]
    graph: Any  # generator.analyze.graph.RepoGraph
    writer: PageWriter
    version: str  # the renderer's (render_markdown.render_version): part of every page's key
    texts: Mapping[str, str]  # the scan's copy of the files it read; others are read again
    skipped: int  # files the scan skipped (the overview counts them)
    symbols: SymbolIndex

    def text(self, path: str) -> str:
        return _source_text(self.config.root, self.texts, path)


def known_summaries(plan: PagePlan, pages: PageSink) -> dict[str, str]:
    """Known summaries by source path, and by `dir/` for modules (current state, including this run)."""
    out = {path: pages.summary(pid) for path, pid in plan.files.items()}
    out.update({d + "/": pages.summary(pid) for d, pid in plan.modules.items()})
    return out


def symbol_anchors(facts: Mapping[str, FileFacts]) -> dict[tuple[str, str], str]:
    from generator.pages.anchors import anchor_ids

    out = {}
    for path, f in facts.items():
        for qualname, anchor in anchor_ids(f.symbols).items():
            out[(path, qualname)] = anchor
    return out


def module_readme(config: Config, plan: PagePlan, directory: str) -> tuple[str, str]:
    """(path, text) of the README directly in `directory`, if it is one of the scanned files."""
    from generator.analyze.scan import decode

    for path in plan.children[directory][0]:
        if posixpath.basename(path).lower() in README_NAMES:
            try:
                return path, decode((config.root / path).read_bytes())  # by BOM, like every source
            except OSError:
                return path, ""
    return "", ""


def readme_resolver(plan: PagePlan, readme_path: str, page_id: str = "") -> Callable[[str], str | None]:
    """A README's (or doc's) links to repository files/dirs -> links from `page_id` (default: the overview) to
    their pages; anything else is dropped."""
    from urllib.parse import unquote, urlsplit

    from generator.pages.render_markdown import relative_link

    base = posixpath.dirname(readme_path)
    here = page_id or OVERVIEW_ID

    def resolve(url: str) -> str | None:
        parts = urlsplit(url)
        target = posixpath.normpath(posixpath.join(base, unquote(parts.path))).strip("/")
        if target in ("", "."):
            target = ""
        if target in plan.files:
            return relative_link(here, plan.files[target])
        if target in plan.modules:
            return relative_link(here, plan.modules[target])
        return None

    return resolve


def file_text(root: Path, path: str) -> str:
    """A file's text read from the checkout ('' when it can no longer be read)."""
    return _source_text(root, {}, path)


def _source_text(root: Path, texts: Mapping[str, str], path: str) -> str:
    """A file's text: the scan's copy when it kept one, else read again; '' when it can no longer be read."""
    from generator.analyze.scan import decode, read_source

    text = texts.get(path)
    if text is not None:
        return text
    try:
        return decode(read_source(root, path))
    except SourcebookError:
        return ""
