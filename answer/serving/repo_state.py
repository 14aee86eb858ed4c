"""One repository's open index and what the tools derive from it, kept warm across requests.

The store is opened once and re-opened when another process (or the `index` tool) has written a newer
index; the file list, file texts, symbols and the analysis (facts, manifests, reference graph: persisted
with the index, never re-parsed) are cached for that index state. Every
read of a damaged or vanished table becomes an IndexStoreError (HTTP 503), never a traceback.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from generator.index.memos import Memo
from sourcebook.errors import IndexMissingError, IndexStoreError, SourcebookError

if TYPE_CHECKING:
    from answer.answering.get_answer import AnswerContext
    from generator.analyze.analysis import Analysis
    from generator.analyze.graph import RepoGraph
    from generator.index.store import IndexStore
    from sourcebook.config import Config

# the surfaces' per-store memos (generator/index/memos.py)
_FILES: Memo[list[dict[str, Any]]] = Memo("surfaces.files")
_PATHS: Memo[dict[str, dict[str, Any]]] = Memo("surfaces.paths")
_TEXTS: Memo[dict[str, str]] = Memo("surfaces.texts")

log = logging.getLogger(__name__)

SEARCH_CACHE_SIZE = 512
WARM_RETRY_S = 30.0  # a failed background warm-up (the store down) is tried again this much later


# The stores a request has used, per RepoState: every read of one request comes from one published state,
# even when a newer one is picked up while it runs (answer/serving/tools.py wraps each tool call in
# one_state()).
_REQUEST_PINS: contextvars.ContextVar[dict[int, IndexStore] | None] = contextvars.ContextVar(
    "sourcebook_request_pins", default=None)


@contextmanager
def one_state() -> Iterator[None]:
    """Within the block, each repository answers from the first index state it opened (nesting reuses it)."""
    if _REQUEST_PINS.get() is not None:
        yield
        return
    token = _REQUEST_PINS.set({})
    try:
        yield
    finally:
        _REQUEST_PINS.reset(token)


class _LRU:
    """A small thread-safe least-recently-used map."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._data: OrderedDict[Any, dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any) -> dict[str, Any] | None:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: Any, value: dict[str, Any]) -> None:
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self.size:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


def _outage_errors() -> tuple[type[BaseException], ...]:
    from generator.index.store import outage_errors

    return outage_errors()


def _warm_errors() -> tuple[type[BaseException], ...]:
    return (SourcebookError, *_outage_errors())


