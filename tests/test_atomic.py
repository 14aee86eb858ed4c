"""sourcebook/atomic.py: a replaced file is whole or untouched, and no temp file outlives a write."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from sourcebook.atomic import PRIVATE, atomic_copy, atomic_write_bytes, atomic_write_text, replace_with


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_writes_replace_whole_files_with_the_mode_asked_for(tmp_path: Path) -> None:
    page = tmp_path / "docs" / "a.md"
    atomic_write_text(page, "one\r\ntwo ü\n")
    assert page.read_bytes() == "one\r\ntwo ü\n".encode()  # no newline translation on any platform
    assert _mode(page) == 0o644
    atomic_write_bytes(page, b"new", mode=PRIVATE)
    assert page.read_bytes() == b"new"
    assert _mode(page) == 0o600
    copy = tmp_path / "c.js"
    atomic_copy(page, copy)
    assert copy.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a.md", "c.js", "docs"]


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_text("old", encoding="utf-8")

    def half_then_fail(tmp: Path) -> None:
        tmp.write_text("half", encoding="utf-8")
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        replace_with(target, half_then_fail)
    assert target.read_text(encoding="utf-8") == "old"
    assert os.listdir(tmp_path) == ["state.json"]
    with pytest.raises(UnicodeEncodeError):
        atomic_write_text(target, "\udcff")  # a lone surrogate: refused before anything is replaced
    assert os.listdir(tmp_path) == ["state.json"]
    assert target.read_text(encoding="utf-8") == "old"


def test_a_temp_file_left_under_the_chosen_name_is_neither_used_nor_removed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sourcebook.atomic as atomic

    target = tmp_path / "page.md"
    left = tmp_path / ".page.md.1-left.tmp"  # a killed process's, under the name this write draws first
    left.write_bytes(b"someone else's")
    names = iter([left, tmp_path / ".page.md.2-ours.tmp"])
    monkeypatch.setattr(atomic, "_temp_path", lambda path: next(names))
    atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new"
    assert left.read_bytes() == b"someone else's"
    assert sorted(os.listdir(tmp_path)) == [".page.md.1-left.tmp", "page.md"]
