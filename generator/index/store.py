"""The search index: LanceDB tables of chunks, symbols, files and pages, kept in step with the repository.

Tables (under config.index_location): `chunks` (AST-boundary code and doc sections), `symbols`, `files`
(hash, language, content, and the parsed facts), `pages` (wiki pages) and `meta` (one row: schema version,
embedder id and dimension, parser version, the repository's manifests, and the table versions of the last
complete run). The facts and manifests are the persisted analysis (analysis.py): `load_analysis` gives the
answer side the same graph the build used, with nothing re-parsed. A new parser version re-indexes every file.

Where: `config.index_location`, a path or an object-store URI (s3://, gs://, az://; `connect` is the one
place a connection is made, with credentials and endpoint from the store's standard environment).

Publishing (the same on a disk and in a bucket): every run writes the data tables first and the meta row
last; that meta row, one commit of a one-row table, is the pointer that publishes the run. Readers open each
table at the version the meta row names, so a reader sees one complete run or the previous one, never a mix;
a run interrupted half way leaves readers on the previous complete state, and the next run first rolls the
tables back to it. Superseded versions stay readable for `config.index_keep_s` seconds (a server that
opened them finishes its queries; it re-reads the meta row every `index_refresh_s`), then a later run
deletes them. One writer at a time: build and index hold the output directory's lock (lock.py); writers on
several machines sharing one URI must be serialized by their CI (one publish job per index).

Ownership: the index lives in the output folder, inside the repository, so a repository can commit one whose
rows differ from its source (planted chunk, page or symbol text that would reach answers, and that a build
would keep because the content hashes match). The meta row therefore carries a mark keyed under this user's
local key (sourcebook/local_key.py) over the rest of the row, which includes an id drawn when the index was
created. Readers refuse an index without this user's mark; writers rebuild it from scratch, reusing nothing.
An index at a location the user chose (`index_uri` from a flag, the environment or the user's config, never
the repository's) is not held to the mark: CI writes it and servers on other machines read it.

Incremental: a file whose content hash is unchanged is skipped; a changed file's rows are deleted and written
again, and a file with a doubled key (left by runs that raced before the lock) is treated as changed, so any
re-run converges to a clean run's rows; rows of vanished files are pruned; unchanged chunk text is never
re-embedded (vectors are reused by content hash).

Cores: a cold run of a build (no index yet) makes the rows of chunks, files and pages in the build's
processes: workers forked before LanceDB is imported (it is not fork-safe; they never open, read or write a
table) make a group of files' or pages' rows each (tokens, index text, the static embedder's vectors) and
send them back in order to this process, the only one that writes. A remote or torch embedder embeds
here, from the rows the workers made (generator/index/embed.py `for_workers`); a run that updates an index
makes
its rows here, as before.

Memory: every table write is one commit of rows streamed to Lance in Arrow batches (`_add_rows`), each made,
embedded and converted as Lance asks for it; a run holds a batch, never the rows of every file or page (on a
12k-file monorepo holding them cost more than the rest of the build: docs/performance.md).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import importlib.util
import json
import logging
import os
import secrets
import sys
import time
import types
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from generator.analyze.checkout import checkout_identity, head_commit
from generator.analyze.facts import FileFacts, PageRecord, SourceFile
from generator.analyze.manifests import Manifests
from generator.index.chunks import Chunk, chunk_file
from generator.index.memos import Memos
from generator.index.reader import TableReader, open_table, read_state
from generator.index.tokens import path_terms, token_text
from generator.index.vectors import ensure_vector_index
from sourcebook.errors import IndexMissingError, IndexSourceError, IndexStoreError, SourcebookError
from sourcebook.redaction import is_secret_path
from sourcebook.sql import in_list

if TYPE_CHECKING:
    import pyarrow as pa

    from generator.analyze.analysis import Analysis
    from generator.index.build_cache import CacheUpdate
    from generator.index.embed import Embedder
    from sourcebook.config import Config
    from sourcebook.workers import Workers

log = logging.getLogger(__name__)

SCHEMA_VERSION = 2  # 2: files.facts and the meta row's parser and manifests (the persisted analysis)
DATA_TABLES = ("chunks", "symbols", "files", "pages")
META_TABLE = "meta"
CACHE_TABLE = "build_cache"  # the shared build cache (index/build_cache.py), pinned by the meta row too
EMBED_BATCH = 256
# A table's full-text index is rebuilt from scratch (exact BM25 statistics) when it is small or when the rows
# changed since its last rebuild pass this share of the table; otherwise optimize() folds the changed rows
# into it. Rebuilding every dirty table's FTS index on each run made a one-file edit pay for the whole tree.
# A small table is not a cheap one: the files table holds every file's text (a rebuild costs several times
# folding a one-file edit in: docs/performance.md): only tables too
# small for a few changed rows to stay under FTS_DRIFT are rebuilt on every change.
FTS_SMALL_ROWS = 200
FTS_DRIFT = 0.05
EMBED_CHARS = 2000  # text per chunk given to the embedder
# Rows reach LanceDB in Arrow batches of this many rows (or this much text), streamed: a run never holds
# every file's rows. Holding them (and their Arrow copy) was most of a monorepo build's peak memory.
WRITE_BATCH_ROWS = 512
WRITE_BATCH_CHARS = 8_000_000
# A cold run's workers make a table's rows (`_spread`) from this many changed files (pages) an item; fewer
# items than MIN_SPREAD_ITEMS per process are made in this process.
FILES_PER_ITEM = 32
PAGES_PER_ITEM = 128
MIN_SPREAD_ITEMS = 4


@dataclass
class IndexReport:
    files_total: int = 0
    files_indexed: int = 0  # new or changed
    files_unchanged: int = 0
    files_deleted: int = 0
    chunks_written: int = 0
    symbols_written: int = 0
    pages_written: int = 0
    embedded: int = 0  # texts actually sent to the embedder
    embed_reused: int = 0  # vectors taken from the cache
    embedder: str = "none"
    rebuilt: str = ""  # why the whole index was rebuilt, if it was
    unchanged: bool = False  # nothing opened or written: the inputs are those the last publish recorded
    cache_written: int = 0  # shared build cache rows added or replaced
    cache_deleted: int = 0
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)


@dataclass
class IndexStore:
    """An open, consistent index: tables at the versions of the last complete run, plus its metadata.

    Reads go through generator/index/reader.py (pylance, no lancedb import: a one-shot CLI process pays
    a fraction of lancedb's import time); `db` and `table()` open the same versions with lancedb, lazily,
    for this module's writers and for tests.
    """

    uri: str
    tables: dict[str, TableReader]
    meta: dict[str, Any]
    embedder: Embedder | None = None
    embedder_error: str = ""  # why the semantic tier is unavailable, if it is
    root: Path | None = None
    memos: Memos = field(default_factory=Memos)  # what readers derive from this version, kept
    _db: Any = None

    @property
    def embedder_id(self) -> str:
        return str(self.meta.get("embedder_id") or "")

    @property
    def dim(self) -> int:
        return int(self.meta.get("dim") or 0)

    @property
    def db(self) -> Any:
        """A LanceDB connection to the index (writers and tests; imports lancedb on first use)."""
        if self._db is None:
            self._db = connect(self.uri)
        return self._db

    # The read side's whole vocabulary: the answer engine reads the index only through these methods (it never
    # holds a LanceDB table), so a storage change stays inside this module.

    def table(self, name: str) -> Any:
        """The raw LanceDB table at the pinned version, for this module's writers and tests only (readers use
        the methods below)."""
        return self.db.open_table(name, version=self.tables[name].version)

    def count(self, table: str) -> int:
        """Rows in `table` at the pinned version."""
        return self.tables[table].count()

    def vector_dim(self, table: str) -> int:
        """Width of `table`'s vector column (0: none)."""
        schema = self.tables[table].schema
        if schema.get_field_index("vector") < 0:
            return 0
        return int(getattr(schema.field("vector").type, "list_size", 0) or 0)

    def columns(self, table: str, columns: list[str], where: str | None = None) -> Any:
        """Every row's `columns` as one Arrow table: what an in-memory ranking (BM25, a vector matrix) is
        built from in one read, without a Python dict per row."""
        return self.tables[table].scan(columns, where)

    def vector_indexed(self, table: str) -> bool:
        """Whether `table` has an ANN index on its vectors (a big table: generator/index/vectors.py)."""
        return self.tables[table].vector_indexed

    def nearest(self, table: str, vector: Sequence[float], columns: list[str], *, limit: int,
                where: str | None = None) -> list[dict[str, Any]]:
        """The `limit` rows of `table` nearest to `vector` (LanceDB's vector search), each with `_distance`;
        `where` filters before ranking."""
        return list(self.tables[table].nearest(vector, columns, limit=limit, where=where).to_pylist())

    def rows(self, table: str, columns: list[str], where: str | None = None,
             limit: int | None = None) -> list[dict[str, Any]]:
        """`columns` of the rows of `table` (at the pinned version) matching `where`: the one row reader.

        Raises what Lance raises on a damaged or vanished table; the answer side turns that into an
        IndexStoreError (an outage), see answer/repo_state.py.
        """
        return list(self.tables[table].scan(columns, where, limit).to_pylist())

    def fts(self, table: str, text: str, columns: list[str], *, limit: int,
            where: str | None = None) -> list[dict[str, Any]]:
        """The best `limit` rows of `table` for `text` by LanceDB's persisted full-text index (BM25 over the
        `tokens` column), each with its `_score`; `where` filters before ranking."""
        return list(self.tables[table].match(text, "tokens", columns, limit=limit, where=where).to_pylist())


