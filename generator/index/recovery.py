"""Damage to an index on this machine: found before a run uses it, set aside, and rebuilt by that run.

Why: a Lance data file or a full-text index file that a disk, a crash or a stray edit damaged used to keep
every later `build`/`index` failing (a traceback at the first read) and search degraded until the user
deleted the index by hand; a damaged full-text index even survived runs that had nothing to write (the
"unchanged since its last publish" shortcut). Now a writer first checks the published state:

- every table opens at the version the meta row names (its manifest reads), and
- every data, deletion and index file of those versions matches the size and SHA-256 the publishing run
  recorded in the meta row (`sums`); a file whose size and mtime are those recorded is taken as unchanged
  (the stat shortcut git uses), so a check is a stat per file, and only a touched file is hashed again.

Damage found (or a read failing with a decode error mid-run, for what no checksum covers) moves the whole
index folder aside, to `<index>.damaged-<UTC time>` next to it (kept for inspection: never deleted), with
one warning line, and the run builds a fresh index. Readers keep reporting an outage (degraded) until then,
and serve the new index once it is published (answer/serving/repo_state.py re-opens on a new meta row).

Only an index at a local path is set aside: a bucket has no folder to rename and a failing read there is
as likely a network fault as damage (the run reports it and leaves the index alone).
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

CHECKED = ("data file", "deletion file", "index file")  # manifests and transactions fail to open instead
_HASH_CHUNK = 1 << 20


def lance_module() -> Any:
    from generator.index.reader import lance_module as lance

    return lance()


def _local(uri: str) -> bool:
    return "://" not in uri


def table_files(uri: str, table: str, version: int) -> list[str]:
    """The data, deletion and index files (relative to the index folder) of `table` at `version`."""
    from generator.index.reader import table_uri

    ds = lance_module().dataset(table_uri(uri, table), version=int(version))
    rows = ds.tracked_files(min_version=int(version)).read_all().to_pylist()
    return sorted(f"{table}.lance/{r['path']}" for r in rows
                  if int(r["version"]) == int(version) and r["type"] in CHECKED)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while chunk := fh.read(_HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def file_sums(uri: str, versions: Mapping[str, int], previous: Mapping[str, Any] | None) -> dict[str, list]:
    """{relative path: [size, mtime_ns, sha256]} of every checked file of the tables at `versions`: what a
    later run verifies. Lance never rewrites a file, so a file recorded by `previous` with the same size and
    mtime keeps its digest (a run hashes only the files it wrote). {} for a bucket."""
    if not _local(uri):
        return {}
    known = dict(previous or {})
    out: dict[str, list] = {}
    root = Path(uri)
    for table, version in sorted(versions.items()):
        for rel in table_files(uri, table, version):
            path = root / rel
            st = path.stat()
            old = known.get(rel)
            if isinstance(old, list) and len(old) == 3 and old[:2] == [st.st_size, st.st_mtime_ns]:
                out[rel] = old
            else:
                out[rel] = [st.st_size, st.st_mtime_ns, _sha256(path)]
    return out


def find_damage(uri: str, state: Mapping[str, Any]) -> str | None:
    """Why the published index at local `uri` is damaged (one line), or None when every table opens at its
    pinned version and every recorded file still has its recorded size and digest."""
    from generator.index.reader import open_table

    versions = state.get("versions") or {}
    for table, version in sorted(versions.items()):
        try:
            open_table(uri, table, int(version), {})
        except (OSError, ValueError, RuntimeError) as exc:
            return f"table {table} does not open at version {version} ({_short(exc)})"
    root = Path(uri)
    sums = state.get("sums") or {}
    for rel, record in sorted(sums.items()):
        if not (isinstance(record, list) and len(record) == 3):
            continue
        path = root / rel
        try:
            st = path.stat()
        except OSError:
            return f"{rel} is missing"
        if st.st_size != record[0]:
            return f"{rel} has {st.st_size} bytes, {record[0]} were written"
        if st.st_mtime_ns != record[1] and _sha256(path) != record[2]:
            return f"{rel} does not match the checksum written with it"
    return None


def probe(uri: str, state: Mapping[str, Any]) -> str | None:
    """A full read of every table at its pinned version (every column of every row, and one full-text
    query where there is a full-text index): why it fails, or None. For a failure mid-run that no checksum
    explains: a decode error here is damage, not an outage of the storage."""
    from generator.index.reader import open_table

    for table, version in sorted((state.get("versions") or {}).items()):
        try:
            tbl = open_table(uri, table, int(version), {})
            for _batch in tbl._ds.to_batches():
                pass
            if table != "build_cache" and any(
                    "tokens" in (ix.get("fields") or []) for ix in tbl._ds.list_indices()):
                tbl.match("sourcebook", "tokens", ["tokens"], limit=1)
        except (OSError, ValueError, RuntimeError) as exc:
            return f"table {table} does not read ({_short(exc)})"
        except Exception as exc:  # pyarrow's ArrowException, without importing pyarrow here
            if type(exc).__module__.startswith("pyarrow"):
                return f"table {table} does not read ({_short(exc)})"
            raise
    return None


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 160 else text[:157] + "..."


def set_aside(uri: str, reason: str) -> Path:
    """Move the index folder to `<uri>.damaged-<UTC time>` (kept, never deleted) with one warning line;
    returns where it went. Raises OSError when it cannot be moved."""
    src = Path(uri)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    dest = src.with_name(f"{src.name}.damaged-{stamp}")
    n = 1
    while dest.exists():
        n += 1
        dest = src.with_name(f"{src.name}.damaged-{stamp}-{n}")
    os.replace(src, dest)
    log.warning("the index at %s is damaged (%s): moved to %s and rebuilt", uri, reason, dest)
    return dest


def recover(uri: str, state: Mapping[str, Any] | None, *, deep: bool = False) -> str | None:
    """Set the published index at `uri` aside when it is damaged: the reason (for the run's report), or None
    when it is sound, absent, or not on this machine. `deep`: also read every table in full (after a read
    failed mid-run). An index that cannot be moved aside is left as it is (the run then fails as before)."""
    if not _local(uri) or not Path(uri).is_dir():
        return None
    if state is None:
        # no readable meta row: an index that never published (nothing to protect), or a damaged meta table
        if not (Path(uri) / "meta.lance").exists():
            return None
        from generator.index.reader import read_state

        try:
            read_state(uri, {})
            return None
        except Exception as exc:  # noqa: BLE001 - any failure to read the publish pointer is damage here
            reason: str | None = f"its meta table does not read ({_short(exc)})"
    else:
        reason = find_damage(uri, state) or (probe(uri, state) if deep else None)
    if reason is None:
        return None
    try:
        set_aside(uri, reason)
    except OSError as exc:
        log.warning("the index at %s is damaged (%s) and cannot be moved aside: %s", uri, reason, exc)
        return None
    return reason
