"""Writing the index: `update_index` brings it in step with a scan and the pages, through one IndexWriter that
publishes the run (data tables first, the meta row last: see store.py).

Incremental: a file whose content hash is unchanged is skipped; a changed file's rows are deleted and written
again, and a file with a doubled key (left by runs that raced before the lock) is treated as changed, so any
re-run converges to a clean run's rows; rows of vanished files are pruned; unchanged chunk text is never
re-embedded (vectors are reused by content hash).
"""

from __future__ import annotations

import json
import logging
import secrets
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.analyze.checkout import head_commit
from generator.analyze.facts import FileFacts, PageRecord, SourceFile
from generator.analyze.manifests import Manifests
from generator.index.cache_table import write_cache
from generator.index.changed_files import ChangedSources
from generator.index.fingerprint import inputs_fingerprint, published_state, published_with
from generator.index.report import IndexReport
from generator.index.row_workers import RowWorkers, open_row_workers, spread
from generator.index.rows import (
    PageSource,
    RecordList,
    embed_text_of,
    page_embed_text_of,
    page_hash,
    page_row,
    symbol_rows,
    table_schema,
)
from generator.index.source_check import check_source, checkout_source
from generator.index.store import (
    CACHE_TABLE,
    DATA_TABLES,
    META_TABLE,
    SCHEMA_VERSION,
    connect,
    ensure_fts,
    is_local_missing,
    is_remote,
    made_here,
    not_ours,
    outage_errors,
    owner_mark,
    read_meta,
    table_names,
)
from generator.index.table_writes import (
    add_rows,
    cleanup_versions,
    duplicated_paths,
    embed_rows,
    existing_rows,
    optimize_table,
    replace_rows,
    stored_vectors,
    unique_rows,
)
from generator.index.vectors import ensure_vector_index
from sourcebook.errors import IndexStoreError
from sourcebook.sql import in_list

if TYPE_CHECKING:
    from generator.index.build_cache import CacheUpdate
    from generator.index.embed import Embedder
    from sourcebook.config import Config

log = logging.getLogger(__name__)

# A table's full-text index is rebuilt from scratch (exact BM25 statistics) when the run deleted rows of it
# (a changed or removed file: `_has_deleted_rows` says why folding those in is not exact), when it is small,
# or when the rows added since its last rebuild pass FTS_DRIFT of the table; otherwise (rows only added)
# optimize() folds the new rows into it, which keeps the statistics exact.
FTS_SMALL_ROWS = 200
FTS_DRIFT = 0.05
# A cold run's workers make a table's rows (`spread`, row_workers.py) from this many changed files (pages)
# an item.
FILES_PER_ITEM = 32
PAGES_PER_ITEM = 128


def _write_meta(db: Any, state: dict[str, Any], keep_s: float = 600.0) -> None:
    from sourcebook.local_key import local_key

    # round-tripped through JSON first, so the mark covers exactly what a reader will parse back
    state = json.loads(json.dumps({k: v for k, v in state.items() if k != "owner"}, sort_keys=True))
    state["owner"] = owner_mark(state, local_key())
    row = [{"key": "state", "value": json.dumps(state, sort_keys=True)}]
    if META_TABLE in table_names(db):
        tbl = db.open_table(META_TABLE)
        tbl.merge_insert("key").when_matched_update_all().when_not_matched_insert_all().execute(row)
        optimize_table(tbl, keep_s)
    else:
        db.create_table(META_TABLE, data=row, schema=table_schema("meta", 0))


def _fresh_tables(db: Any, dim: int) -> dict[str, Any]:
    names = table_names(db)
    for name in (META_TABLE, *DATA_TABLES, CACHE_TABLE):  # meta first: a half-dropped index is "incomplete"
        if name in names:
            db.drop_table(name)
    return {name: db.create_table(name, schema=table_schema(name, dim)) for name in DATA_TABLES}