def outage_errors() -> tuple[type[BaseException], ...]:
    """What a damaged or vanished table raises from inside LanceDB/Arrow mid-query (never KeyboardInterrupt).
    Readers catch these and report an outage (IndexStoreError, HTTP 503) instead of a traceback."""
    import pyarrow as pa

    return (OSError, RuntimeError, ValueError, KeyError, pa.ArrowException)


class PageSource(Protocol):
    """The pages a run is given (generator/pages/index_inputs.py in a build): their ids, each one's record
    made on
    demand, what an earlier run derived of it (its row hash), and a digest of them all for the run's
    fingerprint (None: unknown, the run is never skipped)."""

    ids: list[str]

    def fingerprint(self) -> str | None: ...

    def record(self, page_id: str) -> PageRecord | None: ...

    def known_hash(self, page_id: str) -> str | None: ...

    def learn(self, page_id: str, **values: str) -> None: ...

    def save(self) -> None: ...


class RecordList:
    """Page records given whole (the index tool's and tests' callers): the same interface, nothing known."""

    def __init__(self, records: Sequence[PageRecord]) -> None:
        self._records = {r.id: r for r in records}
        self.ids = list(self._records)

    def fingerprint(self) -> str | None:
        return None  # records given whole were already made: nothing to skip

    def record(self, page_id: str) -> PageRecord | None:
        return self._records.get(page_id)

    def known_hash(self, page_id: str) -> str | None:
        return None

    def learn(self, page_id: str, **values: str) -> None:
        return None

    def save(self) -> None:
        return None


# ---------------------------------------------------------------- rows (pure)

def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _embed_text(path: str, symbol: str, text: str) -> str:
    head = f"{path} {symbol}".strip()
    if is_secret_path(path):
        return head  # a secrets file by name: its content is never sent, not even to a remote embedder
    return f"{head}\n{text[:EMBED_CHARS]}"


def chunk_embed_text(chunk: Chunk) -> str:
    return _embed_text(chunk.path, chunk.symbol, chunk.text)


def page_embed_text(page: PageRecord) -> str:
    return _page_embed_text(page.title, page.summary, page.markdown)


def _page_embed_text(title: str, summary: str, markdown: str) -> str:
    return f"{title}\n{summary}\n{markdown[:EMBED_CHARS]}"


def _page_embed_text_of(row: dict[str, Any]) -> str:
    return _page_embed_text(row["title"], row["summary"], row["markdown"])


def chunk_row(chunk: Chunk) -> dict[str, Any]:
    embed_text = chunk_embed_text(chunk)
    return {
        "id": chunk.id, "path": chunk.path, "start_line": chunk.start_line, "end_line": chunk.end_line,
        "symbol": chunk.symbol, "symbols": " ".join(chunk.symbols), "language": chunk.language,
        "kind": chunk.kind, "text": chunk.text,
        "tokens": token_text(chunk.text, chunk.path, chunk.symbols),
        "hash": _hash(embed_text),
    }


def symbol_rows(facts: FileFacts) -> list[dict[str, Any]]:
    rows = []
    seen: set[str] = set()
    for sym in facts.symbols:
        key = f"{sym.path}::{sym.qualname}"
        if key in seen:
            continue
        seen.add(key)
        rows.append({
            "id": key, "path": sym.path, "qualname": sym.qualname, "name": sym.name, "kind": sym.kind,
            "start_line": sym.start_line, "end_line": sym.end_line, "signature": sym.signature,
            "docstring": sym.docstring, "docstring_source": sym.docstring_source,
            "parent": sym.parent or "", "public": sym.public,
            "tokens": " ".join([token_text(f"{sym.qualname} {sym.signature}"),
                                token_text(sym.docstring[:1000])]),
        })
    return rows


def file_row(facts: FileFacts, text: str) -> dict[str, Any]:
    from generator.analyze.factcache import facts_to_json

    f = facts.file
    names = [s.qualname for s in facts.symbols]
    return {
        "path": f.path, "sha": f.sha, "language": f.language or "", "kind": f.kind, "size": f.size,
        "symbol_count": len(facts.symbols), "line_count": facts.line_count or text.count("\n") + 1,
        "title": facts.title, "docstring": facts.docstring[:2000], "text": text,
        "tokens": token_text(text, f.path, names),
        "facts": json.dumps(facts_to_json(facts), ensure_ascii=False, separators=(",", ":")),
    }


def page_hash(page: PageRecord) -> str:
    # covers everything stored (not just the embedded prefix): an unchanged hash means an unchanged row
    return _hash("\x00".join([page.kind, page.title, page.target_path, page.summary, page.markdown,
                              " ".join(page.symbols), page.written_by]))


def page_row(page: PageRecord) -> dict[str, Any]:
    return {
        "id": page.id, "kind": page.kind, "title": page.title, "target_path": page.target_path,
        "summary": page.summary, "markdown": page.markdown, "symbols": " ".join(page.symbols),
        "written_by": page.written_by,
        "tokens": " ".join([" ".join(path_terms(page.target_path)) if page.target_path else "",
                            token_text(f"{page.title}\n{page.summary}\n{page.markdown}", "", page.symbols)]),
        "hash": page_hash(page),
    }


