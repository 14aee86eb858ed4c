"""sourcebook against whole-file BM25 on the same history questions, per language: how much of a language's
gap comes from its questions and repositories, and how much from how sourcebook reads that language.

    PYTHONPATH=$PWD python bench/history_baseline.py RESULTS.jsonl [RESULTS.jsonl ...] [--mirrors DIR]
        [--split report|tune|all]

Each file is a `results-LABEL.jsonl` of bench/history_bench.py (a question in two files counts once, the later
file's, as history_tables.py). For each question the baseline ranks the source files of the tree the question
was asked of (its own commit for an --at-commit row, the corpus' pinned commit otherwise; read from the
repository's mirror) by answer/retrieval/baseline.py: BM25 of the question's terms over each file's whole
text, no stemming, no field, no prior, as `sourcebook eval` prints it. Its files are the ones the history
sets' judge counts as gold (code, of a language the parser reads, not a test, by scan.file_kind), so it never
loses places to tests or documentation as sourcebook can: its absolute level flatters it, and the table is
read across languages, not down.

The baseline knows nothing of any language, so where it too finds a language's questions hard (its
repositories are large, its commit messages name nothing: "Sort members", "Use final."), that part of the gap
is the questions'. Printed per language: questions, hit@5 and MRR of the baseline and of sourcebook, the lift
(sourcebook - baseline, hit@5), `kept` (sourcebook's hit@5 on the questions the baseline puts a gold file in
its top 5 for: the questions whose words lead to the file), and each one's difference to Python. A language
sourcebook reads worse than Python shows as a lift, or a kept share, below Python's. Then, as
history_tables.py holds size out, sourcebook's hit@5 fitted on the baseline's over the repositories: per
language the residual against what the baseline's figures on its repositories predict.
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from answer.retrieval import baseline
from bench import corpus
from bench.history_tables import RepoPoint, held_out_table
from generator.analyze.languages import detect_language, is_parsed
from generator.analyze.scan import file_kind

logger = logging.getLogger(__name__)


class Blobs:
    """Term counts of a mirror's blobs, read once each through one `git cat-file --batch`."""

    def __init__(self, git_dir: Path) -> None:
        self.proc = subprocess.Popen(["git", f"--git-dir={git_dir}", "cat-file", "--batch"],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.counts: dict[str, Counter[str]] = {}

    def terms_of(self, oid: str) -> Counter[str]:
        found = self.counts.get(oid)
        if found is None:
            assert self.proc.stdin is not None
            assert self.proc.stdout is not None
            self.proc.stdin.write(oid.encode() + b"\n")
            self.proc.stdin.flush()
            header = self.proc.stdout.readline().split()
            body = b""
            if len(header) == 3 and header[1] == b"blob":
                body = self.proc.stdout.read(int(header[2]) + 1)[:-1]
            found = self.counts[oid] = baseline.text_terms(body.decode("utf-8", "replace"))
        return found

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait()


def source_files(git_dir: Path, sha: str) -> dict[str, str]:
    """path -> blob id of the commit's files the judge counts as gold (code of a parsed language)."""
    files: dict[str, str] = {}
    for path, (_mode, oid) in corpus.tree_of(git_dir, sha).items():
        language = detect_language(path)
        if is_parsed(language) and file_kind(path, language) == "code":
            files[path] = oid
    return files


def first_gold(ranked: list[str], gold: set[str]) -> int | None:
    return next((i for i, path in enumerate(ranked, start=1) if path in gold), None)


Tally = dict[str, list[float]]  # language -> n, baseline hits, its reciprocal ranks, sourcebook's hits and
# reciprocal ranks, and sourcebook's hits among the questions the baseline puts a gold file in its top 5 for


def measure(rows: list[dict[str, Any]], git_dir_of: Callable[[str], Path], pinned_of: Callable[[str], str],
            ) -> tuple[Tally, list[RepoPoint]]:
    """Each row (a history-bench result) ranked by the baseline at its tree, tallied per language and "ALL"
    beside sourcebook's own ranking of it (the row's `ranked`), and per repository sourcebook's hits with the
    baseline's hit@5 as x (history_tables.held_out_table). `git_dir_of(repo)`: its git dir; `pinned_of(repo)`:
    the commit a row asked of the pinned checkout (not --at-commit) was asked at."""
    tally: Tally = defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0, 0.0])
    points: list[RepoPoint] = []
    for name in sorted({r["repo"] for r in rows}):
        git_dir = git_dir_of(name)
        blobs = Blobs(git_dir)
        trees: dict[str, dict[str, str]] = {}
        hits: list[tuple[bool, bool]] = []
        language = "?"
        try:
            for r in (r for r in rows if r["repo"] == name):
                sha = r["commit"] if r.get("mode") == "at-commit" else pinned_of(name)
                files = trees.setdefault(sha, source_files(git_dir, sha))
                gold = set(r["gold_files"])
                docs = {path: blobs.terms_of(oid) for path, oid in files.items()}
                base = first_gold(baseline.ranked(r["question"], docs), gold)
                ours = first_gold(r["ranked"], gold)
                base_hit, our_hit = base is not None and base <= 5, ours is not None and ours <= 5
                for key in (r["language"], "ALL"):
                    t = tally[key]
                    t[0] += 1
                    t[1] += base_hit
                    t[2] += 1.0 / base if base else 0.0
                    t[3] += our_hit
                    t[4] += 1.0 / ours if ours else 0.0
                    t[5] += base_hit and our_hit
                hits.append((base_hit, our_hit))
                if language == "?":  # a corpus repository is of one language: its first row's
                    language = r["language"]
        finally:
            blobs.close()
        if hits:
            points.append(RepoPoint(language, sum(b for b, _ in hits) / len(hits), len(hits),
                                    sum(o for _, o in hits)))
        logger.info("%s: %d questions, BM25 hit@5 %.3f, sourcebook %.3f", name, len(hits),
                    sum(b for b, _ in hits) / max(1, len(hits)), sum(o for _, o in hits) / max(1, len(hits)))
    return tally, points