def _open_for_write(db: Any, meta: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """Data tables rolled back to the versions the meta row names (undoing an interrupted run)."""
    tables = {}
    restored = False
    for name in DATA_TABLES:
        tbl = db.open_table(name)
        wanted = int(meta["versions"][name])
        if tbl.version != wanted:
            log.warning("index table %s is at version %s, last complete run wrote %s: rolling back",
                        name, tbl.version, wanted)
            tbl.checkout(wanted)
            tbl.restore()
            restored = True
        tables[name] = tbl
    if CACHE_TABLE in meta["versions"]:
        tbl = db.open_table(CACHE_TABLE)
        if tbl.version != int(meta["versions"][CACHE_TABLE]):
            tbl.checkout(int(meta["versions"][CACHE_TABLE]))
            tbl.restore()
    return tables, restored


def update_index(config: Config, files: list[SourceFile], facts: dict[str, FileFacts],  # noqa: PLR0917
                 pages: Sequence[PageRecord] | PageSource | None, embedder: Embedder | None,
                 prune: bool = True, *, texts: dict[str, str] | None = None,
                 manifests: Manifests | None = None, build_cache: CacheUpdate | None = None,
                 processes: int = 1, reset: bool = False, commit: str | None = None) -> IndexReport:
    """Bring the index in step with `files` (the current scan) and `pages`; return what was done.

    Files whose content hash matches the index (under the same parser version) are skipped. With `prune`,
    indexed files absent from `files` are removed. `pages` replaces the page table (empty/None keeps
    existing pages, minus pages of pruned files). `texts` optionally supplies decoded file contents (else
    they are read from config.root). `manifests` (the analysis's) are stored; None keeps the stored ones.
    `build_cache` (build_cache.py) is published in the same meta-row commit; None keeps the stored
    one. `processes`: how many processes make a cold run's rows (this one and forked workers; see
    row_workers.py). A storage failure is an IndexStoreError (one line); the next run resumes from the last
    complete state. A run that would prune or rebuild the index from a place that is not the checkout it
    was built from is refused before anything is written (IndexSourceError, see `check_source`) unless
    `reset`. `commit`: the commit the rows describe, as a client pushing files names it
    (answer/serving/pushes.py); None records the checkout's HEAD, or keeps the stored one
    when there is no checkout.
    """
    try:
        return _update_index(config, files, facts, pages, embedder, prune, texts=texts, manifests=manifests,
                             build_cache=build_cache, processes=processes, reset=reset, commit=commit)
    except (OSError, RuntimeError) as exc:  # LanceDB reports storage and commit failures as these
        log.debug("index write failed", exc_info=True)
        raise IndexStoreError(f"writing the index at {config.index_location} failed: {exc}; the index "
                              "keeps its last complete state (run the command again)") from exc


class IndexWriter:
    """The write side of one run: the data tables opened (or made afresh) for writing, changed only through
    these methods, and published by `commit` (data first, the meta row last: see store.py).
    Nothing outside the index package holds a LanceDB table."""

    def __init__(self, config: Config, embedder: Embedder | None, report: IndexReport, *,
                 rows: RowWorkers | None = None) -> None:
        self.config, self.embedder, self.report, self.rows = config, embedder, report, rows
        self.uri = config.index_location
        if "://" not in self.uri:
            Path(self.uri).mkdir(parents=True, exist_ok=True)
        self._db = connect(self.uri)
        self._dim = embedder.dim if embedder else 0
        self._embedder_id = embedder.id if embedder else ""
        self._written = dict.fromkeys(DATA_TABLES, False)
        self._changed_rows = dict.fromkeys(DATA_TABLES, 0)
        self.meta, self.rebuilt, self.restored = self._open()

    def _open(self) -> tuple[dict[str, Any], str, bool]:
        """The previous meta row (or a fresh one), why the index is rebuilt ('' when it is not), whether
        its tables were rolled back to the last complete run; opens or makes `self._tables`."""
        db, uri, dim, embedder_id = self._db, self.uri, self._dim, self._embedder_id
        meta = read_meta(db)
        reason = ""
        if meta is None:
            reason = "new index" if not (table_names(db) & set(DATA_TABLES)) else "incomplete index"
        elif not self.config.index_chosen and not made_here(meta):
            # checked first: nothing in a foreign index is reused, neither rows nor vectors nor versions
            reason = "not made by this user"
            log.warning("%s: rebuilding it from scratch", not_ours(uri, meta))
            meta = None
        elif meta.get("schema_version") != SCHEMA_VERSION:
            reason = f"schema version {meta.get('schema_version')} -> {SCHEMA_VERSION}"
        elif meta.get("embedder_id", "") != embedder_id or int(meta.get("dim") or 0) != dim:
            reason = (f"embedder {meta.get('embedder_id') or 'none'}/{meta.get('dim') or 0} -> "
                      f"{embedder_id or 'none'}/{dim}")
        if not reason:
            assert meta is not None
            try:
                self._tables, restored = _open_for_write(db, meta)
                return meta, "", restored
            except (OSError, ValueError, RuntimeError, KeyError) as exc:
                log.warning("rebuilding the damaged index at %s: %s", uri, exc)
                reason = f"damaged index ({exc})"
        elif meta is not None:
            log.warning("rebuilding the index at %s: %s", uri, reason)
        self.report.rebuilt = reason
        self._tables = _fresh_tables(db, dim)
        return {"versions": {}, "index_id": secrets.token_hex(16)}, reason, False

    def indexed(self) -> dict[str, str]:
        """path -> content hash of every indexed file ('' for all under another parser version: their facts,
        symbols and chunks are redone)."""
        from generator.analyze.factcache import parser_version

        indexed = {r["path"]: r["sha"] for r in existing_rows(self._tables["files"], ["path", "sha"])}
        return indexed if self.meta.get("parser") == parser_version() else dict.fromkeys(indexed, "")

    def doubled(self) -> set[str]:
        """Paths with doubled rows in any table (left by runs that raced before the lock)."""
        out: set[str] = set()
        for name in ("chunks", "symbols", "files"):
            out |= duplicated_paths(self._tables[name], name)
        return out

    def stored_chunk_vectors(self, paths: Iterable[str]) -> dict[str, Any]:
        """hash -> vector of the chunks stored for `paths`: read before `replace` deletes those rows, so an
        unchanged chunk text is never embedded again."""
        if self.embedder is None:
            return {}
        return stored_vectors(self._tables["chunks"], in_list("path", sorted(set(paths))))

    def replace(self, name: str, rows: Iterable[dict[str, Any]], paths: list[str]) -> int:
        """The rows of `paths` in table `name` become `rows` (consumed as they are written); returns how
        many were written."""
        written = replace_rows(self._tables[name], name, rows, paths)
        self._written[name] = self._written[name] or bool(paths)
        self._changed_rows[name] += written
        return written

    def pages(self, pages: PageSource | None, deleted: list[str]) -> None:
        """The pages table brought to `pages` (None/empty: kept, minus the pages of `deleted` files)."""
        tbl = self._tables["pages"]
        self._written["pages"] = _write_pages(tbl, pages, deleted, self.embedder, self.report, self.rows)
        self._changed_rows["pages"] = self.report.pages_written

    def commit(self, *, files: int, deleted: int, manifests: Manifests | None,
               build_cache: CacheUpdate | None, inputs: str = "",
               origin: dict[str, str] | None = None, commit: str | None = None) -> None:
        """Publish the run: store the build cache, refresh the full-text indexes of the tables written and
        compact them, then write the meta row naming every table's new version; older versions go after."""
        from generator.analyze.factcache import parser_version

        tables, meta, config = self._tables, self.meta, self.config
        fresh = bool(self.rebuilt or self.restored)
        dirty = [name for name in DATA_TABLES if self._written[name] or fresh]
        drift = {} if self.rebuilt else {k: int(v) for k, v in (meta.get("fts_drift") or {}).items()}
        rebuild: dict[str, bool] = {}
        for name in dirty:
            rows = tables[name].count_rows()
            # rows replaced count twice (their old rows left the index); deleted files' rows count once
            drift[name] = drift.get(name, 0) + 2 * self._changed_rows[name] + deleted
            rebuild[name] = (fresh or rows < FTS_SMALL_ROWS or drift[name] > FTS_DRIFT * rows
                             or _has_deleted_rows(tables[name]))
            if rebuild[name]:
                drift[name] = 0

        def refresh(name: str) -> None:
            ensure_fts(tables[name], rebuild=rebuild[name])
            ensure_vector_index(tables[name], name, config.ann_min_rows, rebuild=fresh)  # vectors.py
            tables[name].optimize()  # compaction and index folding make a version; cleanup waits for meta

        cache_tbl = None
        if build_cache is not None:  # the workers' last job (nothing reads the cache before the meta row)
            cache_tbl = write_cache(self._db, build_cache, self.report, fresh=bool(self.rebuilt),
                                    workers=self.rows)
        # a cold run's workers are done: its tables' full-text indexes are built side by side, a thread a
        # process it had (each build is mostly one of Lance's threads); otherwise one after the other
        threads = min(len(dirty), self.rows.close() if self.rows is not None else 1)
        if threads > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(threads, thread_name_prefix="sourcebook-fts") as pool:
                list(pool.map(refresh, dirty))
        else:
            for name in dirty:
                refresh(name)
        versions = {name: int(tbl.version) for name, tbl in tables.items()}
        if build_cache is not None:
            if cache_tbl is not None:
                versions[CACHE_TABLE] = int(cache_tbl.version)
        elif not self.rebuilt and CACHE_TABLE in meta["versions"]:
            versions[CACHE_TABLE] = int(meta["versions"][CACHE_TABLE])  # untouched: still this index's cache
        stored = Manifests.from_json(meta.get("manifests")).to_json()
        state: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION, "embedder_id": self._embedder_id, "dim": self._dim,
            "versions": versions, "updated_at": time.time(), "files": files, "parser": parser_version(),
            "manifests": stored if manifests is None else manifests.to_json(),
            # drawn when the index is created, kept by every later run: the owner mark covers it
            "index_id": meta.get("index_id") or secrets.token_hex(16),
            # what the rows describe: an answer from a reader with no checkout names it
            # (answer/answering/get_answer.py)
            "commit": _recorded_commit(config, commit, meta),
            "fts_drift": drift,  # rows changed per table since its full-text index was last rebuilt
            "inputs": inputs,  # what this run was given (inputs_fingerprint): the next run may skip
            # the checkout the rows came from: a later run elsewhere may not prune them (check_source)
            "source": origin or meta.get("source") or {},
        }
        published = ("parser", "manifests", "index_id", "commit", "inputs")
        if not (dirty or versions != meta.get("versions") or any(state[k] != meta.get(k) for k in published)):
            return
        state["sums"] = _file_sums(self.uri, versions, meta.get("sums"))  # what the next run verifies
        _write_meta(self._db, state, config.index_keep_s)  # the publish: one commit of the meta table
        # only now may older versions go: the meta row names the newest, and optimizing an optimized table
        # makes no new version (checked below all the same)
        for name in dirty:
            cleanup_versions(tables[name], config.index_keep_s)
        if cache_tbl is not None and (self.report.cache_written or self.report.cache_deleted):
            cleanup_versions(cache_tbl, config.index_keep_s)
            tables_now = {**tables, CACHE_TABLE: cache_tbl}
        else:
            tables_now = dict(tables)
        if any(tables_now[name].version != versions[name] for name in tables_now):
            versions = {**versions, **{n: int(t.version) for n, t in tables_now.items()}}
            _write_meta(self._db, {**state, "versions": versions,
                                   "sums": _file_sums(self.uri, versions, state["sums"])},
                        config.index_keep_s)


