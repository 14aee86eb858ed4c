"""The reference graph's callers of an index version, kept between processes in the user's state folder.

The callers tier (tiers.py `_callers_of`) needs, for the definitions a question names, the functions that
reference them: the whole reference graph, resolved from the stored analysis. On a large repository of a
language bound by the loose rules that takes seconds (kotlinx.serialization, 981 files: about 5 CPU seconds),
and a one-shot `sourcebook ask` paid it for every question naming a symbol, more than the rest of the ask
twentyfold. `build`, which holds the graph anyway, writes the callers of the index it publishes here
(`keep_callers`); the first ask of an index made otherwise (`sourcebook index`) resolves them and writes them;
later processes read them back (milliseconds). A long-lived server keeps the graph in memory.

Where: $XDG_STATE_HOME/sourcebook/callers/ (default ~/.local/state/...), beside the local key, one file per
index location, named by a keyed hash of the location (sourcebook/local_key.py): never inside the output
folder, which the repository may hold, so a repository cannot plant the callers a question will read. A file
is used only when its recorded state matches: the index's table versions and publish time, its schema, and
the version of the graph's code (a sourcebook that resolves differently resolves again). Anything else, an
unreadable, oversized or malformed file, is a miss: the graph is resolved and the file rewritten. Without a
local key nothing is read or written.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sourcebook.atomic import PRIVATE, atomic_write_text

if TYPE_CHECKING:
    from generator.index.store import IndexStore
    from sourcebook.config import Config

log = logging.getLogger(__name__)

CALLERS_FORMAT = 1
MAX_FILE_BYTES = 512 * 1024 * 1024  # a 12k-file tree's callers are tens of MB; more is not ours
MAX_KEPT = 16  # index locations whose callers are kept (the most recently written)

Key = tuple[str, str]
Callers = dict[Key, list[Key]]


def _folder() -> Path | None:
    from sourcebook.local_key import local_key_path

    key_path = local_key_path()
    return key_path.parent / "callers" if key_path is not None else None


def callers_file(store: IndexStore, secret: bytes | None) -> Path | None:
    from sourcebook.local_key import keyed

    folder = _folder()
    name = keyed(b"sourcebook-callers\0" + store.uri.encode("utf-8", "surrogateescape"), secret)
    return folder / f"{name}.json" if folder is not None and name is not None else None


def index_version(store: IndexStore) -> str:
    """What the callers depend on: the index's published state and the code that resolves references."""
    from sourcebook.code_version import stage_version

    meta = store.meta
    payload = json.dumps([CALLERS_FORMAT, meta.get("versions", {}), meta.get("updated_at"),
                          meta.get("schema_version"), stage_version("generator.analyze.graph")],
                         sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _decode(body: Any, version: str) -> Callers | None:
    if not isinstance(body, dict) or body.get("format") != CALLERS_FORMAT or body.get("version") != version:
        return None
    rows = body.get("callers")
    if not isinstance(rows, list):
        return None
    out: Callers = {}
    for row in rows:
        if not (isinstance(row, list) and len(row) == 3 and isinstance(row[2], list)):
            return None
        path, qualname, sources = row
        if not (isinstance(path, str) and isinstance(qualname, str)):
            return None
        keys: list[Key] = []
        for source in sources:
            if not (isinstance(source, list) and len(source) == 2
                    and isinstance(source[0], str) and isinstance(source[1], str)):
                return None
            keys.append((source[0], source[1]))
        out[(path, qualname)] = keys
    return out


def read_callers(store: IndexStore, secret: bytes | None) -> Callers | None:
    """The callers stored for this index version, or None (a miss: resolve and write them)."""
    path = callers_file(store, secret)
    if path is None:
        return None
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            log.warning("%s: too large for stored callers, ignored", path)
            return None
        body = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.info("%s: unreadable stored callers ignored: %s", path, exc)
        return None
    return _decode(body, index_version(store))


def write_callers(store: IndexStore, callers: Mapping[Key, Sequence[Key]], secret: bytes | None) -> bool:
    """Store `callers` for this index version (replacing what the location held); False when not kept."""
    path = callers_file(store, secret)
    if path is None:
        return False
    body = {"format": CALLERS_FORMAT, "version": index_version(store),
            "callers": [[p, q, [list(k) for k in keys]] for (p, q), keys in callers.items()]}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, json.dumps(body, separators=(",", ":")), mode=PRIVATE)
    except OSError as exc:  # a read-only home: the next process resolves again, nothing else is lost
        log.info("callers not stored at %s: %s", path, exc)
        return False
    _prune(path.parent)
    return True


_OURS = re.compile(r"^[0-9a-f]{64}\.json$")


def _prune(folder: Path, keep: int = MAX_KEPT) -> None:
    """Keep the `keep` most recently written files: one per index location, and a user who indexes many
    throw-away checkouts (a CI runner, a benchmark asking each commit's index) must not fill their home.
    Only regular files named as this module names them are touched."""
    try:
        entries = [e for e in os.scandir(folder) if _OURS.match(e.name) and e.is_file(follow_symlinks=False)]
        entries.sort(key=lambda e: e.stat(follow_symlinks=False).st_mtime_ns, reverse=True)
        for old in entries[keep:]:
            os.unlink(old.path)
    except OSError as exc:  # another process pruned first, or the folder went away: nothing to keep clean
        log.debug("callers folder not pruned: %s", exc)


_HEAD = re.compile(rb'^\{"format":(\d+),"version":"([0-9a-f]{64})"')


def keep_callers(config: Config, callers: Mapping[Key, Sequence[Key]]) -> bool:
    """After a build published the index: store the callers of its graph for the asks to come, unless the
    file already holds this version (a build that changed nothing rewrites nothing). False: not stored."""
    from generator.index.store import open_index
    from sourcebook.errors import IndexStoreError
    from sourcebook.local_key import local_key

    try:
        store = open_index(config, embedder=None)
    except IndexStoreError as exc:
        log.info("callers not stored: %s", exc)
        return False
    secret = local_key()
    path = callers_file(store, secret)
    if path is None:
        return False
    try:
        with path.open("rb") as fh:
            head = _HEAD.match(fh.read(128))
    except OSError:
        head = None
    if head is not None and int(head[1]) == CALLERS_FORMAT and head[2].decode() == index_version(store):
        return True
    return write_callers(store, callers, secret)
