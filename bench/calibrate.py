"""Confidence thresholds from measurements: per retrieval-quality label, the questions and the share whose top
file was right, under the current thresholds and each candidate; with --derive, the thresholds chosen on the
tuning split and checked on the others, per language.

    PYTHONPATH=$PWD python bench/calibrate.py RESULTS.jsonl [...] [--dominance 1.25,1.5,1.75]
        [--coverage-high 0.5,0.75] [--coverage-partial 0.34] [--exact-lead 1.25,inf]
        [--derive [--tune tune] [--target 0.85]]

Reads results lines that carry the `features` a label is computed from (dominance of the top file, coverage
of the question's terms, exact symbol match) and a `split` (bench/history_bench.py writes tune/report; any
other file may name its own, e.g. "dev"). Without --derive: one line per split and candidate. With
--derive: the candidate that labels the most questions of the `--tune` split "high" while their top file is
right for at least `--target` of them (ties: the higher share, then the stricter), then the labels' figures
under the current and the chosen thresholds per split and per language, so "high" can be checked to mean
the same everywhere.
Set the chosen thresholds in answer/answering/grade.py with the figures; re-derive after a ranking change.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from answer.answering.grade import COVERAGE_HIGH, COVERAGE_PARTIAL, DOMINANCE_HIGH, EXACT_LEAD, quality_label

LEVELS = ("high", "partial", "weak")
LONE = 1e9  # localize.py writes a lone file's infinite lead as this (JSON has no inf)

Thresholds = tuple[float, float, float, float]  # dominance, coverage high, coverage partial, exact lead


def _label(row: dict, t: Thresholds) -> str:
    f = row["features"]
    if not row["ranked"]:
        return "weak"
    lead = math.inf if f["dominance"] >= LONE else f["dominance"]
    return quality_label(lead, f["coverage"], bool(f["exact_symbol"]), dominance_high=t[0],
                         coverage_high=t[1], coverage_partial=t[2], exact_lead=t[3])


def _right(row: dict) -> float:
    return float(bool(row["ranked"]) and row["ranked"][0] in row["gold_files"])


def labels_of(rows: list[dict], t: Thresholds) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {label: [] for label in LEVELS}
    for r in rows:
        out[_label(r, t)].append(_right(r))
    return out


def _line(name: str, labels: dict[str, list[float]]) -> str:
    parts = [f"{label} {len(v):>4}:{(sum(v) / len(v) if v else 0):.2f}" for label, v in labels.items()]
    return f"{name:<34} " + "  ".join(parts)


def _floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x]


def derive(rows: list[dict], candidates: list[Thresholds], target: float) -> Thresholds | None:
    """The candidate giving "high" to the most `rows` at a top-file precision of at least `target`."""
    best: tuple[int, float] | None = None
    chosen = None
    for t in candidates:
        high = labels_of(rows, t)["high"]
        if not high or sum(high) / len(high) < target:
            continue
        key = (len(high), sum(high) / len(high))
        if best is None or key >= best:  # on a tie the later, stricter candidate (the lists ascend)
            best, chosen = key, t
    return chosen


def _report(splits: dict[str, list[dict]], t: Thresholds, title: str) -> None:
    print(f"\n{title}: dominance {t[0]}, coverage {t[1]} / {t[2]}, exact lead {t[3]}")
    for name, subset in splits.items():
        print(_line(name, labels_of(subset, t)))
        languages: dict[str, list[dict]] = {}
        for r in subset:
            languages.setdefault(str(r.get("language") or "?"), []).append(r)
        if len(languages) > 1:
            for language, group in languages.items():
                print(_line(f"  {language}", labels_of(group, t)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--dominance", default="1.25,1.35,1.5,1.75,2")
    parser.add_argument("--coverage-high", default="0.5,0.6,0.75,0.9,1")
    parser.add_argument("--coverage-partial", default=str(COVERAGE_PARTIAL))
    parser.add_argument("--exact-lead", default="1,1.15,1.25,1.5,inf")
    parser.add_argument("--derive", action="store_true")
    parser.add_argument("--tune", default="tune", help="the split thresholds are derived on")
    parser.add_argument("--target", type=float, default=0.85, help="the least share of right 'high' answers")
    args = parser.parse_args()
    rows = [json.loads(line) for path in args.results for line in path.read_text().splitlines() if line]
    rows = [r for r in rows if "features" in r and r["gold_files"]]
    splits: dict[str, list[dict]] = {}
    for r in rows:
        splits.setdefault(str(r.get("split") or "all"), []).append(r)
    candidates = list(itertools.product(_floats(args.dominance), _floats(args.coverage_high),
                                        _floats(args.coverage_partial), _floats(args.exact_lead)))
    current = (DOMINANCE_HIGH, COVERAGE_HIGH, COVERAGE_PARTIAL, EXACT_LEAD)
    if args.derive:
        if args.tune not in splits:
            print(f"no questions in split {args.tune!r} (splits: {', '.join(splits)})", file=sys.stderr)
            return 2
        _report(splits, current, "now")
        chosen = derive(splits[args.tune], candidates, args.target)
        if chosen is None:
            print(f"\nno candidate reaches {args.target} on {args.tune}")
            return 1
        _report(splits, chosen, f"derived on {args.tune} (target {args.target})")
        return 0
    print(f"now: dominance {DOMINANCE_HIGH}, coverage {COVERAGE_HIGH} / {COVERAGE_PARTIAL}, "
          f"exact lead {EXACT_LEAD}")
    for t in candidates:
        for name, subset in splits.items():
            print(_line(f"{name} {t}", labels_of(subset, t)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
