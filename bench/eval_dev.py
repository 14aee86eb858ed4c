"""Reproduce the development-set retrieval figures from clean checkouts of flask and requests.

    .venv/bin/python bench/eval_dev.py [--flask PATH] [--requests PATH] [--embedder none|default|...]
        [--out results.jsonl] [--no-swebench] [--labels]

Indexes are built in temp dirs (the checkouts are never written to). SWE-QA questions run on each repo at its
pinned commit; each SWE-bench issue runs on a temporary checkout of its own base commit. Prints score.py's
table (hit@1/3/5/10, recall@5, MRR, median seconds per question) plus index times.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from answer.retrieval.evaluate import Question, run
from generator.index.command import index_repository
from generator.index.store import open_index
from sourcebook.config import load_config

EVAL = Path("/work/shared/eval")


def _head(repo: Path) -> str:
    return subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def _checkout(repo: Path, commit: str, dest: Path) -> Path:
    """A clean working tree of `repo` at `commit` in `dest` (cloned locally, never touching `repo`)."""
    if not dest.exists():
        subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(repo), str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "checkout", "-q", "-f", commit], check=True)
    return dest


def _index(root: Path, out_dir: Path, embedder: str) -> tuple[object, float]:
    config = load_config(root, {"out_dir": str(out_dir), "embed": {"provider": embedder}})
    started = time.perf_counter()
    index_repository(config)
    seconds = time.perf_counter() - started
    return open_index(config), seconds


def _questions(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _rows(store: object, rows: list[dict], system: str, labels: bool = False) -> list[dict]:
    """Each question's ranking; with `labels`, asked through the answer engine's retrieval (as `sourcebook
    eval` does), with the confidence label and the features it is computed from (bench/calibrate.py reads
    them: the development set as a split of its own, "dev")."""
    qs = [Question(r["id"], r["question"], tuple(r["gold_files"])) for r in rows]
    if labels:
        from answer.answering.localize import locate

        outcomes = run(store, qs, locate=locate)  # type: ignore[arg-type]
    else:
        outcomes = run(store, qs)  # type: ignore[arg-type]
    out = []
    for o, r in zip(outcomes, rows, strict=True):
        row = {"system": system, "id": o.question.id, "repo": r["repo"],
               "gold_files": list(o.question.gold_files), "ranked": list(o.ranked), "seconds": o.seconds}
        if labels and o.features:
            row.update(split="dev", label=o.label, features=o.features)
        out.append(row)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flask", default="/work/eval-repos/flask")
    parser.add_argument("--requests", default="/work/eval-repos/requests")
    parser.add_argument("--embedder", default="none")
    parser.add_argument("--out", default=None)
    parser.add_argument("--no-swebench", action="store_true")
    parser.add_argument("--system", default=None)
    parser.add_argument("--labels", action="store_true",
                        help="rank through the answer engine and write each question's confidence label and "
                             "features (for bench/calibrate.py)")
    args = parser.parse_args()
    system = args.system or f"sourcebook-{args.embedder}"
    repos = {"pallets/flask": Path(args.flask), "psf/requests": Path(args.requests)}
    results: list[dict] = []
    index_times: dict[str, list[float]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="sb-eval-") as tmp:
        tmp_path = Path(tmp)
        qa = _questions(EVAL / "dev" / "swe_qa_dev.jsonl")
        for repo, path in repos.items():
            rows = [r for r in qa if r["repo"] == repo]
            commits = {r["commit"] for r in rows}
            root = path
            if commits != {_head(path)}:  # not at the pinned commit: use a clean checkout of it
                root = _checkout(path, commits.pop(), tmp_path / f"{repo.replace('/', '_')}-qa")
            store, seconds = _index(root, tmp_path / f"{repo.replace('/', '_')}-qa-out", args.embedder)
            index_times[repo].append(seconds)
            results += _rows(store, rows, system, args.labels)
        if not args.no_swebench:
            for r in _questions(EVAL / "dev" / "swebench_dev.jsonl"):
                name = r["repo"].replace("/", "_")
                root = _checkout(repos[r["repo"]], r["commit"], tmp_path / f"{name}-sb")
                store, seconds = _index(root, tmp_path / f"{name}-sb-out", args.embedder)
                index_times[f"{r['repo']} (swebench, incremental)"].append(seconds)
                for row in _rows(store, [r], system + "-swebench", args.labels):
                    results.append(row)
        out = Path(args.out) if args.out else tmp_path / "results.jsonl"
        out.write_text("".join(json.dumps(row) + "\n" for row in results))
        subprocess.run([sys.executable, str(EVAL / "score.py"), str(out)], check=True)
    for repo, times in index_times.items():
        print(f"index {repo}: median {statistics.median(times):.2f}s over {len(times)} run(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
