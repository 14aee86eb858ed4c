"""One lock per output directory: runs that write the same wiki and index take turns.

Two `sourcebook build` (or `index`) runs of one repository at once used to race on every file under the
output directory and commit conflicting LanceDB versions (a raw "Retryable commit conflict" traceback and
doubled rows). Every writer holds `<out_dir>/.lock` (an OS file lock through filelock: released by the
kernel when the process dies, so a killed run never leaves it stuck) for the whole run; a second run waits
for it, or with a wait limit exits with one line.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sourcebook.config import DEFAULT_OUT_DIR
from sourcebook.errors import ConfigError, LockError

log = logging.getLogger(__name__)

LOCK_FILE = ".lock"
# The default output folder keeps itself out of git, as pytest's and ruff's caches do: a wiki, a site and
# an index rebuilt from the code are outputs, and committing them would also commit caches and page state.
GITIGNORE = "# Written by sourcebook: its output stays out of git (delete this file to commit it).\n*\n"


def prepare_out_dir(out_dir: Path) -> Path:
    """Create the output directory (and parents) or raise ConfigError saying in one line why it cannot be.

    A `.sourcebook` folder created here gets a `.gitignore` of `*`; a folder that was there already (maybe
    committed on purpose) and one named with --out are left as they are."""
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"{out_dir}: the output directory exists and is not a directory; remove it or "
                          "pass --out DIR")
    created = not out_dir.exists()
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        if created and out_dir.name == DEFAULT_OUT_DIR:
            (out_dir / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{out_dir}: cannot create the output directory ({exc.strerror or exc})") from exc
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise ConfigError(f"{out_dir}: the output directory is not writable")
    return out_dir


@contextmanager
def output_lock(out_dir: Path, *, wait: float | None = None) -> Iterator[None]:
    """Hold the output directory's lock for the block. `wait`: seconds to wait for another run (None: as
    long as it takes; 0: not at all); past it, LockError."""
    from filelock import FileLock, Timeout

    path = prepare_out_dir(out_dir) / LOCK_FILE
    lock = FileLock(path)
    try:
        try:
            lock.acquire(timeout=0)
        except Timeout:
            if wait is not None and wait <= 0:
                raise
            log.warning("%s: another sourcebook run is writing this output directory; waiting for it to "
                        "finish", out_dir)
            lock.acquire(timeout=-1 if wait is None else wait)
    except Timeout as exc:
        raise LockError(f"{out_dir}: another sourcebook run is writing this output directory; try again "
                        "when it has finished") from exc
    except OSError as exc:
        raise ConfigError(f"{path}: cannot lock the output directory ({exc.strerror or exc})") from exc
    try:
        yield
    finally:
        lock.release()
