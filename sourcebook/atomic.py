"""Atomic file writes: the one way sourcebook replaces a file that someone may be reading.

Every write goes to a temp file in the target's own directory (same filesystem, so the final rename is
atomic) and then takes the target's place with os.replace: a reader, a concurrent build or a killed process
sees the old file or the new one, never half of one, and a failure leaves no temp file behind. The temp
name is a dotfile ending in `.tmp`, so MkDocs, globs for `*.md`/`*.json` and the site never pick one up.

Both halves (generator/ and answer/) import this; it imports nothing of theirs.
"""

from __future__ import annotations

import itertools
import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path

SHARED = 0o644  # pages, the search index, the ledger: meant to be read by whoever serves or inspects them
PRIVATE = 0o600  # caches that hold answers or build inputs stay the owner's


def replace_with(path: Path, fill: Callable[[Path], object], *, mode: int | None = SHARED) -> None:
    """Let `fill(tmp)` write the new content to a fresh temp path next to `path`, then put it in place.

    `tmp` does not exist when `fill` is called (so `fill` may hard-link or copy to it). `mode` None leaves
    the mode `fill` made (a hard link must not change the mode of the file it shares). The folder of
    `path` is made when it is missing.
    """
    for attempt in range(3):
        tmp = _temp_path(path)
        try:
            try:
                fill(tmp)
            except FileNotFoundError:
                # the folder was missing when `fill` ran; another process writing a page of the same new
                # folder may have made it since (so it can exist now): make sure it does, and try once
                # more. A second miss is not the folder's (atomic_copy's source is gone): it is raised.
                path.parent.mkdir(parents=True, exist_ok=True)
                fill(tmp)
            if mode is not None:
                os.chmod(tmp, mode)
            os.replace(tmp, path)
            return
        except FileExistsError as exc:
            if exc.filename == str(tmp):  # left by a killed process that had this id: not ours to remove
                if attempt < 2:
                    continue
                raise
            tmp.unlink(missing_ok=True)
            raise
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


class _TempNames:
    """Temp names unique to this process: its id, a random tag made once per process (a forked worker makes
    its own) and a counter. Cheaper than tempfile.mkstemp (which creates, closes and then needs the file
    removed again, and draws a random name each time): a build writes tens of thousands of files."""

    counter = itertools.count()
    owner = (0, "")


def _temp_path(path: Path) -> Path:
    pid = os.getpid()
    if _TempNames.owner[0] != pid:
        _TempNames.owner = (pid, secrets.token_hex(4))
    return path.parent / f".{path.name}.{pid}-{_TempNames.owner[1]}-{next(_TempNames.counter)}.tmp"


def atomic_write_bytes(path: Path, data: bytes, *, mode: int | None = SHARED) -> None:
    """Write `data` to `path` atomically."""
    def fill(tmp: Path) -> None:
        with open(tmp, "xb") as fh:
            fh.write(data)

    replace_with(path, fill, mode=mode)


def atomic_write_text(path: Path, text: str, *, mode: int | None = SHARED) -> None:
    """Write `text` to `path` atomically, as UTF-8 with '\\n' line ends on every platform."""
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode)


def atomic_copy(source: Path, path: Path, *, mode: int | None = SHARED) -> None:
    """Copy `source` to `path` atomically."""
    def fill(tmp: Path) -> None:
        with open(source, "rb") as src, open(tmp, "xb") as dst:
            shutil.copyfileobj(src, dst)

    replace_with(path, fill, mode=mode)
