"""Git repositories made inside a test: a git command with a fixed identity, and a first commit of the files
a test wrote (the history tests and the corpus checkout tests build small histories this way)."""

from __future__ import annotations

import subprocess
from pathlib import Path


def git(root: Path, *args: str) -> str:
    """`git -C root ARGS` with a committer identity (a fresh machine has none): its stdout, stripped."""
    command = ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@example.org", *args]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()


def first_commit(root: Path, message: str = "Initial import") -> str:
    """Make `root` a repository holding every file in it as one commit; that commit's hash."""
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", message)
    return git(root, "rev-parse", "HEAD")
