"""Confidence thresholds from measurements: per retrieval-quality label, the share of questions whose top file
was right, under the current thresholds and the ones this picks.

    PYTHONPATH=$PWD python bench/calibrate.py RESULTS.jsonl [...]

Reads bench/history_bench.py's results (each line carries the `features` the label is computed from:
dominance of the top file, coverage of the question's terms, exact symbol match, and the `split`). Tries
thresholds on the TUNE split: the pair (dominance_high, coverage_high) with the most "high" questions whose
top-1 precision stays at or above --high-precision, then the coverage_partial that best separates partial
from weak (largest precision gap, each label holding at least a tenth of the questions). Prints both
tables for both splits; copy the picked values into answer/answering/grade.py by hand, with the figures.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--high-precision", type=float, default=0.8)
    args = parser.parse_args()
    rows = [json.loads(line) for path in args.results for line in path.read_text().splitlines() if line]
    rows = [r for r in rows if "features" in r and r["gold_files"]]
    tune = [r for r in rows if r.get("split") == "tune"]
    best = None
    for dom, cov_h in itertools.product((1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0), (0.5, 0.6, 0.75, 0.9, 1.0)):
        high = _labels(tune, dom, cov_h, COVERAGE_PARTIAL)["high"]
        if high and sum(high) / len(high) >= args.high_precision and (best is None or len(high) > best[0]):
            best = (len(high), dom, cov_h)
    if best is None:
        print(f"no thresholds reach top-1 precision {args.high_precision} for 'high' on the tuning split")
        return 1
    _, dom, cov_h = best
    gaps = []
    for cov_p in (0.1, 0.2, 0.25, 0.34, 0.4, 0.5):
        got = _labels(tune, dom, cov_h, cov_p)
        if min(len(got["partial"]), len(got["weak"])) >= len(tune) / 10:
            gap = sum(got["partial"]) / len(got["partial"]) - sum(got["weak"]) / len(got["weak"])
            gaps.append((gap, cov_p))
    cov_p = max(gaps)[1] if gaps else COVERAGE_PARTIAL
    for name, subset in (("tune", tune), ("report", [r for r in rows if r.get("split") == "report"])):
        print(_line(f"{name} now ({DOMINANCE_HIGH}, {COVERAGE_HIGH}, {COVERAGE_PARTIAL})",
                    _labels(subset, DOMINANCE_HIGH, COVERAGE_HIGH, COVERAGE_PARTIAL)))
        print(_line(f"{name} picked ({dom}, {cov_h}, {cov_p})", _labels(subset, dom, cov_h, cov_p)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
