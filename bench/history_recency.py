"""What a recency prior from the repository's history would add to a history-bench run, simulated.

    python bench/history_recency.py RESULTS.jsonl [RESULTS.jsonl ...] [--mirrors /work/.mirror] [--last 100]

Bug-localization work ranks files a report is likely to need by how often and how lately they changed. This
asks whether such a prior would lift sourcebook's rankings before building it: for each question of an
--at-commit results file, the files changed by the `--last` non-merge commits before the question's commit
(read from the repository's mirror; nothing after the commit is read) give each file a weight,
 sum(decay^i) over the i-th previous commit touching it. The ranked files are re-scored as
-rank + w ln(1 + weight), and files changed lately that the ranking left out (same extensions as the ranked
ones, no test paths) enter at rank 11. Prints hit@5 per split and language for each (w, decay), w = 0 first.
A simulation only: the files below rank 10 are unseen, so it bounds what re-ranking and injecting the recent
files can do with the rankings as they are.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import corpus


def before(git_dir: Path, sha: str, last: int) -> list[set[str]]:
    """The paths changed by each of the `last` non-merge commits before sha (from its parents), newest first.
    A mirror missing an object ends the list there (git stops; what it printed is kept)."""
    out = subprocess.run(["git", f"--git-dir={git_dir}", "log", "--no-merges", "--name-only",
                          "--format=format:@", f"--max-count={last}", f"{sha}^"],
                         capture_output=True, text=True, errors="replace", check=False).stdout
    commits: list[set[str]] = []
    for line in out.splitlines():
        if line == "@":
            commits.append(set())
        elif line.strip() and commits:
            commits[-1].add(line.strip())
    return commits


def rescored(ranked: list[str], history: list[set[str]], w: float, decay: float) -> list[str]:
    weight: dict[str, float] = defaultdict(float)
    for i, files in enumerate(history):
        for path in files:
            weight[path] += decay ** i
    score = {path: -float(i) for i, path in enumerate(ranked, start=1)}
    suffixes = {path.rsplit(".", 1)[-1] for path in ranked}
    for path in weight:
        if w and path not in score and path.rsplit(".", 1)[-1] in suffixes and "test" not in path.lower():
            score[path] = -11.0
    return sorted(score, key=lambda p: (-(score[p] + w * math.log1p(weight[p])), p))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", type=Path)
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--last", type=int, default=100)
    args = ap.parse_args()
    rows = [json.loads(line) for path in args.results
            for line in path.read_text(encoding="utf-8").splitlines()]
    # a question (repository, id) in two files counts once, the later file's (as history_tables.py)
    rows = list({(r["repo"], r["id"]): r for r in rows if r.get("mode") == "at-commit"}.values())
    repos = {repo.name: repo for repo in corpus.load()}
    git_dirs = {name: corpus.mirror_of(repos[name], args.mirrors) for name in {r["repo"] for r in rows}}
    histories = [before(git_dirs[r["repo"]], r["commit"], args.last) for r in rows]
    for w, decay in [(0.0, 0.9), (2.0, 0.8), (4.0, 0.8), (2.0, 0.9), (4.0, 0.9), (8.0, 0.9)]:
        tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
        for r, history in zip(rows, histories, strict=True):
            top = rescored(r["ranked"], history, w, decay)[:5]
            hit = int(bool(set(r["gold_files"]) & set(top)))
            for key in ((r["split"], "ALL"), (r["split"], r["language"])):
                tally[key][0] += hit
                tally[key][1] += 1
        for split in ("tune", "report"):
            cells = "  ".join(f"{lang} {h / n:.3f}"
                              for (s, lang), (h, n) in sorted(tally.items()) if s == split)
            print(f"w={w:g} decay={decay:g} {split}: {cells}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
