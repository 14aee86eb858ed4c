"""How long the reference graph takes to build: what a repository's first `sourcebook ask` waits for.

    PYTHONPATH=$PWD .venv/bin/python bench/refgraph_bench.py [--runs 3] [--facts DIR] [--dump DIR] REPO...

Per repository: scans and parses once (like `sourcebook build`, nothing written to it), then builds the graph
`--runs` times (build_graph, what load_analysis(store).graph does on the answer side's first question) and
prints the median seconds of the whole build and of its reference resolution (resolve_references), with the
number of symbol->symbol edges and of references they count. `--facts DIR` keeps each repository's parsed
facts there (a pickle) so that runs of two checkouts (before/after, with the other one's code on
PYTHONPATH) parse once; `--dump DIR` writes every edge with its count, sorted, to DIR/NAME.edges to diff.
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))  # a checkout on PYTHONPATH wins: before/after

from generator.analyze import graph as graph_module
from generator.analyze.analysis import analyze
from generator.analyze.facts import FileFacts
from generator.analyze.manifests import Manifests
from sourcebook.config import load_config


def _facts(repo: Path, keep: Path | None) -> tuple[list[FileFacts], Manifests]:
    saved = keep / f"{repo.name}.facts.pickle" if keep is not None else None
    if saved is not None and saved.exists():
        with saved.open("rb") as fh:
            loaded: tuple[list[FileFacts], Manifests] = pickle.load(fh)  # our own file, written below
        return loaded
    analysis = analyze(load_config(repo), save_cache=False)
    found = (list(analysis.facts.values()), analysis.manifests)
    if saved is not None:
        saved.parent.mkdir(parents=True, exist_ok=True)
        with saved.open("wb") as fh:
            pickle.dump(found, fh)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("repos", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--facts", type=Path, help="keep parsed facts here between invocations")
    parser.add_argument("--dump", type=Path, help="write DIR/NAME.edges: every edge with its count")
    args = parser.parse_args()
    resolve = graph_module.resolve_references
    last: dict[str, Any] = {}

    def timed(*a: Any) -> Any:  # resolve_references, timed and its result kept for the dump
        started = time.perf_counter()
        last["calls"] = resolve(*a)
        last["seconds"] = time.perf_counter() - started
        return last["calls"]

    graph_module.resolve_references = timed  # type: ignore[assignment]
    print(f"{'repo':<24} {'files':>6} {'graph s':>8} {'refs s':>8} {'edges':>7} {'refs':>8}")
    for repo in args.repos:
        facts, manifests = _facts(repo, args.facts)
        whole: list[float] = []
        refs: list[float] = []
        for _ in range(args.runs):
            started = time.perf_counter()
            graph_module.build_graph(facts, manifests)
            whole.append(time.perf_counter() - started)
            refs.append(last["seconds"])
        calls: dict[tuple[str, str], Counter[tuple[str, str]]] = last["calls"]
        edges = sorted((src, dst, n) for src, counted in calls.items() for dst, n in counted.items())
        print(f"{repo.name:<24} {len(facts):>6} {statistics.median(whole):>8.2f} "
              f"{statistics.median(refs):>8.2f} {len(edges):>7} {sum(n for *_, n in edges):>8}", flush=True)
        if args.dump is not None:
            args.dump.mkdir(parents=True, exist_ok=True)
            (args.dump / f"{repo.name}.edges").write_text(
                "".join(f"{s[0]}::{s[1]} -> {d[0]}::{d[1]} {n}\n" for s, d, n in edges))


if __name__ == "__main__":
    main()
