"""The answer side's reference graph: loaded from the analysis the index stores vs re-parsed from its texts.

    .venv/bin/python bench/graph_load.py [--runs 3] REPO [REPO ...]

Each REPO must already be indexed (`sourcebook index REPO`). Prints, per repository, the median seconds of
`load_analysis(store).graph` (what serve, mcp and the CLI tools do now) next to parsing every indexed file's
text and building the graph from those facts (what they did before the analysis was stored with the index).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator.analyze.facts import SourceFile
from generator.analyze.graph import build_graph
from generator.analyze.parse import extract
from generator.index.store import IndexStore, open_index
from generator.index.stored_analysis import load_analysis
from generator.index.table_writes import existing_rows
from sourcebook.config import load_config


def _reparsed(store: IndexStore) -> None:
    rows = existing_rows(store.table("files"), ["path", "sha", "language", "kind", "size", "text"])
    facts = [extract(SourceFile(r["path"], r["language"] or None, int(r["size"] or 0), r["sha"],
                                r["kind"] or "code"), (r["text"] or "").encode("utf-8")) for r in rows]
    build_graph(facts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    print(f"{'repo':<12} {'files':>6} {'re-parse s':>11} {'stored s':>9}")
    for repo in args.repos:
        store = open_index(load_config(repo), embedder=None)
        stored: list[float] = []
        reparsed: list[float] = []
        files = 0
        for _ in range(args.runs):
            started = time.perf_counter()
            analysis = load_analysis(store)
            _ = analysis.graph
            stored.append(time.perf_counter() - started)
            files = len(analysis.facts)
            started = time.perf_counter()
            _reparsed(store)
            reparsed.append(time.perf_counter() - started)
        print(f"{repo.name:<12} {files:>6} {statistics.median(reparsed):>11.2f} "
              f"{statistics.median(stored):>9.2f}")


if __name__ == "__main__":
    main()