def _recorded_commit(config: Config, commit: str | None, meta: dict[str, Any]) -> str:
    """The commit a publish records: the one given, else the checkout's HEAD, else the stored one."""
    if commit is not None:
        return commit
    return head_commit(config.root) if config.checkout else str(meta.get("commit") or "")


def _update_index(config: Config, files: list[SourceFile], facts: dict[str, FileFacts],  # noqa: PLR0917
                  pages: Sequence[PageRecord] | PageSource | None, embedder: Embedder | None,
                  prune: bool, *, texts: dict[str, str] | None, manifests: Manifests | None,
                  build_cache: CacheUpdate | None = None, processes: int = 1,
                  reset: bool = False, commit: str | None = None) -> IndexReport:
    started = time.perf_counter()
    report = IndexReport(files_total=len(files), embedder=embedder.id if embedder else "none")
    source = RecordList(pages) if isinstance(pages, Sequence) else pages
    published = published_state(config)  # read with Lance, before the workers fork
    damage = recover_index(config)
    if damage:
        published = None
    origin = checkout_source(config)
    if not reset:
        check_source(config, published, origin, files, prune=prune, embedder=embedder)
    fingerprint = inputs_fingerprint(config, files, facts, source, embedder, prune, manifests=manifests,
                                     build_cache=build_cache, commit=commit)
    if fingerprint is not None and published_with(config, fingerprint, embedder, published):
        report.unchanged, report.files_unchanged = True, len(files)
        report.seconds = time.perf_counter() - started
        log.info("index: unchanged since its last publish (%d files)", len(files))
        return report
    # a cold run's workers fork here, before the writer imports LanceDB
    try:
        with open_row_workers(config, processes, facts, texts or {}, embedder=embedder, pages=source,
                              build_cache=build_cache) as rows:
            report = _write_run(config, files, facts, source, embedder, prune, texts=texts or {},
                                manifests=manifests, build_cache=build_cache, inputs=fingerprint or "",
                                rows=rows, report=report, started=started, origin=origin,
                                commit=commit)
    except outage_errors():
        # a read failed mid-run: damage no checksum covered (set aside, then one fresh run), or an outage
        damage = recover_index(config, deep=True)
        if not damage:
            raise
        report = IndexReport(files_total=len(files), embedder=report.embedder)
        with open_row_workers(config, 1, facts, texts or {}, embedder=embedder, pages=source,
                              build_cache=build_cache) as rows:
            report = _write_run(config, files, facts, source, embedder, prune, texts=texts or {},
                                manifests=manifests, build_cache=build_cache, inputs=fingerprint or "",
                                rows=rows, report=report, started=started, origin=origin,
                                commit=commit)
    if damage:
        report.rebuilt = f"damaged index ({damage})"
    return report


