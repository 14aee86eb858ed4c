"""Writes to one LanceDB table, streamed: rows embedded (vectors reused by content hash), turned into Arrow
batches and added in one commit; a path's rows replaced; doubled keys found; old versions
cleaned up (the full-text index: store.py, the one module importing lancedb).

Memory: every table write is one commit of rows streamed to Lance in Arrow batches (`add_rows`), each made,
embedded and converted as Lance asks for it; a run holds a batch, never the rows of every file or page (on a
12k-file monorepo holding them cost more than the rest of the build: docs/performance.md).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Iterator
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from generator.index.report import IndexReport
from generator.index.rows import KEY_COLUMN, PATH_COLUMN
from sourcebook.sql import in_list

if TYPE_CHECKING:
    import pyarrow as pa

    from generator.index.embed import Embedder

EMBED_BATCH = 256
# Rows reach LanceDB in Arrow batches of this many rows (or this much text), streamed: a run never holds
# every file's rows. Holding them (and their Arrow copy) was most of a monorepo build's peak memory.
WRITE_BATCH_ROWS = 512
WRITE_BATCH_CHARS = 8_000_000


def existing_rows(tbl: Any, columns: list[str], where: str | None = None,
                  limit: int | None = None) -> list[dict[str, Any]]:
    if not tbl.count_rows():
        return []
    query = tbl.search().select(columns)
    if where:
        query = query.where(where)
    return list(query.limit(limit).to_arrow().to_pylist())


def stored_vectors(tbl: Any, where: str | None = None) -> dict[str, Any]:
    """hash -> stored vector (a float32 row of one array), for the rows `where` selects. Not to_pylist: a
    256-dim vector as a list of Python floats is ~8 KB, as a float32 row 1 KB (a big tree's chunks and
    pages held hundreds of MB of float objects in the index step)."""
    if not tbl.count_rows():
        return {}
    query = tbl.search().select(["hash", "vector"])
    if where:
        query = query.where(where)
    data = query.limit(None).to_arrow()
    if not data.num_rows:
        return {}
    column = data.column("vector").combine_chunks()
    matrix = column.flatten().to_numpy(zero_copy_only=False).reshape(len(column), -1)
    return dict(zip(data.column("hash").to_pylist(), matrix, strict=True))


def embed_rows(rows: Iterable[dict[str, Any]], text_of: Callable[[dict[str, Any]], str],
               cache: dict[str, Any], embedder: Embedder | None, report: IndexReport, *,
               hold: int = WRITE_BATCH_ROWS) -> Iterator[dict[str, Any]]:
    """`rows` with row["vector"] set (float32 rows, which pyarrow stores as it stores lists of floats), in
    order, embedding only texts whose hash is not in `cache` (the vectors stored for these rows' old text).

    Streamed: rows are held only until EMBED_BATCH of them need the embedder (the same calls, in the same
    order, as embedding the whole list at once), or `hold` rows all reuse a cached vector."""
    if embedder is None:
        yield from rows
        return
    import numpy as np

    held: list[dict[str, Any]] = []
    todo: list[int] = []  # positions in `held` to embed

    def flush() -> Iterator[dict[str, Any]]:
        if todo:
            vectors = embedder.embed([text_of(held[i]) for i in todo])
            for i, vec in zip(todo, vectors, strict=True):
                held[i]["vector"] = np.asarray(vec, dtype=np.float32)
            report.embedded += len(todo)
        report.embed_reused += len(held) - len(todo)
        for row in held:
            if "vector" not in row:
                row["vector"] = cache[row["hash"]]
        yield from held
        held.clear()
        todo.clear()

    for row in rows:
        if row["hash"] not in cache:
            todo.append(len(held))
        held.append(row)
        if len(todo) == EMBED_BATCH or (not todo and len(held) >= hold) or len(held) >= 4 * hold:
            yield from flush()
    yield from flush()


def _record_batches(rows: Iterable[dict[str, Any]], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """`rows` as Arrow record batches of at most WRITE_BATCH_ROWS rows or about WRITE_BATCH_CHARS of text:
    what a table write holds at once instead of every row of the run."""
    import pyarrow as pa

    held: list[dict[str, Any]] = []
    chars = 0
    for row in rows:
        held.append(row)
        chars += sum(len(v) for v in row.values() if isinstance(v, str))
        if len(held) >= WRITE_BATCH_ROWS or chars >= WRITE_BATCH_CHARS:
            yield pa.RecordBatch.from_pylist(held, schema=schema)
            held, chars = [], 0
    if held:
        yield pa.RecordBatch.from_pylist(held, schema=schema)


def add_rows(tbl: Any, rows: Iterable[dict[str, Any]]) -> int:
    """Append `rows` to `tbl` in one commit, streamed to Lance batch by batch (a RecordBatchReader over a
    generator: Lance pulls the next batch while it writes), so no list of every row is ever built. Returns
    the rows written; writes nothing (not even an empty version) when there are none.

    Lance calls the generator from its own thread and reports what it raised as a RuntimeError carrying the
    text; the original exception (an embedder's ProviderError, a KeyboardInterrupt) is raised instead."""
    import itertools

    import pyarrow as pa

    batches = _record_batches(rows, tbl.schema)
    first = next(batches, None)
    if first is None:
        return 0
    written = 0
    failed: list[BaseException] = []

    def guarded() -> Iterator[pa.RecordBatch]:
        nonlocal written
        try:
            for batch in itertools.chain([first], batches):
                written += batch.num_rows
                yield batch
        except BaseException as exc:  # re-raised below, in the caller's thread
            failed.append(exc)
            raise

    try:
        tbl.add(pa.RecordBatchReader.from_batches(tbl.schema, guarded()))
    except BaseException:
        if failed:
            raise failed[0] from None
        raise
    return written


def unique_rows(groups: Iterable[list[dict[str, Any]]], key: str) -> Iterator[dict[str, Any]]:
    """The rows of `groups` (one group per file) with one row per key, even from a faulty caller: inside a
    group a repeated key keeps its first place and its last row; a key seen in an earlier group is dropped
    (keys carry their file's path, so this never happens with rows.py's rows)."""
    seen: set[str] = set()
    for group in groups:
        unique = {row[key]: row for row in group}
        for k, row in unique.items():
            if k not in seen:
                seen.add(k)
                yield row


def replace_rows(tbl: Any, name: str, rows: Iterable[dict[str, Any]], paths: Iterable[str]) -> int:
    """Make the rows of `paths` exactly `rows` (streamed, see `add_rows`): delete every row of those
    paths, then add `rows`. Returns the rows added.

    Idempotent by construction: whatever the table held for a path (nothing, the previous content, or the
    doubled rows two racing runs once committed), it holds this run's rows once afterwards.
    """
    paths = sorted(set(paths))
    if not paths:
        return 0
    if tbl.count_rows():
        tbl.delete(in_list(PATH_COLUMN[name], paths))
    return add_rows(tbl, rows)


def duplicated_paths(tbl: Any, name: str) -> set[str]:
    """Paths owning a key that appears more than once in `tbl` (what concurrent runs once left behind)."""
    import pyarrow.compute as pc

    if not tbl.count_rows():
        return set()
    key, path_col = KEY_COLUMN[name], PATH_COLUMN[name]
    data = tbl.search().select(list({key, path_col})).limit(None).to_arrow()
    keys = data.column(key)
    if pc.count_distinct(keys).as_py() == len(keys):  # the usual case: one vectorised pass, nothing found
        return set()
    counts = pc.value_counts(keys)
    doubled = {v.as_py() for v, n in zip(counts.field("values"), counts.field("counts"), strict=True)
               if n.as_py() > 1}
    return {p for k, p in zip(keys.to_pylist(), data.column(path_col).to_pylist(), strict=True)
            if k in doubled}


def cleanup_versions(tbl: Any, keep_s: float) -> None:
    """Delete the versions of `tbl` older than `keep_s` seconds, and nothing else: what a table optimized
    earlier in the run still needs once the meta row names its newest version. optimize() again did the
    same but first re-planned compaction and re-merged the full-text index, for nothing."""
    with warnings.catch_warnings():
        # deprecated in favour of optimize(), which is exactly the work this avoids; UserWarning: see below
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        tbl.cleanup_old_versions(timedelta(seconds=keep_s))


def optimize_table(tbl: Any, keep_s: float) -> None:
    """Compact, fold new rows into the indexes, and delete versions older than `keep_s` seconds."""
    with warnings.catch_warnings():
        # readers pin the meta row's versions; a superseded version stays readable for keep_s, so a reader
        # still answering from the previous publish finishes its queries (see store.py's docstring)
        warnings.simplefilter("ignore", UserWarning)
        tbl.optimize(cleanup_older_than=timedelta(seconds=keep_s))
