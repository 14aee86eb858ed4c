"""The read side of the index: its Lance tables opened at pinned versions with pylance, not lancedb.

Why: a LanceDB table is a Lance dataset (`<index uri>/<table>.lance`), and every query the answer side makes
(full-text match, nearest vectors, filtered scans, counts) runs in the same Lance engine either way. What
differs is the Python layer around it: `import lancedb` also loads its REST-namespace client, its
embedding-function registry and its `overrides` decorators, which a one-shot `sourcebook ask` paid
before its first query; `import lance` costs a fraction of that on top of pyarrow and numpy
(bench/cold_ask.py; figures in docs/performance.md).
Writers (generator/index/writer.py) still use lancedb; readers open here exactly the versions its meta row
names,
so the publish protocol described there is unchanged, on a disk and in a bucket alike.

Scores are LanceDB's own: same index files, same BM25, same L2 distances
(tests/integration/test_index_reader.py compares them query by query against lancedb).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from generator.index import object_stores

if TYPE_CHECKING:
    import pyarrow as pa

META_TABLE = "meta"
_T = TypeVar("_T")
# A reader answers a person or an agent waiting: no retries, not the store client's default of ten over up
# to three minutes. Against a store that is down a read still takes ~2 s to fail (each retry adds ~0.7 s;
# the default took ~5 s); object_stores.py's breaker then fails the next reads at once until the store
# answers, and the caller may ask again. An organisation's storage_env may set these keys otherwise.
READ_OPTIONS = {"client_max_retries": "0"}


def lance_module() -> Any:
    # Lance's Rust side logs deprecation chatter to stderr; our own logging reports what matters
    os.environ.setdefault("LANCE_LOG", "error")
    import lance

    return lance


def table_uri(uri: str, name: str) -> str:
    """Where LanceDB keeps table `name` of the database at `uri` (a path or an object-store URI)."""
    return f"{uri.rstrip('/')}/{name}.lance"


def _exists(uri: str, name: str) -> bool | None:
    """Whether the table is there: known for a path on this machine, None (try opening) for a bucket."""
    if "://" in uri:
        return None
    return (Path(uri) / f"{name}.lance").exists()


class TableReader:
    """One table at one version: the few reads the answer side needs, each one Lance scan, each behind the
    breaker of its object store (object_stores.py: an unreachable store fails at once)."""

    def __init__(self, dataset: Any, uri: str = "", probe: Callable[[], object] | None = None) -> None:
        self._ds = dataset
        self._uri = uri
        self._probe = probe or (lambda: None)
        self._indexed: bool | None = None

    def _guarded(self, fn: Callable[[], _T]) -> _T:
        if "://" not in self._uri:
            return fn()
        return object_stores.call(self._uri, self._probe, fn)

    @property
    def version(self) -> int:
        return int(self._ds.version)

    @property
    def schema(self) -> pa.Schema:
        return self._ds.schema

    def count(self, where: str | None = None) -> int:
        return int(self._guarded(lambda: self._ds.count_rows(filter=where) if where
                                 else self._ds.count_rows()))

    def scan(self, columns: Sequence[str], where: str | None = None, limit: int | None = None) -> pa.Table:
        """`columns` of the rows matching `where` (all rows without it), in storage order."""
        return self._guarded(lambda: self._ds.to_table(columns=list(columns), filter=where, limit=limit))

    @property
    def vector_indexed(self) -> bool:
        """Whether this version has an ANN index on `vector` (read from the manifest once)."""
        if self._indexed is None:
            self._indexed = any("vector" in (d.field_names or [])
                                for d in self._guarded(self._ds.describe_indices))
        return self._indexed

    def nearest(self, vector: Sequence[float], columns: Sequence[str], *, limit: int,
                where: str | None = None) -> pa.Table:
        """The `limit` rows nearest to `vector` by L2 distance (LanceDB's default metric), `_distance` last;
        `where` filters before ranking (LanceDB's prefilter). With an ANN index the search probes it
        (vectors.py's settings) and re-ranks its shortlist by exact distance; without, a flat scan."""
        cols = [c for c in columns if c != "_distance"]
        query: dict[str, Any] = {"column": "vector", "q": list(vector), "k": limit}
        if self.vector_indexed:
            from generator.index.vectors import probe_settings

            query.update(probe_settings(self.count(), limit))
        return self._guarded(lambda: self._ds.to_table(columns=[*cols, "_distance"], filter=where,
                                                       prefilter=bool(where), nearest=query))

    def match(self, text: str, column: str, columns: Sequence[str], *, limit: int,
              where: str | None = None) -> pa.Table:
        """The best `limit` rows for `text` by the table's persisted full-text index on `column` (BM25,
        terms OR'ed), `_score` last; `where` filters before ranking."""
        from lance.query import MatchQuery

        cols = [c for c in columns if c != "_score"]
        return self._guarded(lambda: self._ds.to_table(
            columns=[*cols, "_score"], filter=where, prefilter=bool(where), limit=limit,
            full_text_query=MatchQuery(text, column)))


def open_table(uri: str, name: str, version: int | None, options: dict[str, str]) -> TableReader:
    """Table `name` at `version` (None: the latest). Raises what Lance raises (ValueError when the table or
    version is not there, OSError on storage errors)."""
    lance = lance_module()
    options = {**READ_OPTIONS, **options} if "://" in uri else options
    kwargs: dict[str, Any] = {"storage_options": options} if options else {}
    where = table_uri(uri, name)

    def probe() -> object:  # a fresh open of the latest version: a listing and a manifest read
        return lance.dataset(where, storage_options=options)

    if version is not None:
        kwargs["version"] = int(version)
    dataset = object_stores.call(uri, probe, lambda: lance.dataset(where, **kwargs))
    return TableReader(dataset, uri, probe)


def read_state(uri: str, options: dict[str, str]) -> dict[str, Any] | None:
    """The meta row's state (the publish pointer: which version of each table is complete), or None when
    the index has no meta table yet."""
    if _exists(uri, META_TABLE) is False:
        return None
    try:
        meta = open_table(uri, META_TABLE, None, options)
    except ValueError as exc:
        if "not found" in str(exc).lower():  # a bucket without the table: Lance's only way of saying so
            return None
        raise
    for row in meta.scan(["key", "value"]).to_pylist():
        if row["key"] == "state":
            value = json.loads(row["value"])
            return value if isinstance(value, dict) else None
    return None