def _schema(name: str, dim: int) -> pa.Schema:
    import pyarrow as pa

    s, i32 = pa.string(), pa.int32()
    cols: dict[str, list[tuple[str, Any]]] = {
        "chunks": [("id", s), ("path", s), ("start_line", i32), ("end_line", i32), ("symbol", s),
                   ("symbols", s), ("language", s), ("kind", s), ("text", s), ("tokens", s), ("hash", s)],
        "symbols": [("id", s), ("path", s), ("qualname", s), ("name", s), ("kind", s), ("start_line", i32),
                    ("end_line", i32), ("signature", s), ("docstring", s), ("docstring_source", s),
                    ("parent", s), ("public", pa.bool_()), ("tokens", s)],
        "files": [("path", s), ("sha", s), ("language", s), ("kind", s), ("size", pa.int64()),
                  ("symbol_count", i32), ("line_count", i32), ("title", s), ("docstring", s), ("text", s),
                  ("tokens", s), ("facts", s)],
        "pages": [("id", s), ("kind", s), ("title", s), ("target_path", s), ("summary", s), ("markdown", s),
                  ("symbols", s), ("written_by", s), ("tokens", s), ("hash", s)],
        "meta": [("key", s), ("value", s)],
        CACHE_TABLE: [("id", s), ("key", s), ("value", s), ("sha", s)],
    }
    fields = [pa.field(n, t) for n, t in cols[name]]
    if dim and name in ("chunks", "pages"):
        fields.append(pa.field("vector", pa.list_(pa.float32(), dim)))
    return pa.schema(fields)


_KEYS = {"chunks": "id", "symbols": "id", "files": "path", "pages": "id"}
_PATH_COL = {"chunks": "path", "symbols": "path", "files": "path", "pages": "target_path"}


# ---------------------------------------------------------------- opening

_REST_CLIENT = "lance_namespace_urllib3_client"


