"""Per-repository confidence calibration, measured with a temporal split: each repository's thresholds are
derived (answer/answering/calibration.py, the rule `sourcebook eval --history N --calibrate` runs) on the
OLDER half of its history set and judged on the NEWER half, against the global thresholds on the same half.

    PYTHONPATH=$PWD python bench/calibrate_temporal.py /work/hist4/results-base.jsonl [--split report]
        [--min-questions 20] [--shrink 50] [--target 0.9] [--per-repo]

Reads bench/history_bench.py results lines (set order: newest commit first; `repo`, `split`, `features`).
Prints, per split, the spread (min / median / max over repositories with any "high" question) of the share
of "high" questions whose top file was right, how many repositories have none, and how many questions get
"high", global vs calibrated.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from answer.answering.calibration import Observation, calibrate, labels_of
from answer.answering.grade import GLOBAL_THRESHOLDS


def _spread(shares: list[float]) -> str:
    if not shares:
        return "no repository has a 'high' question"
    return f"{min(shares):.2f} / {statistics.median(shares):.2f} / {max(shares):.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--split", default=None, help="only this split (tune/report); default: each")
    parser.add_argument("--min-questions", type=int, default=None)
    parser.add_argument("--shrink", type=float, default=None)
    parser.add_argument("--target", type=float, default=None)
    parser.add_argument("--per-repo", action="store_true", help="a line per repository")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.results.read_text().splitlines() if line]
    repos: dict[str, list[dict]] = {}
    for r in rows:
        if "features" in r and r["gold_files"]:
            repos.setdefault(r["repo"], []).append(r)
    options = {k: v for k, v in {"min_questions": args.min_questions, "shrink_n": args.shrink,
                                 "target": args.target}.items() if v is not None}
    splits: dict[str, list[str]] = {}
    for repo, group in repos.items():
        splits.setdefault(str(group[0].get("split") or "all"), []).append(repo)
    for split, names in splits.items():
        if args.split and split != args.split:
            continue
        share = {"global": [], "calibrated": []}  # type: dict[str, list[float]]
        count = {"global": 0, "calibrated": 0}
        right = {"global": 0, "calibrated": 0}
        newer_n = 0
        for repo in names:
            obs = [Observation.of(r["features"], r["ranked"], r["gold_files"]) for r in repos[repo]]
            half = len(obs) // 2
            newer, older = obs[:half], obs[half:]  # sets list the newest commit first
            newer_n += len(newer)
            cal = calibrate(older, **options)
            line = []
            for name, t in (("global", GLOBAL_THRESHOLDS), ("calibrated", cal.thresholds)):
                high = labels_of(newer, t)["high"]
                count[name] += len(high)
                right[name] += sum(high)
                if high:
                    share[name].append(sum(high) / len(high))
                line.append(f"{name} high {len(high):>2}:{(sum(high) / len(high) if high else 0):.2f}")
            if args.per_repo:
                t = cal.thresholds
                print(f"  {repo:<32} older {len(older):>3} -> lead {t.dominance_high:<5} share "
                      f"{t.share_high:<5} cover {t.coverage_high:<5}  newer {len(newer):>3}: "
                      + "  ".join(line))
        print(f"== {split}: {len(names)} repositories, {newer_n} newer-half questions")
        for name in ("global", "calibrated"):
            pooled = right[name] / count[name] if count[name] else 0.0
            print(f"  {name:<10} 'high' right min/median/max {_spread(share[name])} "
                  f"(repositories without 'high': {len(names) - len(share[name])}); "
                  f"'high' questions {count[name]} ({pooled:.2f} right)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
