"""`sourcebook structure` (the CLI face of get_repo_structure) on a repository never indexed: an empty tree
and exit 0, as the contract says; an alias the local workspace does not list stays an error naming the
known ones (a typo, not a repository waiting for its first push as in an organisation:
tests/integration/test_orgs.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.support.repo_files import DEMO, write_files

ROOT = Path(__file__).resolve().parents[2]


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SOURCEBOOK_EMBEDDER": "none"}
    env.pop("SOURCEBOOK_INDEX_URI", None)
    return subprocess.run([sys.executable, "-m", "sourcebook.cli", *args], cwd=cwd, env=env, check=False,
                          capture_output=True, text=True, timeout=300)


def test_a_never_indexed_repository_is_an_empty_tree_from_the_cli(tmp_path: Path) -> None:
    root = write_files(tmp_path / "fresh", DEMO)
    done = _cli(["structure", "--json", "--path", str(root)], root)
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert (reply["indexed"], reply["files"], reply["symbols"]) == (False, 0, 0)
    assert reply["tree"] == {"name": "", "path": "", "type": "dir", "files": 0, "symbols": 0, "children": []}
    unknown = _cli(["structure", "--json", "--path", str(root), "--repo", "nosuch"], root)
    assert unknown.returncode != 0
    assert "unknown repository 'nosuch'; known repositories: fresh" in unknown.stderr
