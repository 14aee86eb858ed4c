"""A `.sourcebook` folder a run creates keeps itself out of git (a `.gitignore` of `*` inside it); a folder
that was there already, or one named with --out, is left as it is (sourcebook/lock.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from generator.build import build
from sourcebook.config import DEFAULT_OUT_DIR, load_config
from sourcebook.lock import prepare_out_dir
from tests.support.repo_files import write_files

FILES = {"pkg/__init__.py": '"""Pkg."""\n', "pkg/core.py": '"""Core."""\n\n\ndef run():\n    """Run."""\n'}


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def test_a_build_leaves_git_status_clean_but_for_the_sources(tmp_path: Path) -> None:
    root = write_files(tmp_path / "repo", FILES)
    _git(root, "init", "-q")
    build(load_config(root), site=False, index=False)
    assert (root / ".sourcebook" / "docs").is_dir()  # the build wrote its pages there
    assert (root / ".sourcebook" / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    assert _git(root, "status", "--porcelain", "--untracked-files=all").split() == ["??", "pkg/__init__.py",
                                                                                   "??", "pkg/core.py"]


def test_an_existing_folder_and_a_chosen_one_get_no_gitignore(tmp_path: Path) -> None:
    committed = tmp_path / "a" / DEFAULT_OUT_DIR
    committed.mkdir(parents=True)
    prepare_out_dir(committed)
    assert not (committed / ".gitignore").exists()
    chosen = prepare_out_dir(tmp_path / "b" / "wiki")
    assert chosen.is_dir()
    assert not (chosen / ".gitignore").exists()

