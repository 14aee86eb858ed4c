"""The skip: one digest of everything a run would write, and whether the last complete run was given exactly
those inputs (then nothing is opened or written).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from generator.analyze.checkout import head_commit
from generator.analyze.facts import FileFacts, SourceFile
from generator.analyze.manifests import Manifests
from generator.index.reader import open_table, read_state
from generator.index.rows import KEY_COLUMN, PageSource
from generator.index.store import (
    SCHEMA_VERSION,
    is_local_missing,
    made_here,
    open_pinned,
    outage_errors,
    storage_options,
)

if TYPE_CHECKING:
    from generator.index.build_cache import CacheUpdate
    from generator.index.embed import Embedder
    from sourcebook.config import Config


def inputs_fingerprint(config: Config, files: Sequence[SourceFile], facts: dict[str, FileFacts],  # noqa: PLR0917
                       pages: PageSource | None, embedder: Embedder | None, prune: bool, *,
                       manifests: Manifests | None, build_cache: CacheUpdate | None,
                       commit: str | None = None) -> str | None:
    """One digest of everything a run would write, or None when it cannot tell (records given whole, a
    ledger to publish): the files' paths, hashes and kinds under this parser (their facts and texts
    follow from those), the generated docstrings, the pages' state rows and Markdown
    (generator/pages/index_inputs.py: the pages table and the build cache follow from those), the manifests,
    the commit, the embedder, the schema. Equal to the last publish's: nothing to write."""
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
    the writer's imports and the build-cache rows' maker (handed in, so not imported here)."""
    from sourcebook.code_version import stage_version

    return stage_version("generator.index.writer", "generator.index.build_cache")[:32]


def published_state(config: Config) -> dict[str, Any] | None:
    """The meta row of the index's last complete run, read with Lance, without lancedb (None: no index
    yet, or unreadable; the full run then reports what is wrong)."""
    uri = config.index_location
    if is_local_missing(uri):
        return None
    try:
        return read_state(uri, storage_options(uri))
    except outage_errors():
        return None


def published_with(config: Config, fingerprint: str, embedder: Embedder | None,
                   meta: dict[str, Any] | None) -> bool:
    """Whether the index's last complete run (`meta`, `published_state`) was given exactly these inputs
    (and is this user's, of this schema and embedder, its tables there at the versions it names): read with
    Lance, without lancedb."""
    uri = config.index_location
    if not meta or meta.get("inputs") != fingerprint or meta.get("schema_version") != SCHEMA_VERSION:
        return False
    if (meta.get("embedder_id") or "") != (embedder.id if embedder else "") or int(meta.get("dim") or 0) != (
            embedder.dim if embedder else 0):
        return False
    if not config.index_chosen and not made_here(meta):
        return False
    import pyarrow.compute as pc

    errors: tuple[type[BaseException], ...] = (*outage_errors(), TypeError)
    try:  # the versions it names still there (a damaged index is rebuilt by the full run)
        for name, version in (meta.get("versions") or {}).items():
            open_table(uri, name, int(version), storage_options(uri))
        tables = open_pinned(uri, meta, storage_options(uri))
        # and no key twice (what runs racing before the lock left; the full run heals it): one column read
        # per table
        for name, tbl in tables.items():
            keys = tbl.scan([KEY_COLUMN[name]]).column(0)
            if pc.count_distinct(keys).as_py() != len(keys):
                return False
    except errors:
        return False
    return True
