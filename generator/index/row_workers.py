"""The processes that make a cold run's rows.

Cores: a cold run of a build (no index yet) makes the rows of chunks, files and pages in the build's
processes: workers forked before LanceDB is imported (it is not fork-safe; they never open, read or write a
table) make a group of files' or pages' rows each (tokens, index text, the static embedder's vectors) and
send them back in order to this process, the only one that writes. A remote or torch embedder embeds
here, from the rows the workers made (generator/index/embed.py `for_workers`); a run that updates an index
makes
its rows here, as before.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.analyze.facts import FileFacts
from generator.index.chunks import chunk_file
from generator.index.report import IndexReport
from generator.index.rows import (
    PageSource,
    chunk_row,
    embed_text_of,
    file_row,
    page_embed_text_of,
    page_row,
)
from generator.index.store import is_remote
from generator.index.table_writes import embed_rows, unique_rows

if TYPE_CHECKING:
    from generator.index.build_cache import CacheUpdate
    from generator.index.embed import Embedder
    from sourcebook.config import Config
    from sourcebook.workers import Workers

# fewer items than MIN_SPREAD_ITEMS per process are made in this process
MIN_SPREAD_ITEMS = 4
Item = tuple[bool, Any]  # (whether the worker embeds the rows, what it makes them from)
Made = tuple[list[dict[str, Any]], int]  # the rows of an item, and how many texts the worker embedded


@dataclass
class RowWorkers:
    """The processes that make an index run's rows: forked at the start of a cold run, before LanceDB is
    imported (its runtime is not fork-safe, and workers never touch a table). Each job is named at the fork
    and reads what existed then (the facts, texts and pages); an item carries the rest. `embeds`: the
    embedder may run in the workers (generator/index/embed.py `for_workers`)."""

    workers: Workers
    embeds: bool = False

    def map(self, job: str, items: Iterable[Any], expected: int) -> Iterator[Any]:
        return self.workers.map(job, items, expected=expected, min_items=MIN_SPREAD_ITEMS)

    def close(self) -> int:
        """End the workers; returns how many processes the run had (this one included)."""
        processes = self.workers.workers + 1
        self.workers.close()
        return processes

    def __enter__(self) -> RowWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.workers.close()


def open_row_workers(config: Config, processes: int, facts: dict[str, FileFacts], texts: dict[str, str], *,
                     embedder: Embedder | None, pages: PageSource | None = None,
                     build_cache: CacheUpdate | None = None) -> RowWorkers:
    """Workers for a cold run (no index at a local path yet) in a process that has not imported LanceDB; a
    run that updates an index, or that cannot fork safely, makes its rows in this process."""
    from generator.index.embed import for_workers
    from sourcebook.workers import Workers

    processes = _row_processes(config, processes)

    def embedded(rows: list[dict[str, Any]], embed: bool, text_of: Callable[[dict[str, Any]], str]) -> Made:
        if not embed or embedder is None:
            return rows, 0
        counts = IndexReport()
        rows = list(embed_rows(rows, text_of, {}, embedder, counts, hold=len(rows) + 1))
        return rows, counts.embedded

    def chunks(item: Item) -> Made:
        embed, group = item
        return embedded(list(unique_rows(([chunk_row(c) for c in chunk_file(fx, text)]
                                          for fx, text in _resolved(group, facts, texts)), "id")),
                        embed, embed_text_of)

    def files(item: Item) -> Made:
        return list(unique_rows(([file_row(fx, text)] for fx, text in _resolved(item[1], facts, texts)),
                                "path")), 0

    def page_rows(item: Item) -> Made:
        embed, ids = item
        assert pages is not None
        return embedded([page_row(r) for r in map(pages.record, ids) if r is not None], embed,
                        page_embed_text_of)

    jobs: dict[str, Callable[[Any], Any]] = {"chunks": chunks, "files": files, "pages": page_rows}
    if build_cache is not None:
        jobs["cache"] = build_cache.made_rows
    embeds = processes > 1 and embedder is not None and for_workers(embedder)  # before the fork
    return RowWorkers(Workers(jobs, processes), embeds=embeds)


def _row_processes(config: Config, processes: int) -> int:
    """`processes` for a cold run (no index at a local path yet) in a process that may fork, else 1."""
    uri = config.index_location
    cold = not is_remote(uri) and (not Path(uri).is_dir() or not any(Path(uri).iterdir()))
    return processes if processes > 1 and cold and forks_safely() else 1


def forks_safely() -> bool:
    """Whether this process may fork workers: neither LanceDB nor Lance is imported yet (their runtimes'
    threads do not survive a fork; both warn in a child, and a lock held at the fork could hang it)."""
    return "lancedb" not in sys.modules and "lance" not in sys.modules


def _resolved(group: list[tuple[str, FileFacts | None, str | None]], facts: dict[str, FileFacts],
              texts: dict[str, str]) -> Iterator[tuple[FileFacts, str]]:
    """A group of `ChangedSources.items` with its facts and text (a worker reads the dicts it inherited)."""
    for path, fx, text in group:
        yield (facts[path] if fx is None else fx), (texts[path] if text is None else text)


def spread(rows: RowWorkers, job: str, items: Iterable[Any], *, key: str,
           text_of: Callable[[dict[str, Any]], str], cache: dict[str, Any], embedder: Embedder | None,
           report: IndexReport, expected: int) -> Iterator[dict[str, Any]]:
    """The rows `job` makes from each item, one row per key, with their vectors (`embed_rows`: reused from
    `cache` or embedded), in item order; made in the workers when there are any and enough items.

    The workers embed what a cold table needs (no stored vectors to reuse) when the embedder may run in
    them; otherwise the rows are embedded here as one stream, exactly as before workers existed."""
    inside = rows.embeds and embedder is not None and not cache

    def merged() -> Iterator[dict[str, Any]]:
        seen: set[str] = set()  # keys of earlier items (one file's rows never come in two items)
        for made, embedded in rows.map(job, ((inside, item) for item in items), expected):
            report.embedded += embedded
            for row in made:
                if row[key] not in seen:
                    seen.add(row[key])
                    yield row

    return merged() if inside else embed_rows(merged(), text_of, cache, embedder, report)
