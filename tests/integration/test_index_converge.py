"""An incremental index converges to a clean build's (issue 25, item 7): build, edit a file, revert it, and
every full-text score equals a clean build's. Rows deleted from a table used to stay in its full-text
statistics when the new rows were folded in (generator/index/writer.py `_has_deleted_rows`)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from generator.index import store as ix
from generator.index import writer as index_writer
from generator.index.tokens import token_text
from sourcebook.config import load_config

WORDS = ["parse", "render", "token", "cache", "request", "session", "cookie", "route", "blueprint",
         "config", "loader", "signal", "template", "context", "teardown", "handler", "stream", "buffer",
         "socket", "queue", "worker", "schedule", "retry", "backoff", "digest", "header", "encode", "decode",
         "archive", "mirror", "ledger", "batch"]
QUERIES = ("session cookie", "retry backoff schedule", "template render context", "stream buffer socket",
           "digest header encode")


def _files() -> dict[str, str]:
    """More files than FTS_SMALL_ROWS (a smaller table is rebuilt on every change), each its own words."""
    rnd = random.Random(25)
    out = {}
    for i in range(index_writer.FTS_SMALL_ROWS + 20):
        words = [rnd.choice(WORDS) for _ in range(rnd.randint(8, 40))]
        out[f"pkg/m{i:03d}.py"] = (f'def f{i}(x):\n    """{" ".join(words)}."""\n    return x + {i}\n')
    return out


def _cli(*args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    proc = subprocess.run([sys.executable, "-m", "sourcebook.cli", *args], capture_output=True, text=True,
                          env=env, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _scores(repo: Path, uri: Path) -> dict[str, Any]:
    """Every table's BM25 hits and scores for each query, and what `search` prints."""
    store = ix.open_index(load_config(repo, overrides={"index_uri": str(uri)}), embedder=None)
    out: dict[str, Any] = {}
    for q in QUERIES:
        for table, key in (("chunks", "id"), ("symbols", "id"), ("files", "path")):
            rows = store.fts(table, token_text(q), [key], limit=1000)
            out[f"{table}:{q}"] = sorted((round(r["_score"], 4), r[key]) for r in rows)
        hits = json.loads(_cli("search", q, "--type", "lexical", "--json", "--limit", "20",
                               "--path", str(repo), "--index-uri", str(uri)))["hits"]
        # equal BM25 scores are ordered as the rows are stored (an incremental run appends): the same hits
        out[f"search:{q}"] = sorted((h["path"], h["start_line"]) for h in hits)
    return out


def test_build_edit_revert_scores_equal_a_clean_build(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    files = _files()
    repo = make_repo(files)
    incremental, clean = tmp_path / "incremental", tmp_path / "clean"
    _cli("index", str(repo), "--index-uri", str(incremental))
    edited = repo / "pkg" / "m007.py"
    edited.write_text(files["pkg/m007.py"] + "\ndef g(x):\n    '''session cookie retry template.'''\n",
                      encoding="utf-8")
    _cli("index", str(repo), "--index-uri", str(incremental))
    edited.write_text(files["pkg/m007.py"], encoding="utf-8")
    _cli("index", str(repo), "--index-uri", str(incremental))
    _cli("index", str(repo), "--index-uri", str(clean))
    got, want = _scores(repo, incremental), _scores(repo, clean)
    assert all(want.values())
    for key in want:
        assert got[key] == want[key], key