def recover_index(config: Config, *, deep: bool = False) -> str | None:
    """Set a damaged index at a local path aside before a run writes it (generator/index/recovery.py): the
    reason, or None. `deep`: read every table in full too (after a read failed mid-run). Call it holding
    the output lock."""
    from generator.index.recovery import recover

    uri = config.index_location
    if is_remote(uri) or is_local_missing(uri):
        return None
    return recover(uri, published_state(config), deep=deep)


def _file_sums(uri: str, versions: dict[str, int], previous: dict[str, Any] | None) -> dict[str, Any]:
    from generator.index.recovery import file_sums

    return file_sums(uri, versions, previous)


def _has_deleted_rows(tbl: Any) -> bool:
    """Whether a fragment of `tbl` still holds rows deleted since it was written. Such rows stay in the
    full-text index's BM25 statistics (document count, lengths, term frequencies) when new rows are folded
    in: an edit then a revert left scores unlike a clean build's. And the fold cannot be followed by the
    compaction that would drop them: Lance merges only fragments its index covers alike, and the new rows'
    fragment is not covered until the fold. A rebuild covers every fragment, so the optimize() after it
    compacts the deleted rows away, and the next run that only adds rows folds them into exact statistics."""
    return any(f.metadata.deletion_file is not None for f in tbl.to_lance().get_fragments())


