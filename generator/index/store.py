"""The search index as readers open it: where it lives, the one connection, an open and consistent IndexStore.

Tables (under config.index_location): `chunks` (AST-boundary code and doc sections), `symbols`, `files`
(hash, language, content, and the parsed facts), `pages` (wiki pages) and `meta` (one row: schema version,
embedder id and dimension, parser version, the repository's manifests, and the table versions of the last
complete run). The facts and manifests are the persisted analysis (stored_analysis.py): `load_analysis` gives
the answer side the same graph the build used, with nothing re-parsed. A new parser version re-indexes every
file.

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

The rest of the index, a module a job: rows.py (what a row holds), writer.py (a run: update_index and
IndexWriter), table_writes.py (streamed writes to one table), row_workers.py (a cold run's forked row
makers), cache_table.py (the build-cache table), fingerprint.py (skipping a run whose inputs were
published), source_check.py (refusing a prune from another checkout), stored_analysis.py (the persisted
facts) and command.py (the `index` command).
"""

from __future__ import annotations

import hmac
import importlib.util
import json
import os
import sys
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.index.memos import Memos
from generator.index.reader import TableReader, open_table, read_state
from sourcebook.errors import IndexMissingError, IndexStoreError, SourcebookError

if TYPE_CHECKING:
    from generator.index.embed import Embedder
    from sourcebook.config import Config

SCHEMA_VERSION = 2  # 2: files.facts and the meta row's parser and manifests (the persisted analysis)
DATA_TABLES = ("chunks", "symbols", "files", "pages")
META_TABLE = "meta"
CACHE_TABLE = "build_cache"  # the shared build cache (index/build_cache.py), pinned by the meta row too


@dataclass
class IndexStore:
    """An open, consistent index: tables at the versions of the last complete run, plus its metadata.

    Reads go through generator/index/reader.py (pylance, no lancedb import: a one-shot CLI process pays
    a fraction of lancedb's import time); `db` and `table()` open the same versions with lancedb, lazily,
    for the index's writers and for tests.
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
    # holds a LanceDB table), so a storage change stays inside the index package.

    def table(self, name: str) -> Any:
        """The raw LanceDB table at the pinned version, for the index's writers and tests only (readers use
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
        IndexStoreError (an outage), see answer/serving/repo_state.py.
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


_LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


def is_remote(uri: str) -> bool:
    """True for an object-store URI (s3://, gs://, az://), False for a path on this machine."""
    return "://" in uri


def storage_options(uri: str, env: dict[str, str] | None = None) -> dict[str, str]:
    """Options LanceDB needs for `uri` beyond the store's standard environment, which it reads itself
    (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ALLOW_HTTP;
    GOOGLE_SERVICE_ACCOUNT…; AZURE_STORAGE_ACCOUNT_NAME…), plus the options registered for the root
    holding `uri` (object_stores.py: an organisation's own credentials). Pure over `env` (default
    os.environ) and the registered scopes.

    The one addition: an S3-compatible endpoint on this machine's loopback over plain http (moto, a local
    MinIO) is allowed without AWS_ALLOW_HTTP, since nothing leaves the machine. A plain-http endpoint
    elsewhere still needs AWS_ALLOW_HTTP=true from the user: credentials would cross a network in clear.
    """
    from urllib.parse import urlsplit

    from generator.index.object_stores import scoped_options

    env = dict(os.environ) if env is None else env
    scoped = scoped_options(uri)  # a registered root's own settings (an organisation's): they win
    if not uri.lower().startswith("s3://"):
        return scoped
    endpoint = (scoped.get("aws_endpoint") or scoped.get("endpoint") or env.get("AWS_ENDPOINT_URL_S3")
                or env.get("AWS_ENDPOINT_URL") or env.get("AWS_ENDPOINT") or "")
    parts = urlsplit(endpoint)
    if parts.scheme == "http" and (parts.hostname or "") in _LOOPBACK_HOSTS | {"::1"}:
        return {"allow_http": "true", **scoped}
    return scoped


def connect(uri: str) -> Any:
    """A LanceDB connection to `uri` (a path or an object-store URI): the one place a connection is made.

    Other modules use what the index package builds on it (IndexStore, the tables it writes), never lancedb.
    """
    # LanceDB's Rust side logs deprecation chatter to stderr; our own logging reports what matters
    os.environ.setdefault("LANCE_LOG", "error")
    if "lancedb" not in sys.modules:
        _defer_rest_client()
    import lancedb

    options = storage_options(uri)
    return lancedb.connect(uri, storage_options=options) if options else lancedb.connect(uri)




