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
