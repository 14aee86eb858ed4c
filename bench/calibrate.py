"""Confidence thresholds from measurements: per retrieval-quality label, the questions and the share whose top
file was right, under the current thresholds and each candidate.

    PYTHONPATH=$PWD python bench/calibrate.py RESULTS.jsonl [...] [--dominance 1.25,1.5,1.75]
        [--coverage-high 0.5,0.75] [--coverage-partial 0.34]

Reads results lines that carry the `features` a label is computed from (dominance of the top file, coverage
of the question's terms, exact symbol match) and a `split` (bench/history_bench.py writes tune/report; any
other file may name its own, e.g. "dev"). Prints one line per split and candidate. Pick the thresholds that
make "high" most often right on every split without emptying it, and set them in answer/answering/grade.py
with the figures.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from answer.answering.grade import COVERAGE_HIGH, COVERAGE_PARTIAL, DOMINANCE_HIGH, quality_label

LEVELS = ("high", "partial", "weak")


def _labels(rows: list[dict], dom: float, cov_h: float, cov_p: float) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {label: [] for label in LEVELS}
    for r in rows:
        f = r["features"]
        if not r["ranked"]:
            label = "weak"
        else:
            label = quality_label(f["dominance"], f["coverage"], bool(f["exact_symbol"]), dominance_high=dom,
                                  coverage_high=cov_h, coverage_partial=cov_p)
        out[label].append(float(bool(r["ranked"]) and r["ranked"][0] in r["gold_files"]))
    return out


def _line(name: str, labels: dict[str, list[float]]) -> str:
    parts = [f"{label} {len(v):>4}:{(sum(v) / len(v) if v else 0):.2f}" for label, v in labels.items()]
    return f"{name:<34} " + "  ".join(parts)


def _floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--dominance", default="1.25,1.5,1.75")
    parser.add_argument("--coverage-high", default=str(COVERAGE_HIGH))
    parser.add_argument("--coverage-partial", default=str(COVERAGE_PARTIAL))
    args = parser.parse_args()
    rows = [json.loads(line) for path in args.results for line in path.read_text().splitlines() if line]
    rows = [r for r in rows if "features" in r and r["gold_files"]]
    splits: dict[str, list[dict]] = {}
    for r in rows:
        splits.setdefault(str(r.get("split") or "all"), []).append(r)
    print(f"now: dominance {DOMINANCE_HIGH}, coverage {COVERAGE_HIGH} / {COVERAGE_PARTIAL}")
    for dom, cov_h, cov_p in itertools.product(_floats(args.dominance), _floats(args.coverage_high),
                                               _floats(args.coverage_partial)):
        for name, subset in splits.items():
            print(_line(f"{name} ({dom}, {cov_h}, {cov_p})", _labels(subset, dom, cov_h, cov_p)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
