"""Index build and query timings on a clean checkout (default: flask).

    .venv/bin/python bench/index_bench.py [REPO] [--embedder default|none|...] [--runs 3] [--queries N]

Prints medians of: cold index (scan + parse + chunks + embeddings + FTS, fresh index dir), no-change re-run,
one file changed (a comment appended to one source file in a private copy), and warm-process query latency
(p50/p95 of rank_files, hybrid). The repository itself is never written: it is copied to a temp dir first.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from answer.retrieval.tiers import rank_files
from generator.index.command import index_repository
from generator.index.store import open_index
from sourcebook.config import load_config

QUESTIONS = Path("/work/shared/eval/dev/swe_qa_dev.jsonl")


def _timed(fn: object) -> float:
    started = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", nargs="?", default="/work/eval-repos/flask")
    parser.add_argument("--embedder", default="default")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--changed", default=None, help="file to touch (default: the largest .py file)")
    args = parser.parse_args()
    cold, nochange, onefile = [], [], []
    with tempfile.TemporaryDirectory(prefix="sb-bench-") as tmp:
        root = Path(tmp) / "repo"
        shutil.copytree(args.repo, root, ignore=shutil.ignore_patterns(".sourcebook"))
        changed = (root / args.changed if args.changed
                   else max(root.rglob("*.py"), key=lambda p: p.stat().st_size))
        original = changed.read_text()
        for run in range(args.runs):
            out = Path(tmp) / f"out{run}"
            config = load_config(root, {"out_dir": str(out), "embed": {"provider": args.embedder}})
            cold.append(_timed(lambda config=config: index_repository(config)))
            nochange.append(_timed(lambda config=config: index_repository(config)))
            changed.write_text(original + f"\n# bench edit {run} {time.time()}\n")
            onefile.append(_timed(lambda config=config: index_repository(config)))
            changed.write_text(original)
        store = open_index(config)
        lines = QUESTIONS.read_text().splitlines()
        questions = [json.loads(line)["question"] for line in lines if line.strip()]
        rank_files(store, "warm up")
        latencies = []
        for question in questions:
            started = time.perf_counter()
            rank_files(store, question)
            latencies.append(time.perf_counter() - started)
    latencies.sort()
    print(f"repo {args.repo}  embedder {args.embedder}  runs {args.runs}  "
          f"changed {changed.relative_to(root)}")
    runs = ", ".join(f"{t:.2f}" for t in cold)
    print(f"cold index        median {statistics.median(cold):6.2f} s   ({runs})")
    print(f"no-change re-run  median {statistics.median(nochange):6.2f} s")
    print(f"one file changed  median {statistics.median(onefile):6.2f} s")
    p95 = latencies[int(len(latencies) * 0.95) - 1]
    print(f"warm query (hybrid rank_files, {len(latencies)} questions)  "
          f"p50 {statistics.median(latencies) * 1000:.1f} ms  p95 {p95 * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
