"""Path safety: everything a caller types is checked as text and then against the real filesystem."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from answer.retrieval.paths import normalize_rel_path, resolve_in_root, under_scope
from sourcebook.errors import AccessError, UsageError


@pytest.fixture
def repo(make_repo):
    root = make_repo({"src/app.py": "x = 1\n", "README.md": "# r\n", "100%.txt": "percent\n"})
    outside = root.parent / "secret.txt"
    outside.write_text("secret\n")
    os.symlink(outside, root / "src" / "leak.txt")
    os.symlink(root.parent, root / "updir")
    os.symlink(root / "src" / "app.py", root / "alias.py")
    return root


@pytest.mark.parametrize("raw", [
    "../../etc/passwd", "..", "src/../../x", "src/..", "/etc/passwd", "\\etc\\passwd", "..\\..\\etc\\passwd",
    "C:\\Windows\\win.ini", "~/.ssh/id_rsa", "%2e%2e/%2e%2e/etc/passwd", "%2E%2E%2Fetc%2Fpasswd",
    "..%2fetc%2fpasswd", "%252e%252e%252fetc%252fpasswd", "%2fetc%2fpasswd", "src/app.py\x00.md",
    "src/app.py%00", "\uff0e\uff0e/etc/passwd", "%25252525252e%25252525252e/x",
])
def test_traversal_variants_are_refused(repo: Path, raw: str) -> None:
    with pytest.raises(AccessError):
        resolve_in_root(repo, raw)


def test_symlink_out_of_the_repository_is_refused(repo: Path) -> None:
    with pytest.raises(AccessError, match="outside"):
        resolve_in_root(repo, "src/leak.txt")
    with pytest.raises(AccessError, match="outside"):
        resolve_in_root(repo, "updir/secret.txt")


def test_symlink_inside_the_repository_is_allowed(repo: Path) -> None:
    resolved, rel = resolve_in_root(repo, "alias.py")
    assert resolved == (repo / "src" / "app.py").resolve()
    assert rel == "alias.py"


def test_clean_relative_paths_are_normalised(repo: Path) -> None:
    resolved, rel = resolve_in_root(repo, "./src//app.py")
    assert rel == "src/app.py"
    assert resolved.read_text() == "x = 1\n"
    # a literal percent sign that decodes to nothing dangerous is a legal file name
    assert resolve_in_root(repo, "100%.txt")[1] == "100%.txt"


def test_empty_path_is_a_usage_error_unless_root_is_allowed(repo: Path) -> None:
    with pytest.raises(UsageError):
        normalize_rel_path("")
    assert normalize_rel_path(".", allow_root=True) == ""
    assert resolve_in_root(repo, "", allow_root=True)[0] == repo.resolve()


def test_oversized_path_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        normalize_rel_path("a/" * 5000)


def test_under_scope() -> None:
    assert under_scope("src/flask/app.py", "src/flask")
    assert under_scope("src/flask/app.py", "./src/")
    assert under_scope("src/flask/app.py", None)
    assert not under_scope("tests/test_app.py", "src")
    assert not under_scope("src/app.py", "' OR 1=1 --")