class RepoState:
    """One repository's open index and derived caches. Thread-safe: the HTTP server shares it."""

    def __init__(self, alias: str, config: Config) -> None:
        self.alias = alias
        self.config = config
        self._lock = threading.RLock()
        self._store: IndexStore | None = None
        self._store_state: Any = None
        self._checked_at = 0.0
        self._served = False  # an index was opened once: its disappearance is an outage, not "not indexed"
        self._analysis: Analysis | None = None
        self._analysis_store: IndexStore | None = None  # the store `_analysis` was loaded from
        self.index_lock = threading.Lock()
        self._graph_lock = threading.Lock()
        self._answer_ctx: AnswerContext | None = None
        self.search_cache = _LRU(SEARCH_CACHE_SIZE)
        # set by a server's warm-up: full-text ranking in memory (answer/retrieval/tiers.py)
        self.long_lived = False
        self._warming: threading.Thread | None = None  # the background warm-up of the next version
        self._retry_at = 0.0  # after a failed warm-up: not tried again before this (monotonic)
        self._warm_started = 0.0
        self._swapped: threading.Event | None = None  # set when the running warm-up ends (swapped or not)

    # ------------------------------------------------------------ the index

    def _current_state(self) -> Any:
        from generator.index.store import read_index_state

        meta = read_index_state(self.config.index_location)
        return None if meta is None else (meta.get("updated_at"), str(meta.get("versions")))

    def store(self) -> IndexStore:
        """The open index; raises IndexStoreError when there is none (or it is unusable)."""
        pins = _REQUEST_PINS.get()
        if pins is not None and id(self) in pins:
            return pins[id(self)]
        store = self._current_store()
        swapped = self._swapped
        if swapped is not None:
            # within the swap wait: a warm-up of a small index ends well inside it (the reader sees the
            # push it follows); a big one's does not, and the previous version answers at once after it
            wait = self._warm_started + self.config.index_swap_wait_s - time.monotonic()
            if wait > 0 and swapped.wait(wait):
                store = self._current_store()
        if pins is not None:
            pins[id(self)] = store
        return store

    def _current_store(self) -> IndexStore:
        from generator.index.store import open_index

        with self._lock:
            now = time.monotonic()
            # config.index_refresh_s: how soon a newly published index (another process, another machine)
            # is picked up; between checks every request is answered from the one open state
            if self._store is not None and now - self._checked_at < self.config.index_refresh_s:
                return self._store
            self._checked_at = now
            if self._store is not None:
                try:
                    state = self._current_state()
                except _outage_errors() as exc:
                    log.warning("%s: cannot check the index state: %s", self.alias, exc)
                    return self._store
                if state == self._store_state:
                    return self._store
                if self.long_lived:
                    # a server: the warm previous version answers while the new one is built in the
                    # background (its memos cost a minute at 100k files); the first open builds on demand
                    self._warm_next(now)
                    return self._store
            store = open_index(self.config)
            if self.long_lived:
                from answer.retrieval.tiers import use_in_memory_ranking

                use_in_memory_ranking(store)  # a server ranks many queries: worth building in memory
            self._install(store)
            return store

    def _install(self, store: IndexStore) -> None:
        """Serve `store` from now on (called holding self._lock); the previous version is dropped."""
        self.search_cache.clear()
        self._store = store
        self._served = True
        # nothing else keeps the previous version (and its memos) alive past the swap
        if self._analysis_store is not None and self._analysis_store is not store:
            self._analysis, self._analysis_store = None, None
        if self._answer_ctx is not None:
            self._answer_ctx.store = store
        self._store_state = (store.meta.get("updated_at"), str(store.meta.get("versions")))

    def newest_store(self) -> IndexStore:
        """The newest published version, for a writer (a push diffs against it): never the previous one a
        server still answers from while the next warms. Not installed for readers: the warm-up does that."""
        from generator.index.store import open_index

        with self._lock:
            try:
                if self._store is not None and self._current_state() == self._store_state:
                    return self._store
            except _outage_errors():
                pass  # opening it reports the outage as readers see it
        return open_index(self.config)

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Within the block this state reads the newest published version (opened once): what a push or a
        re-index diffs against, even while readers are still answered from the previous one."""
        token = _REQUEST_PINS.set({})
        try:
            try:
                newest = self.newest_store()
            except _warm_errors():
                newest = None  # none yet, or unreadable: the reads below report it as they always have
            if newest is not None:
                pins = _REQUEST_PINS.get()
                assert pins is not None
                pins[id(self)] = newest
            yield
        finally:
            _REQUEST_PINS.reset(token)

    def _warm_next(self, now: float) -> None:
        """Start the background warm-up of the newest version (called holding self._lock): one at a time,
        so at most two versions are held, the served one and the one being warmed."""
        if self._warming is not None or now < self._retry_at:
            return
        self._warm_started = now
        self._swapped = threading.Event()
        self._warming = threading.Thread(target=self._warm_and_swap, name=f"sourcebook-warm-{self.alias}",
                                         daemon=True)
        self._warming.start()

    def _end_warm_up(self) -> None:
        """Called holding self._lock: readers waiting on this warm-up go on, the next one may start."""
        if self._swapped is not None:
            self._swapped.set()
        self._swapped = None
        self._warming = None

    def _warm_and_swap(self) -> None:
        from answer.answering.evidence import all_symbols
        from answer.retrieval.tiers import warm_store
        from generator.index.store import open_index

        started = time.perf_counter()
        token = _REQUEST_PINS.set({})
        try:
            store = open_index(self.config)
            pins = _REQUEST_PINS.get()
            assert pins is not None
            pins[id(self)] = store  # this state's own reads (its file listing): the new version
            warm_store(store)  # the search tiers' memos
            all_symbols(store)  # ask's symbol lookups, over the same rows
            self.indexed_paths()  # /file and /structure's listing
            from sourcebook.settings import current  # SOURCEBOOK_TEST_WARM_DELAY

            delay = current().warm_delay_s
            if delay > 0:  # tests only: a warm-up slow enough to observe readers answered meanwhile
                time.sleep(delay)
        except Exception as exc:  # whatever it was, this repository must not stop swapping
            log.warning("%s: the new index version could not be warmed, still serving the previous one: %s",
                        self.alias, str(exc)[:400], exc_info=not isinstance(exc, _warm_errors()))
            with self._lock:
                self._end_warm_up()
                self._retry_at = time.monotonic() + WARM_RETRY_S
            return
        finally:
            _REQUEST_PINS.reset(token)
        with self._lock:
            self._install(store)
            self._end_warm_up()
            self._checked_at = 0.0  # a version published during the warm-up is looked for at once
        log.info("%s: index version %s warmed in the background in %.2fs, now served", self.alias,
                 store.meta.get("updated_at"), time.perf_counter() - started)

    def rank_in_memory(self) -> None:
        """This state serves many queries (a server): rank them in memory, on this index and the next."""
        from answer.retrieval.tiers import use_in_memory_ranking

        with self._lock:
            self.long_lived = True
            if self._store is not None:
                use_in_memory_ranking(self._store)

    def commit(self) -> str | None:
        """The commit the open index describes (recorded by the build), or None when unknown/unindexed."""
        try:
            store = self.store_or_none()
        except IndexStoreError:  # a label on a reply that reports the outage itself
            return None
        return (store.meta.get("commit") or None) if store is not None else None

    def store_or_none(self) -> IndexStore | None:
        """The open index, or None when this repository has never been indexed. An index that cannot be
        read, or that vanished after it served (its folder deleted, the object store down), raises
        IndexStoreError: an outage is reported as one, never as "not indexed". Without a checkout the index
        is all there is, so a missing one is an outage too."""
        try:
            return self.store()
        except IndexMissingError as exc:
            if self.config.checkout and not self._served:
                log.info("%s: not indexed: %s", self.alias, exc)
                return None
            raise

    def answer_context(self) -> AnswerContext:
        """The engine's warm per-repository context (answer cache, chat model), given our current store."""
        from answer.answering.get_answer import AnswerContext

        with self._lock:
            if self._answer_ctx is None:
                self._answer_ctx = AnswerContext(self.config, alias=self.alias)
            ctx = self._answer_ctx
        store = self.store_or_none()
        if store is not None:
            ctx.store = store  # re-opened when the index changes; the engine keeps what it is given
        return ctx

    def invalidate(self) -> None:
        """A new version was published here (a push): a server warms it in the background while the
        previous one answers; any other process opens it on its next read."""
        with self._lock:
            self._checked_at = 0.0
            self._retry_at = 0.0
            if not self.long_lived or self._store is None:
                self.search_cache.clear()
                self._store = None
                return
        self._current_store()  # starts the warm-up now rather than on the next reader's request

    # ------------------------------------------------------------ table reads

    def files(self) -> list[dict[str, Any]]:
        """Indexed files (path, sha, language, kind, symbol_count, line_count), cached per index state."""
        store = self.store_or_none()
        if store is None:
            return []
        cached = store.memos.get(_FILES)
        if cached is None:
            cols = ["path", "sha", "language", "kind", "symbol_count", "line_count", "size"]
            cached = store.memos.put(_FILES, _read_rows(store, "files", cols))
        return list(cached)

    def indexed_paths(self) -> dict[str, dict[str, Any]]:
        store = self.store_or_none()
        if store is None:
            return {}
        cached = store.memos.get(_PATHS)
        if cached is None:
            cached = store.memos.put(_PATHS, {row["path"]: row for row in self.files()})
        return dict(cached)

    def file_text(self, path: str) -> str | None:
        """The indexed text of one file, or None when it is not indexed."""
        from sourcebook.sql import equals

        store = self.store_or_none()
        if store is None or path not in self.indexed_paths():
            return None
        texts = store.memos.setdefault(_TEXTS, {})
        if path not in texts:
            rows = _read_rows(store, "files", ["text"], where=equals("path", path), limit=1)
            if not rows:
                return None
            texts[path] = rows[0]["text"] or ""
        return texts[path]

    def symbols(self) -> list[dict[str, Any]]:
        from answer.retrieval.tiers import symbol_table

        store = self.store_or_none()
        if store is None:
            return []
        try:
            return symbol_table(store)
        except _outage_errors() as exc:
            raise IndexStoreError(f"the index of {self.alias!r} cannot be read: {exc}") from exc

    # ------------------------------------------------------------ the persisted analysis

    def analysis(self) -> Analysis | None:
        """The analysis the index was written from (facts, manifests, graph), or None when unavailable.

        Loaded from the index, never re-parsed from the repository: the same facts and manifests the build
        used, so the answer side's graph is the build's graph.
        """
        from generator.index.stored_analysis import load_analysis

        store = self.store_or_none()
        if store is None:
            return None
        # Its own lock: a first load on a big tree takes a while and must not block the store lookups of
        # concurrent searches.
        with self._graph_lock:
            if self._analysis is not None and self._analysis_store is store:
                return self._analysis
            from answer.retrieval.tiers import ANALYSIS

            started = time.perf_counter()
            try:
                # the symbolic tier's reference edges come from the same analysis (answer/retrieval/tiers.py)
                analysis = store.memos.get(ANALYSIS) or store.memos.put(ANALYSIS, load_analysis(store))
            except _outage_errors() as exc:
                raise IndexStoreError(f"the index of {self.alias!r} cannot be read: {exc}") from exc
            self._analysis, self._analysis_store = analysis, store
            log.info("%s: analysis of %d files loaded in %.2fs", self.alias, len(analysis.facts),
                     time.perf_counter() - started)
            return analysis

    def graph(self) -> RepoGraph | None:
        """The reference graph of the indexed files, or None when there is no usable index."""
        analysis = self.analysis()
        if analysis is None:
            return None
        with self._graph_lock:
            return analysis.graph


