"""Builds survive every file name: a name with a control character (DEL, C1, U+2028, a tab, a newline, a
bidirectional override) or one that is not UTF-8 is skipped with its reason, escaped in the record, and the
rest of the repository is built as usual (real CLI, real `mkdocs build`, with git listing the files and
without). Names are made as bytes in a temporary folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.analyze.scan import path_reason, printable_path

ROOT = Path(__file__).resolve().parents[2]

BAD_NAMES: dict[bytes, str] = {
    os.fsencode("del\x7fname.py"): "control character in file name",
    os.fsencode("c1\x85name.py"): "control character in file name",
    os.fsencode("ls\u2028name.py"): "control character in file name",
    os.fsencode("tab\tname.py"): "control character in file name",
    os.fsencode("nl\nname.py"): "control character in file name",
    os.fsencode("rtl\u202egnp.py"): "control character in file name",
    b"bad\xff\xfename.py": "file name not UTF-8",
}
SOURCE = b'def odd():\n    """An oddly named module\'s one function."""\n    return 2\n'


def _make_repo(root: Path) -> Path:
    pkg = os.fsencode(root / "pkg")
    os.makedirs(pkg)
    (root / "README.md").write_text("# Names\n\nA repository whose files have odd names.\n", encoding="utf-8")
    (root / "pkg" / "__init__.py").write_text('"""The package."""\n', encoding="utf-8")
    (root / "pkg" / "good.py").write_text('def good():\n    """The well-named function."""\n    return 1\n',
                                          encoding="utf-8")
    for name in BAD_NAMES:
        with open(os.path.join(pkg, name), "wb") as handle:
            handle.write(SOURCE)
    odd_dir = os.path.join(os.fsencode(root), b"dir\x7f")  # a folder with a control character: all below it
    os.makedirs(odd_dir)
    with open(os.path.join(odd_dir, b"inner.py"), "wb") as handle:
        handle.write(SOURCE)
    return root


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1", "SOURCEBOOK_EMBEDDER": "none"}
    for name in ("SOURCEBOOK_LLM_BASE_URL", "SOURCEBOOK_LLM_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "sourcebook.cli", *args], cwd=cwd, env=env, check=False,
                          capture_output=True, text=True, errors="replace", timeout=600)


@pytest.mark.parametrize("git", [False, True], ids=["walk", "git"])
def test_odd_file_names_are_skipped_with_a_reason_and_the_build_succeeds(tmp_path: Path, git: bool) -> None:
    repo = _make_repo(tmp_path / "repo")
    if git:
        if shutil.which("git") is None:
            pytest.skip("git is not installed")
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    done = _cli(["build", str(repo)], repo)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    out = repo / ".sourcebook"
    # the well-named files are built; none of the odd ones has a page
    assert (out / "site" / "files" / "pkg" / "good.py.html").is_file()
    pages = sorted(p.name for p in (out / "docs" / "files" / "pkg").iterdir())
    assert pages == ["__init__.py.md", "good.py.md"], pages
    assert not (out / "docs" / "files" / "dir\x7f").exists()
    # each odd name is reported once, escaped, with its reason
    for name, reason in BAD_NAMES.items():
        shown = printable_path("pkg/" + os.fsdecode(name))
        assert f"{shown}: skipped ({reason})" in done.stderr, shown
    assert "dir\\x7f/inner.py: skipped (control character in file name)" in done.stderr
    summary = " ".join((done.stdout + done.stderr).split())  # the summary table wraps its lines
    assert "8 files: 7 control character in file name, 1 file name not UTF-8" in summary
    # a second run (caches read back, the index updated) is as clean
    again = _cli(["build", str(repo)], repo)
    assert again.returncode == 0, again.stderr[-3000:]
    indexed = _cli(["index", str(repo)], repo)
    assert indexed.returncode == 0, indexed.stderr[-3000:]


def test_path_reason_names_each_kind_and_lets_ordinary_names_through() -> None:
    for name, reason in BAD_NAMES.items():
        assert path_reason(os.fsdecode(name)) == reason
    for ordinary in ("src/main.py", "docs/naïve café.md", "日本語/ファイル.rs", "emoji 🙂.txt",
                     "a b/c-d_e.js"):
        assert path_reason(ordinary) is None
        assert printable_path(ordinary) == ordinary
    assert printable_path(os.fsdecode(b"bad\xff.py")) == "bad\\xff.py"
    assert printable_path("ls\u2028x") == "ls\\u2028x"
