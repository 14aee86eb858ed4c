"""Per-language tables of history-bench results files, merged: the figures of runs made apart (some
repositories in one work dir, others in another, or one run per group of repositories) as one table.

    PYTHONPATH=$PWD python bench/history_tables.py RESULTS.jsonl [RESULTS.jsonl ...] [--repo NAME ...]

Each file is a `results-LABEL.jsonl` of bench/history_bench.py; a question (repository, id) in two files is
counted once (the later file's). Prints the TUNE and REPORT tables `history_bench.py` prints. Function-level
hit@5 uses the lines each question carries (the --at-commit mode writes them); a default-mode file carries
none, so its fn@5 here counts only spans naming the function, and may read lower than the bench printed.
"""

from __future__ import annotations

import argparse
import json
import sys
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", type=Path)
    ap.add_argument("--repo", action="append", default=[], help="folder name (repeatable; default all)")
    args = ap.parse_args()
    outcomes = load(args.results, set(args.repo))
    for split in ("tune", "report"):
        mine = [o for o in outcomes if o.question.extra.get("split") == split]
        if mine:
            print(f"\n== {split} split ({len({o.question.extra['repo'] for o in mine})} repositories)")
            print("\n".join(eval_report.table(mine, {})))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