def _read_rows(store: IndexStore, table: str, columns: list[str], where: str | None = None,
               limit: int | None = None) -> list[dict[str, Any]]:
    """Rows of one index table; a damaged or vanished table is an IndexStoreError (503), not a crash."""
    try:
        return store.rows(table, columns, where, limit)
    except _outage_errors() as exc:
        raise IndexStoreError(f"the index table {table!r} cannot be read: {exc}") from exc


def reusable_hashes(st: RepoState, embedder: Any) -> dict[str, str]:
    """path -> sha of indexed files whose rows the next update keeps; {} when it will rebuild everything
    (no index, another schema version, or another embedder: then every file must be parsed again)."""
    from generator.index.store import SCHEMA_VERSION

    try:
        store = st.store_or_none()
    except IndexStoreError:  # an unreadable index is rebuilt by this run, not a reason to refuse it
        return {}
    if store is None:
        return {}
    meta = store.meta
    same = (meta.get("schema_version") == SCHEMA_VERSION
            and (meta.get("embedder_id") or "") == (embedder.id if embedder else "")
            and int(meta.get("dim") or 0) == (embedder.dim if embedder else 0))
    return {p: row["sha"] for p, row in st.indexed_paths().items()} if same else {}


def indexed_source(row: dict[str, Any]) -> Any:
    """The SourceFile an indexed row stands for (same sha: update_index leaves it untouched)."""
    from generator.analyze.facts import SourceFile

    return SourceFile(row["path"], row.get("language") or None, int(row.get("size") or 0), row["sha"],
                      row.get("kind") or "code")
