"""bench/calibrate.py's rule (answer/answering/calibration.py): thresholds derived from measured labels."""

from __future__ import annotations

import math

from answer.answering.calibration import LONE, Observation, derive, labels_of
from answer.answering.grade import Thresholds


def _row(dominance: float, coverage: float, right: bool, exact: bool = False) -> Observation:
    # the shape bench/history_bench.py writes (and bench/calibrate.py reads), as the bench converts it
    return Observation.of({"dominance": dominance, "coverage": coverage, "exact_symbol": float(exact)},
                          ["a.py" if right else "b.py"], ["a.py"])


def test_derive_picks_the_widest_high_that_stays_precise() -> None:
    rows = [_row(2.0, 1.0, True)] * 6 + [_row(1.3, 1.0, True)] * 3 + [_row(1.3, 1.0, False)] * 3
    candidates = [Thresholds(1.25, 0.5, 0.34, math.inf), Thresholds(1.5, 0.5, 0.34, math.inf)]
    # a lead of 1.25 labels 12 "high" but only 0.75 of them right; 1.5 labels 6, all right
    assert derive(rows, candidates, 0.85) == Thresholds(1.5, 0.5, 0.34, math.inf)
    assert derive(rows, candidates, 0.7) == Thresholds(1.25, 0.5, 0.34, math.inf)
    assert derive(rows, [Thresholds(3.0, 0.5, 0.34, math.inf)], 0.85) is None  # nothing is "high" at all


def test_a_lone_file_and_an_exact_symbol_follow_the_thresholds() -> None:
    lone = _row(LONE, 1.0, True)
    exact = _row(1.1, 1.0, True, exact=True)
    assert labels_of([lone, exact], Thresholds(1.5, 0.5, 0.34, math.inf))["partial"] == [True, True]
    assert labels_of([exact], Thresholds(1.5, 0.5, 0.34, 1.0))["high"] == [True]
    assert labels_of([lone], Thresholds(1.5, 0.5, 0.34, 1.0))["high"] == []  # a lone file does not lead
    lone_exact = _row(LONE, 1.0, True, exact=True)
    assert labels_of([lone_exact], Thresholds(1.5, 0.5, 0.34, math.inf))["high"] == [True]  # unless exact


def test_spread_gives_each_labels_lowest_and_highest_share_over_groups_large_enough() -> None:
    from bench.calibrate import spread

    def row(language: str, share: float, right: bool, label: str) -> dict:
        return {"language": language, "features": {"dominance": 1.1, "coverage": 1.0, "share": share},
                "ranked": ["a.py" if right else "b.py"], "gold_files": ["a.py"], "label": label}

    rows = ([row("go", 0.9, True, "partial")] * 4 + [row("go", 0.9, False, "partial")]
            + [row("rust", 0.95, True, "high")] * 5 + [row("c", 0.9, True, "high")] * 2
            + [row("c", 0.3, False, "weak")] * 5)
    t = Thresholds(1.5, 0.5, 0.34, math.inf, 0.85)
    line = spread(rows, t, "language")
    # "high": go 4 of 5, rust 5 of 5; c's 2 are too few to quote; 12 of 17 questions
    assert "high 0.80-1.00 over 2 (71% of questions)" in line
    # c's low shares are covered questions: "partial", none right; nothing is "weak"
    assert "partial 0.00-0.00 over 1 (29% of questions)" in line
    assert "weak - (0% of questions)" in line
    # the labels the rows record instead of the thresholds' (None)
    assert "partial 0.80-0.80 over 1 (29% of questions)" in spread(rows, None, "language")