def ensure_fts(tbl: Any, rebuild: bool) -> None:
    """Build `tbl`'s full-text index over `tokens` when it has none or `rebuild` (here: the one module that
    imports lancedb)."""
    from lancedb.index import FTS

    if tbl.count_rows() == 0:
        return
    has = any("tokens" in (getattr(ix, "columns", None) or []) for ix in tbl.list_indices())
    if rebuild or not has:
        # whitespace: tokens.py already split identifiers; the stemmer folds "serialize"/"serialization"
        tbl.create_index("tokens", config=FTS(base_tokenizer="whitespace", with_position=False,
                                              remove_stop_words=False), replace=True)



def table_names(db: Any) -> set[str]:
    result = db.list_tables()
    names = getattr(result, "tables", result)
    return set(names)


# A folder of databases on an object store (an organisation's index root, answer/serving/orgs.py) has no
# directory
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


def read_meta(db: Any) -> dict[str, Any] | None:
    if META_TABLE not in table_names(db):
        return None
    rows = db.open_table(META_TABLE).to_arrow().to_pylist()
    for row in rows:
        if row["key"] == "state":
            value = json.loads(row["value"])
            return value if isinstance(value, dict) else None
    return None


def owner_mark(state: dict[str, Any], key: bytes | None) -> str | None:
    """This user's mark over a meta row (every field but the mark itself); None without a local key."""
    from sourcebook.local_key import keyed

    fields = {k: v for k, v in state.items() if k != "owner"}
    return keyed(b"sourcebook-index\0" + json.dumps(fields, sort_keys=True).encode("utf-8"), key)


def made_here(meta: dict[str, Any]) -> bool:
    """Whether this user's sourcebook wrote the meta row (and so the rows it names): never without a key."""
    from sourcebook.local_key import local_key

    mark = meta.get("owner")
    expected = owner_mark(meta, local_key())
    return isinstance(mark, str) and expected is not None and hmac.compare_digest(mark, expected)


def not_ours(uri: str, meta: dict[str, Any]) -> str:
    """Why an index without this user's mark is not used (one line, for readers and the rebuild warning)."""
    from sourcebook.local_key import local_key

    if local_key() is None:
        return (f"no local key to check who made the index at {uri} (make $XDG_STATE_HOME or "
                "~/.local/state writable)")
    if not meta.get("owner"):
        return (f"the index at {uri} carries no owner mark (written by an older sourcebook, or committed "
                "with the repository)")
    return f"the index at {uri} was not made by this user (it may have come with the repository)"


def is_local_missing(uri: str) -> bool:
    return "://" not in uri and not Path(uri).exists()


def read_index_state(uri: str) -> dict[str, Any] | None:
    """The meta row of the index at `uri` as a reader sees it (None: no complete run yet); what a server
    polls to notice a newer publish."""
    return read_state(uri, storage_options(uri))


def open_pinned(uri: str, meta: dict[str, Any], options: dict[str, str]) -> dict[str, TableReader]:
    return {name: open_table(uri, name, int(meta["versions"][name]), options) for name in DATA_TABLES}


def open_index(config: Config, embedder: Embedder | str | None = "config") -> IndexStore:
    """Open the index for reading at its last complete state.

    `embedder`: "config" (default) builds the configured embedder when the index has vectors; None skips
    the semantic tier; an Embedder is used as given. Raises IndexStoreError when the index is missing,
    empty, from another schema version, or when the embedder's identity/dimension differs from the index's.
    """
    uri = config.index_location
    if is_local_missing(uri):
        raise IndexMissingError(f"no index at {uri}: run `sourcebook index` (or `sourcebook build`) first")
    options = storage_options(uri)
    try:
        meta = read_state(uri, options)
    except (OSError, ValueError, RuntimeError) as exc:
        raise IndexStoreError(f"cannot read the index at {uri}: {exc}") from exc
    if meta is None:
        raise IndexMissingError(f"the index at {uri} is empty or incomplete: run `sourcebook index` to build "
                                "it")
    if not config.index_chosen and not made_here(meta):  # never served: see the module docstring
        # as good as none: a reader never serves it, and "not indexed" (not an outage) is what it is
        raise IndexMissingError(f"{not_ours(uri, meta)}: run `sourcebook index` to rebuild it")
    if meta.get("schema_version") != SCHEMA_VERSION:
        raise IndexStoreError(
            f"the index at {uri} has schema version {meta.get('schema_version')}, this sourcebook uses "
            f"{SCHEMA_VERSION}: run `sourcebook index` to rebuild it")
    try:
        tables = open_pinned(uri, meta, options)
    except (OSError, ValueError, RuntimeError, KeyError) as exc:
        # a writer may have just finished and cleaned the versions we read about: read its meta row once more
        newer = read_state(uri, options)
        if newer is None or newer.get("versions") == meta.get("versions") or (
                not config.index_chosen and not made_here(newer)):
            raise IndexStoreError(
                f"the index at {uri} is damaged ({exc}): run `sourcebook index` to rebuild") from exc
        meta = newer
        try:
            tables = open_pinned(uri, meta, options)
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

