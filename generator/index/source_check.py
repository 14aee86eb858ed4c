"""The checkout an index was built from, recorded in its meta row, and the refusal of a run that would prune
or rebuild it from another place (IndexSourceError).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from generator.analyze.checkout import checkout_identity
from generator.analyze.facts import SourceFile
from generator.index.reader import open_table
from generator.index.store import SCHEMA_VERSION, made_here, outage_errors, storage_options
from sourcebook.errors import IndexSourceError

if TYPE_CHECKING:
    from generator.index.embed import Embedder
    from sourcebook.config import Config


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
    if meta is None or (not config.index_chosen and not made_here(meta)):
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
