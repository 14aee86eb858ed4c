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


def test_a_folder_another_process_makes_between_the_miss_and_the_check_is_used(tmp_path: Path) -> None:
    # the interleaving that failed 2 of 9 LLM builds of flask at 4 workers on a loaded machine: this
    # process's open() missed the new folder, a worker made it for a sibling page, then this one looked
    page = tmp_path / "files" / "tests" / "static" / "config.json.md"
    calls = []

    def fill(tmp: Path) -> None:
        calls.append(tmp)
        if len(calls) == 1:
            page.parent.mkdir(parents=True)  # the other process, just after this one's miss
            raise FileNotFoundError(2, "No such file or directory", str(tmp))
        tmp.write_bytes(b"page")

    replace_with(page, fill)
    assert page.read_bytes() == b"page"
    assert os.listdir(page.parent) == ["config.json.md"]


def test_processes_writing_pages_of_one_new_folder_at_once_all_land(tmp_path: Path) -> None:
    import multiprocessing

    folders = [tmp_path / f"f{n}" / "deep" for n in range(400)]
    context = multiprocessing.get_context("spawn")  # a clean interpreter: this test process runs threads
    with context.Pool(4) as pool:
        pool.starmap(_write_pages, [(folders, tag) for tag in range(4)])
    for folder in folders:
        assert sorted(os.listdir(folder)) == [f"page{tag}.md" for tag in range(4)]


def _write_pages(folders: list[Path], tag: int) -> None:
    for folder in folders:
        atomic_write_text(folder / f"page{tag}.md", str(tag))


def test_a_missing_source_is_still_an_error_when_its_folder_exists(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        atomic_copy(tmp_path / "gone.md", tmp_path / "out" / "copy.md")
    assert os.listdir(tmp_path / "out") == []
