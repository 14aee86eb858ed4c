"""The index's read side (generator/index/reader.py, pylance) against LanceDB itself, on a real index in a
temp dir: same rows, same full-text scores, same nearest neighbours, same pinned versions; and a fresh
`sourcebook ask` process that answers without importing lancedb."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.index import store as ix
from generator.index.command import index_repository
from generator.index.reader import read_state
from generator.index.store import open_index, read_index_state
from sourcebook.config import load_config
from sourcebook.sql import prefix_filter
from tests.support.index_repos import SMALL_REPO as INDEX_FILES
from tests.support.index_repos import FakeEmbedder

FILES = {
    **{path: INDEX_FILES[path] for path in ("pkg/config.py", "pkg/app.py")},
    "pkg/server.py": "from pkg.app import create_app\n\n\ndef serve(port):\n    \"\"\"Serve the app.\"\"\"\n"
                     "    app = create_app()\n    return app, port\n",
    "docs/usage.md": ("# Usage\n\nCall create_app to build the application and load its config.\n\n"
                      "## Settings\n\nUse from_file to load settings from a file.\n"),
    "tests/test_app.py": "from pkg.app import create_app\n\n\ndef test_create_app():\n"
                         "    assert create_app()\n",
}
QUERIES = ["config load", "create app", "settings file", "serve port app", "nothing matches zzzq"]


def _embedder() -> FakeEmbedder:
    """Deterministic bag-of-words vectors (16 wide), so the semantic tier has something to rank."""
    return FakeEmbedder(dim=16, name="hash")


@pytest.fixture
def store(make_repo):
    from generator.analyze.analysis import analyze
    from generator.analyze.facts import PageRecord
    from generator.index.writer import update_index

    config = load_config(make_repo(FILES))
    analysis = analyze(config)
    pages = [PageRecord(id=f"files/{path}.md", kind="file", title=path, target_path=path,
                        summary=f"What {path} does.", markdown=f"# {path}\n\n{text}")
             for path, text in FILES.items()]
    pages.append(PageRecord(id="modules/pkg.md", kind="module", title="pkg", target_path="pkg",
                            summary="The app, its config and its server.", markdown="# pkg\n"))
    update_index(config, analysis.files, analysis.facts, pages, _embedder(), texts=analysis.texts,
                 manifests=analysis.manifests)
    return open_index(config, embedder=_embedder())


def _lancedb_fts(store, table, text, columns, limit, where=None):
    from lancedb.query import MatchQuery

    query = store.table(table).search(MatchQuery(text, "tokens"), query_type="fts")
    query = query.select([*columns, "_score"]).limit(limit)
    if where:
        query = query.where(where, prefilter=True)
    return query.to_arrow().to_pylist()


@pytest.mark.parametrize("table", ["chunks", "files", "pages", "symbols"])
def test_rows_and_counts_are_lancedbs(store, table: str) -> None:
    lancedb_table = store.table(table)
    assert store.count(table) == lancedb_table.count_rows()
    columns = ["path" if table != "pages" else "target_path", "tokens"]
    everything = lancedb_table.search().select(columns).limit(None).to_arrow().to_pylist()
    assert store.rows(table, columns) == everything
    assert store.columns(table, columns).to_pylist() == store.rows(table, columns)
    where = prefix_filter(columns[0], "pkg/")
    assert store.rows(table, columns, where) == (
        lancedb_table.search().select(columns).where(where).limit(None).to_arrow().to_pylist())
    assert store.rows(table, columns, where, limit=1) == store.rows(table, columns, where)[:1]


@pytest.mark.parametrize("table", ["chunks", "files", "pages", "symbols"])
def test_full_text_scores_are_lancedbs(store, table: str) -> None:
    path = "target_path" if table == "pages" else "path"
    columns = [path] if table in ("files", "pages") else ["path", "start_line", "end_line"]
    for text in QUERIES:
        for where in (None, prefix_filter(path, "pkg/"), prefix_filter(path, "docs/"), "kind = 'file'"):
            if where == "kind = 'file'" and table in ("files", "symbols"):
                continue
            ours = store.fts(table, text, columns, limit=5, where=where)
            theirs = _lancedb_fts(store, table, text, columns, 5, where)
            assert [(r[path], r["_score"]) for r in ours] == [(r[path], r["_score"]) for r in theirs]
    assert store.fts(table, "config", columns, limit=5)  # the comparison above is not all empty


@pytest.mark.parametrize("table", ["chunks", "pages"])
def test_nearest_neighbours_are_lancedbs(store, table: str) -> None:
    path = "target_path" if table == "pages" else "path"
    assert store.vector_dim(table) == _embedder().dim
    for text in QUERIES:
        vector = [float(x) for x in _embedder().embed([text])[0]]
        for where in (None, prefix_filter(path, "pkg/")):
            ours = store.nearest(table, vector, [path], limit=3, where=where)
            query = store.table(table).search(vector, query_type="vector")
            query = query.select([path, "_distance"]).limit(3)
            if where:
                query = query.where(where, prefilter=True)
            theirs = query.to_arrow().to_pylist()
            assert [(r[path], round(r["_distance"], 5)) for r in ours] == [
                (r[path], round(r["_distance"], 5)) for r in theirs]
            assert ours


def test_a_reader_stays_on_its_pinned_versions(make_repo) -> None:
    root = make_repo(FILES)
    config = load_config(root)
    index_repository(config, embedder=None)
    before = open_index(config, embedder=None)
    paths = {r["path"] for r in before.rows("files", ["path"])}
    (root / "pkg" / "extra.py").write_text("def extra():\n    return 1\n")
    index_repository(config, embedder=None)
    assert {r["path"] for r in before.rows("files", ["path"])} == paths  # the store it opened: unchanged
    assert before.fts("files", "extra", ["path"], limit=5) == []
    after = open_index(config, embedder=None)
    assert {r["path"] for r in after.rows("files", ["path"])} == paths | {"pkg/extra.py"}
    state = read_index_state(config.index_location)
    assert state is not None
    assert state["versions"] == after.meta["versions"] != before.meta["versions"]
    assert ix.read_meta(ix.connect(config.index_location)) == state  # the reader's meta row is lancedb's


def test_no_meta_table_is_no_state(tmp_path: Path) -> None:
    assert read_state(str(tmp_path / "nothing-here"), {}) is None
    (tmp_path / "empty").mkdir()
    assert read_state(str(tmp_path / "empty"), {}) is None


def test_a_cold_ask_never_imports_lancedb(make_repo) -> None:
    """The one-shot process an agent shells out to: index, then ask in a fresh interpreter (the import
    trace lists every module it loaded)."""
    root = make_repo(FILES)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env = {k: v for k, v in env.items() if not k.startswith(("SOURCEBOOK_LLM", "OPENAI"))}
    subprocess.run([sys.executable, "-m", "sourcebook.cli", "index", str(root)], check=True, env=env,
                   capture_output=True, cwd=root.parent)
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "sourcebook.cli", "ask", "--json",
                           "--no-cache", "--path", str(root), "How is the config loaded from a file?"],
                          env=env, capture_output=True, text=True, cwd=root.parent, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    reply = json.loads(done.stdout)
    assert "pkg/config.py" in [c["path"] for c in reply["candidates"]]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    assert {"lance", "pyarrow"} <= imported
    assert not {m for m in imported if m.split(".")[0] == "lancedb"}