def table(tally: Tally) -> list[str]:
    """The per-language lines, a header first and "ALL" last; the columns against Python when it has rows."""
    lines = [f"{'language':12}{'n':>5}  {'BM25 h@5':>8} {'MRR':>6}  {'ours h@5':>8} {'MRR':>6}  {'lift':>6}  "
             f"{'kept':>5}  {'BM25 vs py':>10} {'ours vs py':>10} {'lift vs py':>10} {'kept vs py':>10}"]
    py = tally.get("python")
    for lang in sorted(tally, key=lambda k: (k == "ALL", k)):
        n, bh, brr, oh, orr, both = tally[lang]
        b5, o5, kept = bh / n, oh / n, both / bh if bh else 0.0
        line = (f"{lang:12}{int(n):5}  {b5:8.3f} {brr / n:6.3f}  {o5:8.3f} {orr / n:6.3f}  {o5 - b5:+6.3f}  "
                f"{kept:5.3f}")
        if py:
            pb, po, pk = py[1] / py[0], py[3] / py[0], py[5] / py[1] if py[1] else 0.0
            line += f"  {b5 - pb:+10.3f} {o5 - po:+10.3f} {(o5 - b5) - (po - pb):+10.3f} {kept - pk:+10.3f}"
        lines.append(line)
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", type=Path)
    ap.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    ap.add_argument("--split", default="report", choices=("report", "tune", "all"))
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    rows = list({(r["repo"], r["id"]): r for path in args.results
                 for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}.values())
    rows = [r for r in rows if args.split == "all" or r["split"] == args.split]
    repos = {repo.name: repo for repo in corpus.load()}
    tally, points = measure(rows, lambda name: corpus.mirror_of(repos[name], args.mirrors),
                            lambda name: repos[name].commit)
    print("\n".join(table(tally)))
    held = held_out_table(points, "x (the baseline's hit@5)", "by BM25")
    if held:
        print("\n-- sourcebook's hit@5 with the baseline's figure of each repository held out")
        print("\n".join(held))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