def _defer_rest_client() -> None:
    """Register LanceDB's REST-namespace client package without running its __init__ yet.

    `import lancedb` imports that client's models; the package __init__ also builds pydantic validators for
    every REST API method, which is about half of the import time (a cold `sourcebook search` pays it) and is
    never used with a local or object-store URI. Submodules still import normally through __path__; the
    first access to a top-level name runs the real __init__ in place, so nothing is lost.
    """
    if _REST_CLIENT in sys.modules:
        return
    spec = importlib.util.find_spec(_REST_CLIENT)
    if spec is None or spec.loader is None or not spec.submodule_search_locations:
        return
    shell = types.ModuleType(_REST_CLIENT)
    shell.__path__ = list(spec.submodule_search_locations)
    shell.__spec__, shell.__loader__, shell.__file__ = spec, spec.loader, spec.origin
    shell.__package__ = _REST_CLIENT
    loader = spec.loader

    def load_on_first_use(attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        del shell.__dict__["__getattr__"]
        loader.exec_module(shell)
        return getattr(shell, attr)

    shell.__dict__["__getattr__"] = load_on_first_use
    sys.modules[_REST_CLIENT] = shell


# ---------------------------------------------------------------- where the index lives (any URI)

_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


def is_remote(uri: str) -> bool:
    """True for an object-store URI (s3://, gs://, az://), False for a path on this machine."""
    return "://" in uri


def storage_options(uri: str, env: dict[str, str] | None = None) -> dict[str, str]:
    """Options LanceDB needs for `uri` beyond the store's standard environment, which it reads itself
    (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ALLOW_HTTP;
    GOOGLE_SERVICE_ACCOUNT…; AZURE_STORAGE_ACCOUNT_NAME…). Pure over `env` (default os.environ).

    The one addition: an S3-compatible endpoint on this machine's loopback over plain http (moto, a local
    MinIO) is allowed without AWS_ALLOW_HTTP, since nothing leaves the machine. A plain-http endpoint
    elsewhere still needs AWS_ALLOW_HTTP=true from the user: credentials would cross a network in clear.
    """
    from urllib.parse import urlsplit

    env = dict(os.environ) if env is None else env
    if not uri.lower().startswith("s3://"):
        return {}
    endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or env.get("AWS_ENDPOINT") or ""
    parts = urlsplit(endpoint)
    if parts.scheme == "http" and (parts.hostname or "") in _LOOPBACK_HOSTS | {"::1"}:
        return {"allow_http": "true"}
    return {}


def connect(uri: str) -> Any:
    """A LanceDB connection to `uri` (a path or an object-store URI): the one place a connection is made.

    Other modules use what this module builds on it (IndexStore, the tables it writes), never lancedb.
    """
    # LanceDB's Rust side logs deprecation chatter to stderr; our own logging reports what matters
    os.environ.setdefault("LANCE_LOG", "error")
    if "lancedb" not in sys.modules:
        _defer_rest_client()
    import lancedb

    options = storage_options(uri)
    return lancedb.connect(uri, storage_options=options) if options else lancedb.connect(uri)


_connect = connect  # the name tests and older callers use


def _table_names(db: Any) -> set[str]:
    result = db.list_tables()
    names = getattr(result, "tables", result)
    return set(names)


# A folder of databases on an object store (an organisation's index root, answer/orgs.py) has no directory
# listing LanceDB offers: each database is marked by an empty table of this name prefix at the root, which
# the root's table listing returns.
_MARK_PREFIX = "db-"


def mark_database(root: str, name: str) -> None:
    """Record that `<root>/<name>` holds a database (idempotent; concurrent marks of one name agree)."""
    import pyarrow as pa

    db = connect(root)
    db.create_table(_MARK_PREFIX + name, schema=pa.schema([("name", pa.string())]), exist_ok=True)


def marked_databases(root: str) -> list[str]:
    """The names `mark_database` recorded under `root` ([] when the root holds nothing yet)."""
    db = connect(root)
    names: list[str] = []
    token = None
    while True:
        result = db.list_tables(page_token=token) if token else db.list_tables()
        names += [n for n in getattr(result, "tables", result) if n.startswith(_MARK_PREFIX)]
        token = getattr(result, "page_token", None)
        if not token:
            return sorted(n[len(_MARK_PREFIX):] for n in names)


def _read_meta(db: Any) -> dict[str, Any] | None:
    if META_TABLE not in _table_names(db):
        return None
    rows = db.open_table(META_TABLE).to_arrow().to_pylist()
    for row in rows:
        if row["key"] == "state":
            value = json.loads(row["value"])
            return value if isinstance(value, dict) else None
    return None


def _owner_mark(state: dict[str, Any], key: bytes | None) -> str | None:
    """This user's mark over a meta row (every field but the mark itself); None without a local key."""
    from sourcebook.local_key import keyed

    fields = {k: v for k, v in state.items() if k != "owner"}
    return keyed(b"sourcebook-index\0" + json.dumps(fields, sort_keys=True).encode("utf-8"), key)


def _made_here(meta: dict[str, Any]) -> bool:
    """Whether this user's sourcebook wrote the meta row (and so the rows it names): never without a key."""
    from sourcebook.local_key import local_key

    mark = meta.get("owner")
    expected = _owner_mark(meta, local_key())
    return isinstance(mark, str) and expected is not None and hmac.compare_digest(mark, expected)


def _not_ours(uri: str, meta: dict[str, Any]) -> str:
    """Why an index without this user's mark is not used (one line, for readers and the rebuild warning)."""
    from sourcebook.local_key import local_key

    if local_key() is None:
        return (f"no local key to check who made the index at {uri} (make $XDG_STATE_HOME or "
                "~/.local/state writable)")
    if not meta.get("owner"):
        return (f"the index at {uri} carries no owner mark (written by an older sourcebook, or committed "
                "with the repository)")
    return f"the index at {uri} was not made by this user (it may have come with the repository)"


def _is_local_missing(uri: str) -> bool:
    return "://" not in uri and not Path(uri).exists()


def read_index_state(uri: str) -> dict[str, Any] | None:
    """The meta row of the index at `uri` as a reader sees it (None: no complete run yet); what a server
    polls to notice a newer publish."""
    return read_state(uri, storage_options(uri))


def _open_pinned(uri: str, meta: dict[str, Any], options: dict[str, str]) -> dict[str, TableReader]:
    return {name: open_table(uri, name, int(meta["versions"][name]), options) for name in DATA_TABLES}


def open_index(config: Config, embedder: Embedder | str | None = "config") -> IndexStore:
    """Open the index for reading at its last complete state.

    `embedder`: "config" (default) builds the configured embedder when the index has vectors; None skips
    the semantic tier; an Embedder is used as given. Raises IndexStoreError when the index is missing,
    empty, from another schema version, or when the embedder's identity/dimension differs from the index's.
    """
    uri = config.index_location
    if _is_local_missing(uri):
        raise IndexMissingError(f"no index at {uri}: run `sourcebook index` (or `sourcebook build`) first")
    options = storage_options(uri)
    try:
        meta = read_state(uri, options)
    except (OSError, ValueError, RuntimeError) as exc:
        raise IndexStoreError(f"cannot read the index at {uri}: {exc}") from exc
    if meta is None:
        raise IndexMissingError(f"the index at {uri} is empty or incomplete: run `sourcebook index` to build "
                                "it")
    if not config.index_chosen and not _made_here(meta):  # never served: see the module docstring
        # as good as none: a reader never serves it, and "not indexed" (not an outage) is what it is
        raise IndexMissingError(f"{_not_ours(uri, meta)}: run `sourcebook index` to rebuild it")
    if meta.get("schema_version") != SCHEMA_VERSION:
        raise IndexStoreError(
            f"the index at {uri} has schema version {meta.get('schema_version')}, this sourcebook uses "
            f"{SCHEMA_VERSION}: run `sourcebook index` to rebuild it")
    try:
        tables = _open_pinned(uri, meta, options)
    except (OSError, ValueError, RuntimeError, KeyError) as exc:
        # a writer may have just finished and cleaned the versions we read about: read its meta row once more
        newer = read_state(uri, options)
        if newer is None or newer.get("versions") == meta.get("versions") or (
                not config.index_chosen and not _made_here(newer)):
            raise IndexStoreError(
                f"the index at {uri} is damaged ({exc}): run `sourcebook index` to rebuild") from exc
        meta = newer
        try:
            tables = _open_pinned(uri, meta, options)
        except (OSError, ValueError, RuntimeError, KeyError) as again:
            raise IndexStoreError(
                f"the index at {uri} is damaged ({again}): run `sourcebook index` to rebuild") from again
    store = IndexStore(uri=uri, tables=tables, meta=meta, root=config.root)
    if meta.get("dim"):
        if embedder == "config":
            from generator.index.embed import get_embedder

            try:
                embedder = get_embedder(config.embed)
            except (SourcebookError, ImportError, OSError) as exc:  # only disables the semantic tier
                store.embedder_error = f"embedder unavailable: {exc}"
                embedder = None
        if embedder is not None and not isinstance(embedder, str):
            if embedder.id != meta.get("embedder_id") or embedder.dim != meta.get("dim"):
                raise IndexStoreError(
                    f"the index at {uri} was built with embedder {meta.get('embedder_id')} "
                    f"(dimension {meta.get('dim')}), but {embedder.id} (dimension {embedder.dim}) is "
                    "configured: run `sourcebook index` to rebuild it")
            store.embedder = embedder
        elif not store.embedder_error:
            store.embedder_error = "no embedder configured"
    else:
        store.embedder_error = "index built without vectors (full-text only)"
    return store


# ---------------------------------------------------------------- writing

def _write_meta(db: Any, state: dict[str, Any], keep_s: float = 600.0) -> None:
    from sourcebook.local_key import local_key

    # round-tripped through JSON first, so the mark covers exactly what a reader will parse back
    state = json.loads(json.dumps({k: v for k, v in state.items() if k != "owner"}, sort_keys=True))
    state["owner"] = _owner_mark(state, local_key())
    row = [{"key": "state", "value": json.dumps(state, sort_keys=True)}]
    if META_TABLE in _table_names(db):
        tbl = db.open_table(META_TABLE)
        tbl.merge_insert("key").when_matched_update_all().when_not_matched_insert_all().execute(row)
        _optimize(tbl, keep_s)
    else:
        db.create_table(META_TABLE, data=row, schema=_schema("meta", 0))


def _fresh_tables(db: Any, dim: int) -> dict[str, Any]:
    names = _table_names(db)
    for name in (META_TABLE, *DATA_TABLES, CACHE_TABLE):  # meta first: a half-dropped index is "incomplete"
        if name in names:
            db.drop_table(name)
    return {name: db.create_table(name, schema=_schema(name, dim)) for name in DATA_TABLES}


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


def _existing(tbl: Any, columns: list[str], where: str | None = None,
              limit: int | None = None) -> list[dict[str, Any]]:
    if not tbl.count_rows():
        return []
    query = tbl.search().select(columns)
    if where:
        query = query.where(where)
    return list(query.limit(limit).to_arrow().to_pylist())


def _stored_vectors(tbl: Any, where: str | None = None) -> dict[str, Any]:
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


def _embedded(rows: Iterable[dict[str, Any]], text_of: Callable[[dict[str, Any]], str],
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


def _add_rows(tbl: Any, rows: Iterable[dict[str, Any]]) -> int:
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


def _unique_rows(groups: Iterable[list[dict[str, Any]]], key: str) -> Iterator[dict[str, Any]]:
    """The rows of `groups` (one group per file) with one row per key, even from a faulty caller: inside a
    group a repeated key keeps its first place and its last row; a key seen in an earlier group is dropped
    (keys carry their file's path, so this never happens with this module's rows)."""
    seen: set[str] = set()
    for group in groups:
        unique = {row[key]: row for row in group}
        for k, row in unique.items():
            if k not in seen:
                seen.add(k)
                yield row


Item = tuple[bool, Any]  # (whether the worker embeds the rows, what it makes them from)
Made = tuple[list[dict[str, Any]], int]  # the rows of an item, and how many texts the worker embedded


@dataclass
class _RowWorkers:
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

    def __enter__(self) -> _RowWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.workers.close()


def _row_workers(config: Config, processes: int, facts: dict[str, FileFacts], texts: dict[str, str], *,
                 embedder: Embedder | None, pages: PageSource | None = None,
                 build_cache: CacheUpdate | None = None) -> _RowWorkers:
    """Workers for a cold run (no index at a local path yet) in a process that has not imported LanceDB; a
    run that updates an index, or that cannot fork safely, makes its rows in this process."""
    from generator.index.embed import for_workers
    from sourcebook.workers import Workers

    processes = _row_processes(config, processes)

    def embedded(rows: list[dict[str, Any]], embed: bool, text_of: Callable[[dict[str, Any]], str]) -> Made:
        if not embed or embedder is None:
            return rows, 0
        counts = IndexReport()
        rows = list(_embedded(rows, text_of, {}, embedder, counts, hold=len(rows) + 1))
        return rows, counts.embedded

    def chunks(item: Item) -> Made:
        embed, group = item
        return embedded(list(_unique_rows(([chunk_row(c) for c in chunk_file(fx, text)]
                                           for fx, text in _resolved(group, facts, texts)), "id")),
                        embed, _embed_text_of)

    def files(item: Item) -> Made:
        return list(_unique_rows(([file_row(fx, text)] for fx, text in _resolved(item[1], facts, texts)),
                                 "path")), 0

    def page_rows(item: Item) -> Made:
        embed, ids = item
        assert pages is not None
        return embedded([page_row(r) for r in map(pages.record, ids) if r is not None], embed,
                        _page_embed_text_of)

    jobs: dict[str, Callable[[Any], Any]] = {"chunks": chunks, "files": files, "pages": page_rows}
    if build_cache is not None:
        jobs["cache"] = build_cache.made_rows
    embeds = processes > 1 and embedder is not None and for_workers(embedder)  # before the fork
    return _RowWorkers(Workers(jobs, processes), embeds=embeds)


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
    """A group of `_Sources.items` with its facts and text (in a worker: from the dicts it inherited)."""
    for path, fx, text in group:
        yield (facts[path] if fx is None else fx), (texts[path] if text is None else text)


def _spread(rows: _RowWorkers, job: str, items: Iterable[Any], *, key: str,
            text_of: Callable[[dict[str, Any]], str], cache: dict[str, Any], embedder: Embedder | None,
            report: IndexReport, expected: int) -> Iterator[dict[str, Any]]:
    """The rows `job` makes from each item, one row per key, with their vectors (`_embedded`: reused from
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

    return merged() if inside else _embedded(merged(), text_of, cache, embedder, report)


def _replace_rows(tbl: Any, name: str, rows: Iterable[dict[str, Any]], paths: Iterable[str]) -> int:
    """Make the rows of `paths` exactly `rows` (streamed, see `_add_rows`): delete every row of those
    paths, then add `rows`. Returns the rows added.

    Idempotent by construction: whatever the table held for a path (nothing, the previous content, or the
    doubled rows two racing runs once committed), it holds this run's rows once afterwards.
    """
    paths = sorted(set(paths))
    if not paths:
        return 0
    if tbl.count_rows():
        tbl.delete(in_list(_PATH_COL[name], paths))
    return _add_rows(tbl, rows)


def _duplicated_paths(tbl: Any, name: str) -> set[str]:
    """Paths owning a key that appears more than once in `tbl` (what concurrent runs once left behind)."""
    import pyarrow.compute as pc

    if not tbl.count_rows():
        return set()
    key, path_col = _KEYS[name], _PATH_COL[name]
    data = tbl.search().select(list({key, path_col})).limit(None).to_arrow()
    keys = data.column(key)
    if pc.count_distinct(keys).as_py() == len(keys):  # the usual case: one vectorised pass, nothing found
        return set()
    counts = pc.value_counts(keys)
    doubled = {v.as_py() for v, n in zip(counts.field("values"), counts.field("counts"), strict=True)
               if n.as_py() > 1}
    return {p for k, p in zip(keys.to_pylist(), data.column(path_col).to_pylist(), strict=True)
            if k in doubled}


def _ensure_fts(tbl: Any, rebuild: bool) -> None:
    from lancedb.index import FTS

    if tbl.count_rows() == 0:
        return
    has = any("tokens" in (getattr(ix, "columns", None) or []) for ix in tbl.list_indices())
    if rebuild or not has:
        # whitespace: tokens.py already split identifiers; the stemmer folds "serialize"/"serialization"
        tbl.create_index("tokens", config=FTS(base_tokenizer="whitespace", with_position=False,
                                              remove_stop_words=False), replace=True)


def _cleanup(tbl: Any, keep_s: float) -> None:
    """Delete the versions of `tbl` older than `keep_s` seconds, and nothing else: what a table optimized
    earlier in the run still needs once the meta row names its newest version. optimize() again did the
    same but first re-planned compaction and re-merged the full-text index, for nothing."""
    with warnings.catch_warnings():
        # deprecated in favour of optimize(), which is exactly the work this avoids; UserWarning: see below
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", UserWarning)
        tbl.cleanup_old_versions(timedelta(seconds=keep_s))


def _optimize(tbl: Any, keep_s: float) -> None:
    """Compact, fold new rows into the indexes, and delete versions older than `keep_s` seconds."""
    with warnings.catch_warnings():
        # readers pin the meta row's versions; a superseded version stays readable for keep_s, so a reader
        # still answering from the previous publish finishes its queries (see the module docstring)
        warnings.simplefilter("ignore", UserWarning)
        tbl.optimize(cleanup_older_than=timedelta(seconds=keep_s))


def _facts_and_text(config: Config, f: SourceFile, fx: FileFacts | None, text: str | None
                    ) -> tuple[FileFacts, str]:
    """The facts and text of a changed file, reading and parsing it here when the caller had none."""
    if fx is not None and text is not None:
        return fx, text
    from generator.analyze.scan import decode, read_source

    source = read_source(config.root, f.path)
    if fx is None:
        from generator.analyze.parse import extract

        fx = extract(f, source)
    return fx, decode(source) if text is None else text


class _Sources:
    """The changed files' facts and text, one file at a time, for each table's pass over them.

    A text the caller did not supply is read again by each pass that needs it (holding every file's text
    for the later passes is what streaming avoids); facts parsed here are kept (they are small). A file
    unreadable in the first pass is left out of every later one, as if it had failed once for all tables:
    its old rows are gone and, without a `files` row, the next run indexes it again."""

    def __init__(self, config: Config, files: list[SourceFile], facts: dict[str, FileFacts],
                 texts: dict[str, str], report: IndexReport) -> None:
        self.config, self.files, self.facts, self.texts, self.report = config, files, facts, texts, report
        self._parsed: dict[str, FileFacts] = {}
        self._unreadable: set[str] = set()

    def _facts(self, f: SourceFile) -> FileFacts | None:
        return self.facts.get(f.path) or self._parsed.get(f.path)

    def _read(self, f: SourceFile) -> tuple[FileFacts, str] | None:
        if f.path in self._unreadable:
            return None
        try:
            fx, text = _facts_and_text(self.config, f, self._facts(f), self.texts.get(f.path))
        except (OSError, SourcebookError) as exc:
            self._unreadable.add(f.path)
            self.report.warnings.append(f"{f.path}: cannot read ({exc})")
            return None
        if f.path not in self.facts:
            self._parsed[f.path] = fx
        return fx, text

    def __iter__(self) -> Iterator[tuple[FileFacts, str]]:
        for f in self.files:
            got = self._read(f)
            if got is not None:
                yield got

    def items(self, size: int) -> Iterator[list[tuple[str, FileFacts | None, str | None]]]:
        """The readable files in groups of `size` for forked workers: (path, facts, text), with None for the
        facts and text a worker finds in the dicts it inherited (only what was read or parsed here since is
        sent to it)."""
        group: list[tuple[str, FileFacts | None, str | None]] = []
        for fx, text in self:
            path = fx.file.path
            group.append((path, None if self.facts.get(path) is fx else fx,
                          None if self.texts.get(path) is text else text))
            if len(group) == size:
                yield group
                group = []
        if group:
            yield group

    def facts_only(self) -> Iterator[FileFacts]:
        """The facts of each readable file, without reading its text when the facts are at hand."""
        for f in self.files:
            fx = self._facts(f)
            if f.path in self._unreadable:
                continue
            if fx is None:
                got = self._read(f)
                if got is None:
                    continue
                fx = got[0]
            yield fx


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
    one. `processes`: how many processes make a cold run's rows (this one and forked workers; see the
    module docstring). A storage failure is an IndexStoreError (one line); the next run resumes from the last
    complete state. A run that would prune or rebuild the index from a place that is not the checkout it
    was built from is refused before anything is written (IndexSourceError, see `check_source`) unless
    `reset`. `commit`: the commit the rows describe, as a client pushing files names it
    (answer/push_index.py); None records the checkout's HEAD, or keeps the stored one
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
    these methods, and published by `commit` (data first, the meta row last: see the module docstring).
    Nothing outside this module holds a LanceDB table."""

    def __init__(self, config: Config, embedder: Embedder | None, report: IndexReport, *,
                 rows: _RowWorkers | None = None) -> None:
        self.config, self.embedder, self.report, self.rows = config, embedder, report, rows
        self.uri = config.index_location
        if "://" not in self.uri:
            Path(self.uri).mkdir(parents=True, exist_ok=True)
        self._db = _connect(self.uri)
        self._dim = embedder.dim if embedder else 0
        self._embedder_id = embedder.id if embedder else ""
        self._written = dict.fromkeys(DATA_TABLES, False)
        self._changed_rows = dict.fromkeys(DATA_TABLES, 0)
        self.meta, self.rebuilt, self.restored = self._open()

    def _open(self) -> tuple[dict[str, Any], str, bool]:
        """The previous meta row (or a fresh one), why the index is rebuilt ('' when it is not), whether
        its tables were rolled back to the last complete run; opens or makes `self._tables`."""
        db, uri, dim, embedder_id = self._db, self.uri, self._dim, self._embedder_id
        meta = _read_meta(db)
        reason = ""
        if meta is None:
            reason = "new index" if not (_table_names(db) & set(DATA_TABLES)) else "incomplete index"
        elif not self.config.index_chosen and not _made_here(meta):
            # checked first: nothing in a foreign index is reused, neither rows nor vectors nor versions
            reason = "not made by this user"
            log.warning("%s: rebuilding it from scratch", _not_ours(uri, meta))
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

        indexed = {r["path"]: r["sha"] for r in _existing(self._tables["files"], ["path", "sha"])}
        return indexed if self.meta.get("parser") == parser_version() else dict.fromkeys(indexed, "")

    def doubled(self) -> set[str]:
        """Paths with doubled rows in any table (left by runs that raced before the lock)."""
        out: set[str] = set()
        for name in ("chunks", "symbols", "files"):
            out |= _duplicated_paths(self._tables[name], name)
        return out

    def stored_chunk_vectors(self, paths: Iterable[str]) -> dict[str, Any]:
        """hash -> vector of the chunks stored for `paths`: read before `replace` deletes those rows, so an
        unchanged chunk text is never embedded again."""
        if self.embedder is None:
            return {}
        return _stored_vectors(self._tables["chunks"], in_list("path", sorted(set(paths))))

    def replace(self, name: str, rows: Iterable[dict[str, Any]], paths: list[str]) -> int:
        """The rows of `paths` in table `name` become `rows` (consumed as they are written); returns how
        many were written."""
        written = _replace_rows(self._tables[name], name, rows, paths)
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
            rebuild[name] = fresh or rows < FTS_SMALL_ROWS or drift[name] > FTS_DRIFT * rows
            if rebuild[name]:
                drift[name] = 0

        def refresh(name: str) -> None:
            _ensure_fts(tables[name], rebuild=rebuild[name])
            ensure_vector_index(tables[name], name, config.ann_min_rows, rebuild=fresh)  # vectors.py
            tables[name].optimize()  # compaction and index folding make a version; cleanup waits for meta

        cache_tbl = None
        if build_cache is not None:  # the workers' last job (nothing reads the cache before the meta row)
            cache_tbl = _write_cache(self._db, build_cache, self.report, fresh=bool(self.rebuilt),
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
            # what the rows describe: an answer from a reader with no checkout names it (answer/engine.py)
            "commit": _recorded_commit(config, commit, meta),
            "fts_drift": drift,  # rows changed per table since its full-text index was last rebuilt
            "inputs": inputs,  # what this run was given (inputs_fingerprint): the next run may skip
            # the checkout the rows came from: a later run elsewhere may not prune them (check_source)
            "source": origin or meta.get("source") or {},
        }
        published = ("parser", "manifests", "index_id", "commit", "inputs")
        if not (dirty or versions != meta.get("versions") or any(state[k] != meta.get(k) for k in published)):
            return
        _write_meta(self._db, state, config.index_keep_s)  # the publish: one commit of the meta table
        # only now may older versions go: the meta row names the newest, and optimizing an optimized table
        # makes no new version (checked below all the same)
        for name in dirty:
            _cleanup(tables[name], config.index_keep_s)
        if cache_tbl is not None and (self.report.cache_written or self.report.cache_deleted):
            _cleanup(cache_tbl, config.index_keep_s)
            tables_now = {**tables, CACHE_TABLE: cache_tbl}
        else:
            tables_now = dict(tables)
        if any(tables_now[name].version != versions[name] for name in tables_now):
            _write_meta(self._db, {**state, "versions": {**versions, **{n: int(t.version)
                                                                       for n, t in tables_now.items()}}},
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
    published = _published_state(config)  # read with Lance, before the workers fork
    origin = checkout_source(config)
    if not reset:
        check_source(config, published, origin, files, prune=prune, embedder=embedder)
    fingerprint = inputs_fingerprint(config, files, facts, source, embedder, prune, manifests=manifests,
                                     build_cache=build_cache, commit=commit)
    if fingerprint is not None and _published_with(config, fingerprint, embedder, published):
        report.unchanged, report.files_unchanged = True, len(files)
        report.seconds = time.perf_counter() - started
        log.info("index: unchanged since its last publish (%d files)", len(files))
        return report
    # a cold run's workers fork here, before the writer imports LanceDB
    with _row_workers(config, processes, facts, texts or {}, embedder=embedder, pages=source,
                      build_cache=build_cache) as rows:
        return _write_run(config, files, facts, source, embedder, prune, texts=texts or {},
                          manifests=manifests, build_cache=build_cache, inputs=fingerprint or "", rows=rows,
                          report=report, started=started, origin=origin, commit=commit)


def _write_run(config: Config, files: list[SourceFile], facts: dict[str, FileFacts],  # noqa: PLR0917
               source: PageSource | None, embedder: Embedder | None, prune: bool, *, texts: dict[str, str],
               manifests: Manifests | None, build_cache: CacheUpdate | None, inputs: str, rows: _RowWorkers,
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

    sources = _Sources(config, changed, facts, texts, report)
    touched = [f.path for f in changed] + deleted
    items = -(-len(changed) // FILES_PER_ITEM)  # groups of changed files a cold run's workers make rows of

    # data first, files (the "done" marker per file) last, then the meta row: see the module docstring.
    # Each table is one pass over the changed files, its rows made, embedded and written batch by batch.
    vectors = writer.stored_chunk_vectors(f.path for f in changed)
    report.chunks_written = writer.replace("chunks", _spread(
        rows, "chunks", sources.items(FILES_PER_ITEM), key="id", text_of=_embed_text_of, cache=vectors,
        embedder=embedder, report=report, expected=items), touched)
    del vectors
    report.symbols_written = writer.replace(
        "symbols", _unique_rows((symbol_rows(fx) for fx in sources.facts_only()), "id"), touched)
    writer.pages(source, deleted)
    writer.replace("files", _spread(rows, "files", sources.items(FILES_PER_ITEM), key="path",
                                    text_of=_embed_text_of, cache={}, embedder=None, report=report,
                                    expected=items), touched)
    writer.commit(files=len(files), deleted=len(deleted), manifests=manifests, build_cache=build_cache,
                  inputs=inputs, origin=origin, commit=commit)
    if source is not None:
        source.save()
    report.seconds = time.perf_counter() - started
    log.info("index: %d files (%d changed, %d deleted), %d chunks, %d embedded in %.2fs", len(files),
             len(changed), len(deleted), report.chunks_written, report.embedded, report.seconds)
    return report


def inputs_fingerprint(config: Config, files: Sequence[SourceFile], facts: dict[str, FileFacts],  # noqa: PLR0917
                       pages: PageSource | None, embedder: Embedder | None, prune: bool, *,
                       manifests: Manifests | None, build_cache: CacheUpdate | None,
                       commit: str | None = None) -> str | None:
    """One digest of everything a run would write, or None when it cannot tell (records given whole, a
    ledger to publish): the files' paths, hashes and kinds under this parser (their facts and texts
    follow from those), the generated docstrings, the pages' state rows and Markdown (page_inputs.py:
    the pages table and the build cache follow from those), the manifests, the commit, the embedder,
    the schema. Equal to the last publish's: nothing to write."""
    from generator.analyze.factcache import parser_version

    page_part = "none" if pages is None else pages.fingerprint()
    if page_part is None or (build_cache is not None and build_cache.extra):
        return None
    digest = hashlib.sha256(json.dumps({
        "schema": SCHEMA_VERSION, "parser": parser_version(), "code": _code_version(), "prune": prune,
        "embedder": [embedder.id, embedder.dim] if embedder is not None else None,
        "manifests": manifests.to_json() if manifests is not None else None,
        "commit": commit if commit is not None else head_commit(config.root) if config.checkout else None,
        "pages": page_part, "cache": build_cache is not None, "ann_min_rows": config.ann_min_rows,
    }, sort_keys=True).encode())
    for f in sorted(files, key=lambda f: f.path):
        digest.update(f"{f.path}\x00{f.sha}\x00{f.language}\x00{f.kind}\x00{f.size}\n".encode(
            "utf-8", "surrogatepass"))
    for path in sorted(facts):  # docstrings the writer generated are stored with the symbols
        for sym in facts[path].symbols:
            if sym.docstring_source == "llm":
                digest.update(f"{path}\x00{sym.qualname}\x00{sym.docstring}\n".encode(
                    "utf-8", "surrogatepass"))
    return digest.hexdigest()


@functools.cache
def _code_version() -> str:
    """The index side's code a run's rows depend on (the pages' own: PageSource.fingerprint): the closure of
    this module's imports and the build-cache rows' maker (handed in, so not imported here)."""
    from sourcebook.code_version import stage_version

    return stage_version("generator.index.store", "generator.index.build_cache")[:32]


def _published_state(config: Config) -> dict[str, Any] | None:
    """The meta row of the index's last complete run, read with Lance, without lancedb (None: no index
    yet, or unreadable; the full run then reports what is wrong)."""
    uri = config.index_location
    if _is_local_missing(uri):
        return None
    try:
        return read_state(uri, storage_options(uri))
    except outage_errors():
        return None


def checkout_source(config: Config) -> dict[str, str] | None:
    """What an index records of the place a run scans (None with no checkout): the root, and the git
    remote and folder inside the work tree that name the same checkout on every runner."""
    if not config.checkout:
        return None
    from sourcebook.redaction import redact_text

    remote, subdir = checkout_identity(config.root)
    return {"root": redact_text(str(config.root)), "remote": redact_text(remote), "subdir": subdir}


def _indexed_paths(uri: str, meta: dict[str, Any]) -> set[str] | None:
    """The paths of the files the published run holds (None when they cannot be read)."""
    errors: tuple[type[BaseException], ...] = (*outage_errors(), KeyError, TypeError)
    try:
        tbl = open_table(uri, "files", int(meta["versions"]["files"]), storage_options(uri))
        return {str(p) for p in tbl.scan(["path"]).column(0).to_pylist()}
    except errors:
        return None


def check_source(config: Config, meta: dict[str, Any] | None, origin: dict[str, str] | None,
                 files: Sequence[SourceFile], *, prune: bool, embedder: Embedder | None) -> None:
    """Refuse (IndexSourceError) a run that would delete an index's files from a place that is not the
    checkout it was built from: a scan that found no file, or (recorded either side) another git remote or
    folder of the work tree; without a remote, another root whose run would delete more than half of the
    index. The remote, not the path, names a checkout: fresh CI runners check the same repository out at
    new paths. Another remote is refused even without a prune: its files would be mixed into the index and
    the next prune would go by them. A run that rebuilds (another schema or embedder) loses every file it
    does not scan, as a prune does."""
    uri = config.index_location
    if meta is None or (not config.index_chosen and not _made_here(meta)):
        return  # nothing published, or a foreign committed index a write rebuilds anyway
    stored = meta.get("source")
    recorded: dict[str, Any] = stored if isinstance(stored, dict) else {}
    here: dict[str, Any] = dict(origin or {})
    hint = ("nothing was changed; run it from the checkout the index was built from, or reset the index "
            "deliberately (`sourcebook index --reset`; reset=true over HTTP and MCP)")

    def named(src: dict[str, Any]) -> str:
        place = str(src.get("remote") or "")
        if place and src.get("subdir"):
            place += f" (folder {src['subdir']})"
        return f"{src.get('root') or '?'}" + (f", {place}" if place else "")

    if recorded.get("remote") and here.get("remote"):
        if (recorded["remote"], recorded.get("subdir", "")) != (here["remote"], here.get("subdir", "")):
            raise IndexSourceError(f"the index at {uri} was built from {named(recorded)}; this run scans "
                                   f"{named(here)}: {hint}")
        same_repository = True  # another path is another runner's clone: only an empty scan is refused
    else:
        same_repository = False
    rebuilds = meta.get("schema_version") != SCHEMA_VERSION or (
        (meta.get("embedder_id") or "") != (embedder.id if embedder else "")
        or int(meta.get("dim") or 0) != (embedder.dim if embedder else 0))
    lossy = prune or rebuilds
    elsewhere = recorded.get("root") != here.get("root")
    if not files:
        # an empty scan elsewhere writes no rows, but would still re-point the index (its commit, source)
        if lossy or elsewhere:
            indexed = _indexed_paths(uri, meta)
            if indexed:
                raise IndexSourceError(f"the scan of {config.root} found no files, and the index at {uri} "
                                       f"holds {len(indexed)} files of {named(recorded)}: {hint}")
        return
    if not (lossy and elsewhere and recorded.get("root") and here.get("root")) or same_repository:
        return  # the common case reads nothing more: the same checkout, or a clone of the same remote
    indexed = _indexed_paths(uri, meta) or set()
    lost = indexed - {f.path for f in files}
    if 2 * len(lost) > len(indexed):
        raise IndexSourceError(f"the index at {uri} was built from {named(recorded)}; this run scans "
                               f"{named(here)} and would delete {len(lost)} of its {len(indexed)} files: "
                               f"{hint}")


def _published_with(config: Config, fingerprint: str, embedder: Embedder | None,
                    meta: dict[str, Any] | None) -> bool:
    """Whether the index's last complete run (`meta`, `_published_state`) was given exactly these inputs
    (and is this user's, of this schema and embedder, its tables there at the versions it names): read with
    Lance, without lancedb."""
    uri = config.index_location
    if not meta or meta.get("inputs") != fingerprint or meta.get("schema_version") != SCHEMA_VERSION:
        return False
    if (meta.get("embedder_id") or "") != (embedder.id if embedder else "") or int(meta.get("dim") or 0) != (
            embedder.dim if embedder else 0):
        return False
    if not config.index_chosen and not _made_here(meta):
        return False
    import pyarrow.compute as pc

    errors: tuple[type[BaseException], ...] = (*outage_errors(), TypeError)
    try:  # the versions it names still there (a damaged index is rebuilt by the full run)
        for name, version in (meta.get("versions") or {}).items():
            open_table(uri, name, int(version), storage_options(uri))
        tables = _open_pinned(uri, meta, storage_options(uri))
        # and no key twice (what runs racing before the lock left; the full run heals it): one column read
        # per table
        for name, tbl in tables.items():
            keys = tbl.scan([_KEYS[name]]).column(0)
            if pc.count_distinct(keys).as_py() != len(keys):
                return False
    except errors:
        return False
    return True


def _write_cache(db: Any, cache: CacheUpdate, report: IndexReport, *, fresh: bool,
                 workers: _RowWorkers | None = None) -> Any:
    """Bring the build-cache table to `cache`: rows whose hash changed or that are gone are replaced or
    deleted, unchanged rows are not touched. Returns the table (None when there is nothing to store). An
    empty table takes every row in one pass, made by a cold run's `workers`."""
    exists = CACHE_TABLE in _table_names(db)
    if fresh and exists:
        db.drop_table(CACHE_TABLE)  # a rebuilt index reuses nothing, its cache neither
        exists = False
    if not exists and not (cache.pages or cache.extra):
        return None
    tbl = (db.open_table(CACHE_TABLE) if exists
           else db.create_table(CACHE_TABLE, schema=_schema(CACHE_TABLE, 0)))
    stored: dict[str, list[str]] = {}
    for row in _existing(tbl, ["id", "sha"]):
        stored.setdefault(row["id"], []).append(row["sha"])
    if not stored and workers is not None and workers.workers.workers:
        def spread(groups: Iterable[list[int]], expected: int) -> Iterator[Any]:
            return workers.map("cache", groups, expected)

        added = _add_rows(tbl, cache.fresh_rows(spread))
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
        _add_rows(tbl, cache.rows(stored, verdicts=verdicts, only=add))
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


def _embed_text_of(row: dict[str, Any]) -> str:
    return _embed_text(row["path"], row["symbol"], row["text"])


def _write_pages(tbl: Any, pages: PageSource | None, deleted: list[str],  # noqa: PLR0917
                 embedder: Embedder | None, report: IndexReport, workers: _RowWorkers | None = None) -> bool:
    """Bring the pages table to `pages`: only the rows whose page changed (or is new or gone) are tokenised,
    embedded, deleted and added; the table is rewritten whole only when it holds an id twice (a racing run
    once doubled rows). A page whose row hash the memo knows (page_inputs.py: same state, same Markdown) is
    not even made into a record: making every page's record (index_text) and tokenising it again was most
    of the index step after a one-file edit (bench/build_bench.py). A cold run's `workers` make an
    empty table's rows: every page's record, row and vector, the memo taught each row's hash here."""
    if pages is not None and pages.ids:
        stored = _existing(tbl, ["id", "hash"])
        if not stored and workers is not None and workers.workers.workers:
            made_rows = _spread(workers, "pages", (pages.ids[n:n + PAGES_PER_ITEM]
                                           for n in range(0, len(pages.ids), PAGES_PER_ITEM)),
                           key="id", text_of=_page_embed_text_of, cache={}, embedder=embedder, report=report,
                           expected=-(-len(pages.ids) // PAGES_PER_ITEM))
            report.pages_written = _add_rows(tbl, _learned(pages, made_rows))
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
        cache = _stored_vectors(tbl) if whole and embedder is not None else {}
        if whole:
            tbl.delete("true")
        else:
            stale = sorted((set(changed) & set(existing)) | set(gone))
            if stale:
                tbl.delete(in_list("id", stale))
        records = (made.pop(pid, None) or pages.record(pid) for pid in changed)
        rows = (page_row(r) for r in records if r is not None)  # made, embedded and written batch by batch
        report.pages_written = _add_rows(tbl, _embedded(rows, _page_embed_text_of, cache, embedder, report))
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


def index_repository(config: Config, *, prune: bool = True, embedder: Embedder | str | None = "config",
                     lock_wait: float | None = None, reset: bool = False) -> IndexReport:
    """analyze + update_index without the wiki: what `sourcebook index` runs (pages are kept).

    Holds the output directory's lock like a build (sourcebook/lock.py): waits at most `lock_wait` seconds.
    `reset`: prune even from another checkout than the index's (see `check_source`).
    """
    from sourcebook.lock import output_lock

    with output_lock(config.out_dir, wait=lock_wait):
        return _index_repository(config, prune=prune, embedder=embedder, reset=reset)


def _index_repository(config: Config, *, prune: bool, embedder: Embedder | str | None,
                      reset: bool = False) -> IndexReport:
    from generator.analyze.analysis import analyze

    if embedder == "config":
        from generator.index.embed import get_embedder

        embedder = get_embedder(config.embed)
    analysis = analyze(config, known=indexed_facts(config))
    return update_index(config, analysis.files, analysis.facts, None,
                        None if isinstance(embedder, str) else embedder, prune, texts=analysis.texts,
                        manifests=analysis.manifests, reset=reset)


# ---------------------------------------------------------------- the persisted analysis

def _stored_facts(rows: Iterable[dict[str, Any]]) -> tuple[list[FileFacts], list[dict[str, Any]]]:
    """Facts decoded from `files` rows, with generated docstrings taken off again; rows that do not decode."""
    import dataclasses

    from generator.analyze.factcache import facts_from_json

    out: list[FileFacts] = []
    bad: list[dict[str, Any]] = []
    for row in rows:
        try:
            fx = facts_from_json(json.loads(row["facts"] or "null"))
        except (KeyError, TypeError, ValueError):
            bad.append(row)
            continue
        if any(s.docstring_source == "llm" for s in fx.symbols):  # the build stores them for search only
            fx = dataclasses.replace(fx, symbols=[
                dataclasses.replace(s, docstring="", docstring_source="code") if s.docstring_source == "llm"
                else s for s in fx.symbols])
        out.append(fx)
    return out, bad


def indexed_facts(config: Config) -> dict[tuple[str, str], FileFacts]:
    """{(path, sha): facts} the index holds under this parser version ({} when none is usable)."""
    from generator.analyze.factcache import parser_version

    try:
        store = open_index(config, embedder=None)
    except IndexStoreError:
        return {}
    if store.meta.get("parser") != parser_version():
        return {}
    facts, _ = _stored_facts(store.rows("files", ["path", "sha", "facts"]))
    return {(f.file.path, f.file.sha): f for f in facts}


def load_analysis(store: IndexStore) -> Analysis:
    """The analysis the index was written from: its files' facts and the manifests, nothing re-parsed.

    A row whose stored facts do not decode (written by another facts format) is parsed from its indexed
    text instead. Reads of a damaged table raise what LanceDB raises; callers turn that into an outage.
    """
    from generator.analyze.analysis import Analysis

    rows = store.rows("files", ["path", "sha", "language", "kind", "size", "facts"])
    facts, bad = _stored_facts(rows)
    if bad:
        from generator.analyze.parse import extract

        texts = {r["path"]: r["text"] or "" for r in store.rows(
            "files", ["path", "text"], in_list("path", [r["path"] for r in bad]))}
        for row in bad:
            source = SourceFile(row["path"], row["language"] or None, int(row.get("size") or 0), row["sha"],
                                row.get("kind") or "code")
            facts.append(extract(source, texts.get(row["path"], "").encode("utf-8")))
    root = store.root or Path(".")
    return Analysis.from_facts(root, facts, Manifests.from_json(store.meta.get("manifests")))
