"""A cold index run makes its rows in the build's processes (row_workers.py `open_row_workers`): workers
forked before LanceDB is imported make the chunk, file, page and build-cache rows (tokens, the pages' index
text, the static embedder's vectors, the secret checks) and this process writes them. What is published is
exactly what one process publishes; a run that updates an index, or a process that already holds LanceDB,
forks nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.build import build
from generator.index import row_workers
from sourcebook.config import load_config
from tests.support.index_repos import STREAM_REPO as FILES
from tests.support.index_repos import published

ROOT = Path(__file__).resolve().parents[2]

# a build in a fresh interpreter (no LanceDB imported yet, as the CLI runs it), two processes and items of two
# files or pages, so that even this small tree is spread; each process notes that it made rows
_CHILD = """
import json, os, sys
from pathlib import Path
import generator.index.build_cache as build_cache, generator.index.row_workers as row_workers
import generator.index.writer as index_writer
index_writer.FILES_PER_ITEM = index_writer.PAGES_PER_ITEM = row_workers.MIN_SPREAD_ITEMS = 2
build_cache.PAGES_PER_ITEM = 2
notes = Path(sys.argv[3])
def noted(name, fn):
    def made(*args):
        with notes.open("a") as out:
            out.write(f"{name} {os.getpid()}\\n")
        return fn(*args)
    return made
for name in ("chunk_row", "file_row", "page_row"):
    setattr(row_workers, name, noted(name, getattr(row_workers, name)))
build_cache._verdict = noted("cache", build_cache._verdict)
from generator.build import build
from sourcebook.config import load_config
config = load_config(Path(sys.argv[1]), overrides={"out_dir": sys.argv[2]})
index = build(config, site=False, site_workers=2).index
print(json.dumps({"pid": os.getpid(), "embedded": index.embedded, "cache": index.cache_written}))
"""


def test_a_cold_run_in_two_processes_publishes_what_one_process_does(make_repo, tmp_path: Path) -> None:
    repo = make_repo(FILES)
    one = load_config(repo, overrides={"out_dir": str(tmp_path / "one")})
    alone = build(one, site=False, site_workers=1).index
    assert alone is not None
    assert alone.embedder.startswith("static:")  # vectors made by the workers too
    notes = tmp_path / "notes"
    done = subprocess.run([sys.executable, "-c", _CHILD, str(repo), str(tmp_path / "two"), str(notes)],
                          capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "fork" not in done.stderr.lower()  # no LanceDB (or tokenizer) warning about a fork
    child = json.loads(done.stdout.strip().splitlines()[-1])
    made: dict[str, set[int]] = {}
    for line in notes.read_text().splitlines():
        kind, pid = line.split()
        made.setdefault(kind, set()).add(int(pid))
    for kind in ("chunk_row", "file_row", "page_row", "cache"):
        assert made[kind] - {child["pid"]}, f"no worker made {kind} rows"
    assert (child["embedded"], child["cache"]) == (alone.embedded, alone.cache_written)
    two = load_config(repo, overrides={"out_dir": str(tmp_path / "two")})
    assert published(two) == published(one)
    # what the run taught the pages' memo (generator/pages/index_inputs.py) is what one process taught it
    memo = Path("state") / "index-pages.json"
    assert (tmp_path / "two" / memo).read_text() == (tmp_path / "one" / memo).read_text()


def test_only_a_cold_run_in_a_process_without_lancedb_forks(
        make_repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import lancedb  # noqa: F401  - as any earlier index test in this process did

    assert not row_workers.forks_safely()  # a process holding LanceDB's runtime forks nothing
    repo = make_repo(FILES)
    config = load_config(repo, overrides={"out_dir": str(tmp_path / "out")})
    assert row_workers._row_processes(config, 4) == 1
    monkeypatch.setattr(row_workers, "forks_safely", lambda: True)  # as in a fresh CLI process
    assert row_workers._row_processes(config, 4) == 4  # no index yet
    assert row_workers._row_processes(config, 1) == 1
    build(config, site=False, site_workers=1)
    assert row_workers._row_processes(config, 4) == 1  # an index to update: its rows are few, made here
    remote = load_config(repo, overrides={"out_dir": str(tmp_path / "out"), "index_uri": "s3://bucket/index"})
    assert row_workers._row_processes(remote, 4) == 1
