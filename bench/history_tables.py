"""Per-language tables of history-bench results files, merged: the figures of runs made apart (some
repositories in one work dir, others in another, or one run per group of repositories) as one table.

    PYTHONPATH=$PWD python bench/history_tables.py RESULTS.jsonl [RESULTS.jsonl ...] [--repo NAME ...]

Each file is a `results-LABEL.jsonl` of bench/history_bench.py; a question (repository, id) in two files is
counted once (the later file's). Prints the TUNE and REPORT tables `history_bench.py` prints. Function-level
hit@5 uses the lines each question carries (the --at-commit mode writes them); a default-mode file carries
none, so its fn@5 here counts only spans naming the function, and may read lower than the bench printed.

`--work DIR` (repeatable: the work dirs whose pinned indexes, DIR/out/NAME, the results came from) adds a
table of hit@5 per language beside what the repositories' sizes predict. A language's figure comes from two
or three repositories, and hit@5 falls as a repository grows (more files compete for five places; on the
REPORT split, at each question's commit, r = -0.55 between hit@5 and the log of the number of code files):
a language whose repositories are large reads lower for that alone. The table fits hit@5 = a + b ln(code
files) over the split's repositories (weighted by their questions) and prints, per language, the observed
figure, the one its repositories' sizes predict, and the difference (the residual), so the gap between two
languages can be read with size held out. Few repositories make the fit rough: it is a reading aid, not a
score.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from answer.retrieval.evaluate import Outcome, Question, Span
from sourcebook.cli import eval_report


def load(paths: list[Path], repos: set[str]) -> list[Outcome]:
    found: dict[tuple[str, str], Outcome] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if repos and row["repo"].split("/", 1)[1] not in repos:
                continue
            extra = {k: v for k, v in row.items()
                     if k not in {"id", "question", "gold_files", "ranked", "seconds", "spans", "label",
                                  "features"}}
            q = Question(row["id"], row["question"], tuple(row["gold_files"]), extra)
            spans = tuple(Span(*s) for s in row.get("spans", ()))
            found[(row["repo"], row["id"])] = Outcome(q, tuple(row["ranked"]), row["seconds"], spans,
                                                      row.get("label"), row.get("features", {}))
    return list(found.values())


def code_files(work: Path) -> dict[str, int]:
    """Repository folder name -> the number of files of kind "code" in its pinned index (DIR/out/NAME)."""
    from generator.index.store import open_index
    from sourcebook.config import load_config
    from sourcebook.errors import SourcebookError

    sizes: dict[str, int] = {}
    for out in sorted((work / "out").iterdir()) if (work / "out").is_dir() else ():
        try:
            store = open_index(load_config(work / "src" / out.name, {"out_dir": str(out)}), embedder=None)
            sizes[out.name] = len(store.rows("files", ["path"], where="kind = 'code'"))
        except (SourcebookError, OSError) as exc:
            print(f"{out}: no size ({exc})", file=sys.stderr)
    return sizes


def _hit5(outcome: Outcome) -> float:
    return float(bool(set(outcome.question.gold_files) & set(outcome.ranked[:5])))


def size_table(outcomes: list[Outcome], sizes: dict[str, int]) -> list[str]:
    """Per language: hit@5, the hit@5 its repositories' sizes predict, and the residual (see the module
    docstring), with the residual's difference to Python's when Python is there. Repositories without a size
    are left out; fewer than three sized repositories of two sizes or more fit nothing ([])."""
    repos: dict[str, list[Outcome]] = defaultdict(list)
    for o in outcomes:
        if o.question.gold_files and sizes.get(o.question.extra["repo"].rsplit("/", 1)[-1], 0) > 0:
            repos[o.question.extra["repo"]].append(o)
    points = [RepoPoint(rows[0].question.extra.get("language", "?"), math.log(sizes[repo.rsplit("/", 1)[-1]]),
                        len(rows), sum(map(_hit5, rows))) for repo, rows in repos.items()]
    return held_out_table(points, "ln(code files)", "by size")


@dataclass(frozen=True)
class RepoPoint:
    """One repository's questions: its language, the quantity held out, how many it asked, how many hit."""

    language: str
    x: float
    n: int
    hits: float


def held_out_table(points: list[RepoPoint], x_name: str, predicted_name: str) -> list[str]:
    """hit@5 = a + b x fitted over the repositories (weighted by their questions), then per language the
    observed hit@5, the one its repositories' x predict, the residual and its difference to Python's. Fewer
    than three repositories, or one value of x, fit nothing ([])."""
    points = [p for p in points if p.n > 0]
    total = sum(p.n for p in points)
    if len(points) < 3 or total == 0:
        return []
    mx = sum(p.x * p.n for p in points) / total
    my = sum(p.hits for p in points) / total
    sxx = sum(p.n * (p.x - mx) ** 2 for p in points)
    syy = sum(p.n * (p.hits / p.n - my) ** 2 for p in points)
    if sxx == 0:
        return []
    slope = sum(p.n * (p.x - mx) * (p.hits / p.n - my) for p in points) / sxx
    r = slope * math.sqrt(sxx / syy) if syy else 0.0
    by_language: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])  # n, hits, predicted
    for p in points:
        acc = by_language[p.language]
        acc[0] += p.n
        acc[1] += p.hits
        acc[2] += (my + slope * (p.x - mx)) * p.n
    residual = {lang: (hits - predicted) / n for lang, (n, hits, predicted) in by_language.items()}
    per_doubling = f"; {slope * math.log(2):+.3f} per doubling" if x_name.startswith("ln(") else ""
    lines = [f"hit@5 = {my - slope * mx:.3f} {slope:+.3f} {x_name} over {len(points)} repositories "
             f"(r = {r:+.2f}{per_doubling})",
             f"{'language':<12}{'n':>6}{'hit@5':>8}{predicted_name:>9}{'residual':>10}{'vs python':>11}"]
    for lang in sorted(by_language):
        n, hits, predicted = by_language[lang]
        versus = f"{residual[lang] - residual['python']:+.3f}" if "python" in residual else "-"
        lines.append(f"{lang:<12}{int(n):>6}{hits / n:>8.3f}{predicted / n:>9.3f}{residual[lang]:>+10.3f}"
                     f"{versus:>11}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", type=Path)
    ap.add_argument("--repo", action="append", default=[], help="folder name (repeatable; default all)")
    ap.add_argument("--work", action="append", default=[], type=Path,
                    help="a work dir whose pinned indexes give the repositories' sizes (repeatable)")
    args = ap.parse_args()
    outcomes = load(args.results, set(args.repo))
    sizes: dict[str, int] = {}
    for work in args.work:
        sizes.update(code_files(work))
    for split in ("tune", "report"):
        mine = [o for o in outcomes if o.question.extra.get("split") == split]
        if mine:
            print(f"\n== {split} split ({len({o.question.extra['repo'] for o in mine})} repositories)")
            print("\n".join(eval_report.table(mine, {})))
            if sizes and (adjusted := size_table(mine, sizes)):
                print(f"\n-- {split}: hit@5 with repository size held out")
                print("\n".join(adjusted))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