def _write_run(config: Config, files: list[SourceFile], facts: dict[str, FileFacts],  # noqa: PLR0917
               source: PageSource | None, embedder: Embedder | None, prune: bool, *, texts: dict[str, str],
               manifests: Manifests | None, build_cache: CacheUpdate | None, inputs: str, rows: RowWorkers,
               report: IndexReport, started: float, origin: dict[str, str] | None = None,
               commit: str | None = None) -> IndexReport:
    """The writing part of `_update_index`: every table brought in step, then published."""
    writer = IndexWriter(config, embedder, report, rows=rows)

    indexed = writer.indexed()
    current = {f.path: f for f in files}
    doubled = writer.doubled()
    if doubled:
        log.warning("index at %s: %d files have duplicated rows (from an earlier interrupted or concurrent "
                    "run): re-indexing them", writer.uri, len(doubled))
    changed = [f for f in files if indexed.get(f.path) != f.sha or f.path in doubled]
    deleted = sorted(set(indexed) - set(current)) if prune else []
    report.files_indexed, report.files_deleted = len(changed), len(deleted)
    report.files_unchanged = len(files) - len(changed)

    sources = ChangedSources(config, changed, facts, texts, report)
    touched = [f.path for f in changed] + deleted
    items = -(-len(changed) // FILES_PER_ITEM)  # groups of changed files a cold run's workers make rows of

    # data first, files (the "done" marker per file) last, then the meta row: see store.py's docstring.
    # Each table is one pass over the changed files, its rows made, embedded and written batch by batch.
    vectors = writer.stored_chunk_vectors(f.path for f in changed)
    report.chunks_written = writer.replace("chunks", spread(
        rows, "chunks", sources.items(FILES_PER_ITEM), key="id", text_of=embed_text_of, cache=vectors,
        embedder=embedder, report=report, expected=items), touched)
    del vectors
    report.symbols_written = writer.replace(
        "symbols", unique_rows((symbol_rows(fx) for fx in sources.facts_only()), "id"), touched)
    writer.pages(source, deleted)
    writer.replace("files", spread(rows, "files", sources.items(FILES_PER_ITEM), key="path",
                                   text_of=embed_text_of, cache={}, embedder=None, report=report,
                                   expected=items), touched)
    writer.commit(files=len(files), deleted=len(deleted), manifests=manifests, build_cache=build_cache,
                  inputs=inputs, origin=origin, commit=commit)
    if source is not None:
        source.save()
    report.seconds = time.perf_counter() - started
    log.info("index: %d files (%d changed, %d deleted), %d chunks, %d embedded in %.2fs", len(files),
             len(changed), len(deleted), report.chunks_written, report.embedded, report.seconds)
    return report


def _write_pages(tbl: Any, pages: PageSource | None, deleted: list[str],  # noqa: PLR0917
                 embedder: Embedder | None, report: IndexReport, workers: RowWorkers | None = None) -> bool:
    """Bring the pages table to `pages`: only the rows whose page changed (or is new or gone) are tokenised,
    embedded, deleted and added; the table is rewritten whole only when it holds an id twice (a racing run
    once doubled rows). A page whose row hash the memo knows (generator/pages/index_inputs.py: same state,
    same Markdown) is not even made into a record: making every page's record (index_text) and tokenising it
    again was most of the index step after a one-file edit (bench/build_bench.py). A cold run's `workers` make
    an empty table's rows: every page's record, row and vector, the memo taught each row's hash here."""
    if pages is not None and pages.ids:
        stored = existing_rows(tbl, ["id", "hash"])
        if not stored and workers is not None and workers.workers.workers:
            made_rows = spread(workers, "pages", (pages.ids[n:n + PAGES_PER_ITEM]
                                           for n in range(0, len(pages.ids), PAGES_PER_ITEM)),
                           key="id", text_of=page_embed_text_of, cache={}, embedder=embedder, report=report,
                           expected=-(-len(pages.ids) // PAGES_PER_ITEM))
            report.pages_written = add_rows(tbl, _learned(pages, made_rows))
            return bool(report.pages_written)
        existing = {r["id"]: r["hash"] for r in stored}
        whole = len(stored) != len(existing)
        hashes: dict[str, str] = {}
        made: dict[str, PageRecord] = {}  # records of the changed pages, made while deciding
        for pid in pages.ids:
            known = pages.known_hash(pid)
            if known is None:
                record = pages.record(pid)
                if record is None:
                    continue
                known = page_hash(record)
                pages.learn(pid, hash=known)
                if whole or existing.get(pid) != known:
                    made[pid] = record
            hashes[pid] = known
        changed = [pid for pid, h in hashes.items() if whole or existing.get(pid) != h]
        gone = [pid for pid in existing if pid not in hashes]
        if not changed and not gone:
            return False  # checked before any tokenising or embedding: a no-change build stays fast
        # a changed page's stored vector is of its old hash: only a whole rewrite has vectors to reuse
        cache = stored_vectors(tbl) if whole and embedder is not None else {}
        if whole:
            tbl.delete("true")
        else:
            stale = sorted((set(changed) & set(existing)) | set(gone))
            if stale:
                tbl.delete(in_list("id", stale))
        records = (made.pop(pid, None) or pages.record(pid) for pid in changed)
        rows = (page_row(r) for r in records if r is not None)  # made, embedded and written batch by batch
        report.pages_written = add_rows(tbl, embed_rows(rows, page_embed_text_of, cache, embedder, report))
        return True
    if deleted and tbl.count_rows(in_list("target_path", deleted)):
        tbl.delete(in_list("target_path", deleted))
        return True
    return False


def _learned(pages: PageSource, rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """`rows` (pages rows), each row's hash taught to the memo as it passes."""
    for row in rows:
        pages.learn(row["id"], hash=row["hash"])
        yield row
