"""Where `sourcebook setup` keeps the offline assets (the embedding table, mermaid.min.js), and where every
command looks for them.

The data folder is `<sys.prefix>/share/sourcebook`: the environment sourcebook is installed in. That is
`.venv/` for `make setup`, the tool's own environment for `pipx install` or `uv tool install`, the virtual
environment for a plain `pip install`. Chosen over a per-user folder because the assets belong to the code
that reads them: the table's format version and the Mermaid pin come with a release, so two installs of
different versions never read each other's files, and removing the install (`pipx uninstall`, `make clean`)
removes them too. When that prefix cannot be written (a system-wide install used by another user), setup
writes to the user's data folder instead ($XDG_DATA_HOME/sourcebook, default ~/.local/share/sourcebook), which
every command also reads. $SOURCEBOOK_DATA_DIR, when set, comes first for both.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path


def prefix_home() -> Path:
    """The data folder of the environment this sourcebook runs in."""
    return Path(sys.prefix) / "share" / "sourcebook"


def user_home(env: Mapping[str, str] | None = None) -> Path | None:
    """The user's data folder ($XDG_DATA_HOME/sourcebook, else ~/.local/share/sourcebook); None: no home."""
    env = os.environ if env is None else env
    if env.get("XDG_DATA_HOME"):
        return Path(env["XDG_DATA_HOME"]) / "sourcebook"
    home = env.get("HOME") or (str(Path.home()) if env is os.environ else "")
    return Path(home) / ".local" / "share" / "sourcebook" if home else None


def data_homes(env: Mapping[str, str] | None = None) -> list[Path]:
    """Every data folder, in lookup order: $SOURCEBOOK_DATA_DIR, the install's prefix, the user's."""
    from sourcebook.settings import current

    data_dir = current(env).data_dir
    homes = [Path(data_dir)] if data_dir else []
    homes.append(prefix_home())
    user = user_home(env)
    if user is not None:
        homes.append(user)
    return list(dict.fromkeys(homes))


def writable(folder: Path) -> bool:
    """Whether `folder` exists and can be written, or could be created (its nearest existing parent can)."""
    probe = folder
    while not probe.exists():
        if probe.parent == probe:
            return False
        probe = probe.parent
    return probe.is_dir() and os.access(probe, os.W_OK | os.X_OK)


def write_home(env: Mapping[str, str] | None = None) -> Path:
    """The data folder setup writes to: the first of `data_homes` that can be written (else the first one,
    so that the error names the install's own folder)."""
    homes = data_homes(env)
    return next((home for home in homes if writable(home)), homes[0])


def find_asset(relative: str, env: Mapping[str, str] | None = None) -> Path | None:
    """The first data folder's `relative` file that exists, or None."""
    for home in data_homes(env):
        if (home / relative).is_file():
            return home / relative
    return None
