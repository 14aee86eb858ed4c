"""A damaged index (issue 25, item 7): the next `build`/`index`/`index --prune` sets it aside and rebuilds it
with one warning, instead of failing for ever; search meanwhile says it is degraded, and serves again once
rebuilt. Each case damages a real Lance file of a real index made by the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.servers import sourcebook_serve

FILES = {f"pkg/mod_{i}.py": (f'def parse_{i}(text):\n    """Parse record {i}."""\n    return text * {i}\n\n'
                             f'class Reader{i}:\n    def read(self):\n        return "quokka {i}"\n')
         for i in range(6)}
FILES["README.md"] = "# Demo\n\nA parser of quokka records.\n"


def _cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    return subprocess.run([sys.executable, "-m", "sourcebook.cli", *args], capture_output=True, text=True,
                          env=env, timeout=timeout, check=False)


def _search(repo: Path) -> dict[str, Any]:
    proc = _cli("search", "quokka reader", "--type", "lexical", "--json", "--path", str(repo))
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _scores(result: dict[str, Any]) -> list[tuple[str, float]]:
    return [(f["path"], f["score"]) for f in result["files"]]


def _flip(path: Path, *, keep_stat: bool = False) -> None:
    """Damage a file the way a bad disk does: its bytes change, its size does not (and with `keep_stat` its
    mtime neither, so only a failing read can tell)."""
    st = path.stat()
    data = bytearray(path.read_bytes())
    for i in range(64, len(data) - 64):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    if keep_stat:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _index_dir(repo: Path) -> Path:
    return repo / ".sourcebook" / "index"


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("WARNING")]


def _assert_set_aside(repo: Path, damaged: Path, proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = _warnings(proc.stderr)
    assert len(lines) == 1, proc.stderr
    assert "damaged" in lines[0]
    assert "moved to" in lines[0]
    aside = sorted((repo / ".sourcebook").glob("index.damaged-*"))
    assert len(aside) == 1
    # kept, not deleted: the damaged file is there for inspection
    assert (aside[0] / damaged.relative_to(_index_dir(repo))).read_bytes() == damaged_bytes[damaged]


damaged_bytes: dict[Path, bytes] = {}


def _damage(path: Path, *, keep_stat: bool = False) -> Path:
    _flip(path, keep_stat=keep_stat)
    damaged_bytes[path] = path.read_bytes()
    return path


@pytest.mark.parametrize("command", [("index", "--prune"), ("build", "--no-site")])
def test_a_damaged_data_file_is_set_aside_and_rebuilt(make_repo: Callable[..., Path],
                                                      command: tuple[str, ...]) -> None:
    repo = make_repo(FILES)
    assert _cli(*command, str(repo)).returncode == 0
    before = _scores(_search(repo))
    assert before
    damaged = _damage(next((_index_dir(repo) / "chunks.lance" / "data").glob("*.lance")))
    result = _search(repo)
    assert result["degraded"] is True
    assert result["files"] == []
    proc = _cli(*command, str(repo))
    _assert_set_aside(repo, damaged, proc)
    again = _search(repo)
    assert again["degraded"] is False
    assert _scores(again) == before
    # and the run after it has nothing to set aside
    proc = _cli(*command, str(repo))
    assert proc.returncode == 0, proc.stderr
    assert not _warnings(proc.stderr), proc.stderr


def test_damaged_full_text_files_are_rebuilt_though_no_source_changed(make_repo: Callable[..., Path]) -> None:
    # the run would be "unchanged since its last publish": the checksums recorded with the files find it
    repo = make_repo(FILES)
    assert _cli("index", str(repo)).returncode == 0
    before = _scores(_search(repo))
    invert = next((_index_dir(repo) / "chunks.lance" / "_indices").glob("*/part_0_invert.lance"))
    damaged = _damage(invert)
    assert _search(repo)["degraded"] is True
    proc = _cli("index", str(repo))
    _assert_set_aside(repo, damaged, proc)
    assert _scores(_search(repo)) == before


def test_damage_no_checksum_sees_is_found_by_the_failing_read(make_repo: Callable[..., Path]) -> None:
    # same size, same mtime: the stat shortcut trusts the file, the writer's first read of it fails
    repo = make_repo(FILES)
    assert _cli("index", str(repo)).returncode == 0
    before = _scores(_search(repo))
    damaged = _damage(next((_index_dir(repo) / "files.lance" / "data").glob("*.lance")), keep_stat=True)
    (repo / "pkg" / "mod_1.py").write_text(FILES["pkg/mod_1.py"] + "\n# edited\n", encoding="utf-8")
    proc = _cli("index", str(repo))
    _assert_set_aside(repo, damaged, proc)
    assert "rebuilt: damaged index" in proc.stdout
    assert sorted(p for p, _ in _scores(_search(repo))) == sorted(p for p, _ in before)


def test_a_warm_server_reports_the_damage_and_serves_the_rebuilt_index(
        make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    assert _cli("index", str(repo)).returncode == 0
    with sourcebook_serve(repo, env={"SOURCEBOOK_INDEX_REFRESH_S": "0.1"}) as url:
        def search() -> dict[str, Any]:
            with urllib.request.urlopen(f"{url}/search?q=quokka+reader&type=lexical", timeout=30) as r:
                return json.loads(r.read())

        served = search()
        assert served["files"]
        assert not served["degraded"]
        damaged = _damage(next((_index_dir(repo) / "files.lance" / "data").glob("*.lance")))
        damaged = _damage(next((_index_dir(repo) / "chunks.lance" / "data").glob("*.lance")))
        time.sleep(0.2)
        with urllib.request.urlopen(f"{url}/file?path=pkg/mod_2.py", timeout=30) as r:
            assert json.loads(r.read())["degraded"] is True
        proc = _cli("index", str(repo))
        _assert_set_aside(repo, damaged, proc)
        time.sleep(0.2)  # past index_refresh_s: the server looks at the meta row again
        again = search()
        assert again["degraded"] is False
        assert [f["path"] for f in again["files"]] == [f["path"] for f in served["files"]]
