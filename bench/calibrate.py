"""Confidence thresholds from measurements: per retrieval-quality label, the questions and the share whose top
file was right, under the current thresholds and each candidate; with --derive, the thresholds chosen on the
tuning split and checked on the others, per language.

    PYTHONPATH=$PWD python bench/calibrate.py RESULTS.jsonl [...] [--dominance 1.25,1.5,1.75]
        [--share 0.7,0.8,0.9] [--coverage-high 0.5,0.75] [--coverage-partial 0.34] [--exact-lead 1.25,inf]
        [--derive [--tune tune] [--target 0.9]]

Reads results lines that carry the `features` a label is computed from (dominance of the top file, the learned
ranker's share of it, coverage of the question's terms, exact symbol match) and a `split`
(bench/history_bench.py writes tune/report; any other file may name its own, e.g. "dev"). Without --derive:
one line per split and candidate. With --derive: the candidate that labels the most questions of the `--tune`
split "high" while their top file is right for at least `--target` of them (ties: the higher share, then the
stricter), then the labels' figures under the current and the chosen thresholds per split and per language, so
"high" can be checked to mean the same everywhere.
Set the chosen thresholds in answer/answering/grade.py with the figures; re-derive after a ranking change.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from answer.answering.calibration import LEVELS, Observation, derive, labels_of
from answer.answering.grade import COVERAGE_PARTIAL, GLOBAL_THRESHOLDS, Thresholds

MIN_GROUP = 5  # the fewest questions of a label a group's share is quoted for


def _observed(rows: list[dict]) -> list[Observation]:
    return [Observation.of(r["features"], r["ranked"], r["gold_files"]) for r in rows]


def _line(name: str, labels: dict[str, list[bool]]) -> str:
    parts = [f"{label} {len(v):>4}:{(sum(v) / len(v) if v else 0):.2f}" for label, v in labels.items()]
    return f"{name:<34} " + "  ".join(parts)


def _floats(text: str) -> list[float]:
    return [float(x) for x in text.split(",") if x]


def _text(t: Thresholds) -> str:
    return (f"dominance {t.dominance_high}, share {t.share_high}, coverage {t.coverage_high} / "
            f"{t.coverage_partial}, exact lead {t.exact_lead}")


def _labels(rows: list[dict], t: Thresholds | None) -> dict[str, list[bool]]:
    """Per label, whether each row's top file was right: labelled by `t`, or as recorded (None)."""
    if t is not None:
        return labels_of(_observed(rows), t)
    out: dict[str, list[bool]] = {level: [] for level in LEVELS}
    for r, obs in zip(rows, _observed(rows), strict=True):
        out[str(r["label"])].append(obs.right)
    return out


def spread(rows: list[dict], t: Thresholds | None, key: str, least: int = MIN_GROUP) -> str:
    """Per label, the lowest and highest share of right top files over the groups (`key`: language or
    repo) holding at least `least` questions so labelled, and the share of questions given the label: how
    far a label's meaning varies from one group to another. `t` None: the labels the rows record."""
    groups: dict[str, list[dict]] = {}
    for r in rows:
        groups.setdefault(str(r.get(key) or "?"), []).append(r)
    labelled = {name: _labels(group, t) for name, group in groups.items()}
    parts = []
    for level in LEVELS:
        shares = [sum(v[level]) / len(v[level]) for v in labelled.values() if len(v[level]) >= least]
        given = sum(len(v[level]) for v in labelled.values()) / max(1, len(rows))
        band = f"{min(shares):.2f}-{max(shares):.2f} over {len(shares)}" if shares else "-"
        parts.append(f"{level} {band} ({given:.0%} of questions)")
    return f"  spread by {key} (>= {least}): " + "; ".join(parts)


def _report(splits: dict[str, list[dict]], t: Thresholds | None, title: str) -> None:
    print(f"\n{title}: {_text(t) if t is not None else 'the labels the results record'}")
    for name, subset in splits.items():
        print(_line(name, _labels(subset, t)))
        for key in ("language", "repo"):
            print(spread(subset, t, key))
        languages: dict[str, list[dict]] = {}
        for r in subset:
            languages.setdefault(str(r.get("language") or "?"), []).append(r)
        if len(languages) > 1:
            for language, group in languages.items():
                print(_line(f"  {language}", _labels(group, t)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--dominance", default="1.25,1.35,1.5,1.75,2")
    parser.add_argument("--share", default="0.6,0.7,0.75,0.8,0.85,0.9")
    parser.add_argument("--coverage-high", default="0.5,0.6,0.75,0.9,1")
    parser.add_argument("--coverage-partial", default=str(COVERAGE_PARTIAL))
    parser.add_argument("--exact-lead", default="1,1.15,1.25,1.5,inf")
    parser.add_argument("--derive", action="store_true")
    parser.add_argument("--recorded", action="store_true",
                        help="also the labels the results record (the run's own thresholds), to compare")
    parser.add_argument("--tune", default="tune", help="the split thresholds are derived on")
    parser.add_argument("--target", type=float, default=0.9, help="the least share of right 'high' answers")
    args = parser.parse_args()
    rows = [json.loads(line) for path in args.results for line in path.read_text().splitlines() if line]
    rows = [r for r in rows if "features" in r and r["gold_files"]]
    splits: dict[str, list[dict]] = {}
    for r in rows:
        splits.setdefault(str(r.get("split") or "all"), []).append(r)
    candidates = [Thresholds(*values) for values in itertools.product(
        _floats(args.dominance), _floats(args.coverage_high), _floats(args.coverage_partial),
        _floats(args.exact_lead), _floats(args.share))]
    current = GLOBAL_THRESHOLDS
    if args.derive:
        if args.tune not in splits:
            print(f"no questions in split {args.tune!r} (splits: {', '.join(splits)})", file=sys.stderr)
            return 2
        if args.recorded:
            _report(splits, None, "recorded")
        _report(splits, current, "now")
        chosen = derive(_observed(splits[args.tune]), candidates, args.target)
        if chosen is None:
            print(f"\nno candidate reaches {args.target} on {args.tune}")
            return 1
        _report(splits, chosen, f"derived on {args.tune} (target {args.target})")
        return 0
    print(f"now: {_text(current)}")
    for t in candidates:
        for name, subset in splits.items():
            print(_line(f"{name} {_text(t)}", labels_of(_observed(subset), t)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
