"""The shared build cache's table (its rows: build_cache.py): written in the run's publish, read by a build at
the version the meta row names.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from generator.index.reader import TableReader, open_table
from generator.index.report import IndexReport
from generator.index.row_workers import RowWorkers
from generator.index.rows import table_schema
from generator.index.store import CACHE_TABLE, open_index, outage_errors, storage_options, table_names
from generator.index.table_writes import add_rows, existing_rows
from sourcebook.errors import IndexStoreError
from sourcebook.sql import in_list

if TYPE_CHECKING:
    from generator.index.build_cache import CacheUpdate
    from sourcebook.config import Config

log = logging.getLogger(__name__)


def write_cache(db: Any, cache: CacheUpdate, report: IndexReport, *, fresh: bool,
                workers: RowWorkers | None = None) -> Any:
    """Bring the build-cache table to `cache`: rows whose hash changed or that are gone are replaced or
    deleted, unchanged rows are not touched. Returns the table (None when there is nothing to store). An
    empty table takes every row in one pass, made by a cold run's `workers`."""
    exists = CACHE_TABLE in table_names(db)
    if fresh and exists:
        db.drop_table(CACHE_TABLE)  # a rebuilt index reuses nothing, its cache neither
        exists = False
    if not exists and not (cache.pages or cache.extra):
        return None
    tbl = (db.open_table(CACHE_TABLE) if exists
           else db.create_table(CACHE_TABLE, schema=table_schema(CACHE_TABLE, 0)))
    stored: dict[str, list[str]] = {}
    for row in existing_rows(tbl, ["id", "sha"]):
        stored.setdefault(row["id"], []).append(row["sha"])
    if not stored and workers is not None and workers.workers.workers:
        def spread(groups: Iterable[list[int]], expected: int) -> Iterator[Any]:
            return workers.map("cache", groups, expected)

        added = add_rows(tbl, cache.fresh_rows(spread))
        if added:
            tbl.optimize()
        report.cache_written, report.cache_deleted = added, 0
        return tbl
    # two passes over the pages, so that no list of every row (each holds a page's Markdown) is built: the
    # first decides (id -> sha; the secret rules' verdicts kept), the second makes the rows to add again,
    # after the stale ones are deleted, and streams them (scanning nothing twice)
    verdicts: dict[str, str] = {}
    wanted = cache.wanted(stored, verdicts=verdicts)
    keep = cache.retained((i for i in stored if i not in wanted), wanted)
    drop = sorted(i for i, shas in stored.items()
                  if (i in wanted and shas != [wanted[i]]) or (i not in wanted and i not in keep))
    add = {i for i, sha in wanted.items() if stored.get(i) != [sha]}
    if drop:
        tbl.delete(in_list("id", drop))
    if add:
        add_rows(tbl, cache.rows(stored, verdicts=verdicts, only=add))
    if drop or add:
        tbl.optimize()  # compaction makes a version; older ones go once the meta row names this one
    report.cache_written, report.cache_deleted = len(add), len(drop)
    return tbl


def read_build_cache(config: Config) -> list[dict[str, Any]]:
    """The shared build cache's rows at the version the index's meta row names ([] when there is no usable
    index or no cache in it: a build then simply does the work)."""
    return BuildCacheReader(config).rows()


class BuildCacheReader:
    """The shared build cache at the version the meta row names, opened once, read whole or a few rows at a
    time: a build that rewrites three pages asks for three rows, not for every page's Markdown (the monorepo's
    cache holds a page per file)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._tbl: TableReader | None = None
        self._opened = False

    def _table(self) -> TableReader | None:
        if not self._opened:
            self._opened = True
            try:
                store = open_index(self.config, embedder=None)
            except IndexStoreError as exc:
                log.info("no shared build cache: %s", exc)
                return None
            version = store.meta.get("versions", {}).get(CACHE_TABLE)
            if version is None:
                return None
            try:
                self._tbl = open_table(store.uri, CACHE_TABLE, int(version), storage_options(store.uri))
            except outage_errors() as exc:
                self._unreadable(exc)
        return self._tbl

    def _unreadable(self, exc: BaseException) -> None:
        log.warning("the shared build cache at %s is unreadable (%s): pages are built without it",
                    self.config.index_location, exc)
        self._tbl = None

    def rows(self, ids: Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Every row, or only those of `ids` ([] when there is no usable cache)."""
        tbl = self._table()
        if tbl is None or (ids is not None and not ids):
            return []
        try:
            where = in_list("id", sorted(set(ids))) if ids is not None else None
            return list(tbl.scan(["id", "key", "value", "sha"], where).to_pylist())
        except outage_errors() as exc:
            self._unreadable(exc)
            return []
