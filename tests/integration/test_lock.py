"""One lock per output directory (sourcebook/lock.py): concurrent runs take turns, never race the index."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from generator.index.store import DATA_TABLES, open_index
from sourcebook.config import load_config
from sourcebook.errors import LockError
from sourcebook.lock import output_lock

FILES = {
    "sourcebook.toml": '[embed]\nprovider = "none"\n',
    "pkg/__init__.py": "",
    "pkg/core.py": 'def parse(text):\n    """Parse text."""\n    return text.split()\n',
    "pkg/app.py": "from pkg.core import parse\n\n\ndef run(text):\n    return parse(text)\n",
    "README.md": "# Demo\n\nParses text.\n",
}


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "sourcebook.cli", *args]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}


def _counts(repo: Path) -> dict[str, int]:
    store = open_index(load_config(repo, env={}), embedder=None)
    return {name: store.table(name).count_rows() for name in DATA_TABLES}


def test_a_held_lock_makes_a_second_run_exit_with_one_line_or_wait(
        make_repo: Callable[..., Path]) -> None:
    repo = make_repo(FILES)
    config = load_config(repo, env={})
    with output_lock(config.out_dir):
        with pytest.raises(LockError), output_lock(config.out_dir, wait=0):
            pass
        for args in (("build", str(repo), "--lock-wait", "0"), ("index", str(repo), "--lock-wait", "0.3")):
            proc = subprocess.run(_cli(*args), capture_output=True, text=True, env=_env(), timeout=120,
                                  check=False)
            assert proc.returncode == LockError.exit_code, proc.stderr
            assert "Traceback" not in proc.stderr
            assert [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")] == [
                f"error: {config.out_dir}: another sourcebook run is writing this output directory; try "
                "again when it has finished"]
        waiting = subprocess.Popen(_cli("index", str(repo)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, env=_env())
        time.sleep(3)
        assert waiting.poll() is None  # it waits for the holder…
    _out, err = waiting.communicate(timeout=120)  # …and runs once the lock is released
    assert waiting.returncode == 0, err
    assert "waiting for it to finish" in err
    assert _counts(repo)["files"] == 5  # sourcebook.toml, README.md and the three Python files


def test_two_builds_at_once_converge_to_a_clean_builds_rows(make_repo: Callable[..., Path]) -> None:
    """`sourcebook build R & sourcebook build R` on a fresh repository: before the lock, a raw LanceDB
    'Retryable commit conflict' traceback and doubled rows that no later run removed."""
    repo = make_repo(FILES, name="raced")
    clean = make_repo(FILES, name="clean")
    procs = [subprocess.Popen(_cli("build", str(repo), "--no-site"), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=_env()) for _ in range(2)]
    results = [p.communicate(timeout=240) for p in procs]
    for proc, (_out, err) in zip(procs, results, strict=True):
        assert proc.returncode == 0, err
        assert "Traceback" not in err
    subprocess.run(_cli("build", str(clean), "--no-site"), check=True, capture_output=True, env=_env(),
                   timeout=240)
    assert _counts(repo) == _counts(clean)
    shutil.rmtree(clean)
