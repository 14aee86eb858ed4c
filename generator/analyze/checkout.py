"""The checkout a run reads: its git HEAD and where it came from (the remote as host/owner/repo, the folder
inside the work tree). The index records them (generator/index/store.py) and the pages' source links read
the remote (generator/pages/remote.py); no credentials or local paths are kept."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

# scp-like ssh remotes: git@host:owner/repo.git
_SCP = re.compile(r"^(?:[\w.-]+@)?([\w.-]+):(?!//)(.+)$")


def owner_repo(remote: str) -> tuple[str, str] | None:
    """(host, "owner/repo") of an https or ssh remote URL; None for local paths and other schemes."""
    remote = remote.strip()
    parts = urlsplit(remote)
    if parts.scheme in {"https", "http", "ssh", "git"}:
        host, path = parts.hostname or "", parts.path
    elif not parts.scheme or len(parts.scheme) > 1:  # `git@host:o/r` (a one-letter scheme is a drive)
        m = _SCP.match(remote)
        if not m or "/" in m.group(1) or remote.startswith(("/", ".")):
            return None
        host, path = m.group(1), m.group(2)
    else:
        return None
    path = path.strip("/").removesuffix(".git").strip("/")
    if not host or path.count("/") < 1 or any(not seg or seg in {".", ".."} for seg in path.split("/")):
        return None
    if not re.fullmatch(r"[\w.~/-]+", path) or not re.fullmatch(r"[\w.-]+", host):
        return None
    return host.lower(), path


def git(root: Path, *args: str) -> str:
    """The output of `git -C root ARGS` ("" when git fails, is missing or takes over 10 s)."""
    try:
        proc = subprocess.run(["git", "-c", "core.fsmonitor=false", "-C", str(root), *args],
                              capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout.strip() if proc.returncode == 0 else ""


def head_commit(root: Path) -> str:
    """The commit checked out at `root` ("" outside git, or before the first commit)."""
    return git(root, "rev-parse", "--verify", "HEAD^{commit}")


def checkout_identity(root: Path) -> tuple[str, str]:
    """(remote, subdir) of the checkout at `root`: its origin (else first) remote as "host/owner/repo"
    ("" without a forge-style one: no credentials or local paths are kept), and `root`'s folder inside
    its git work tree ("" at the top, or outside git). What an index records of the place it was built
    from; the same on every runner, unlike the absolute path."""
    remotes = git(root, "remote").split()
    found = None
    if remotes:
        found = owner_repo(git(root, "remote", "get-url", "origin" if "origin" in remotes else remotes[0]))
    return ("/".join(found) if found else "", git(root, "rev-parse", "--show-prefix").strip("/"))
