"""bench/calibrate.py: thresholds derived from measured labels."""

from __future__ import annotations

import math

from bench.calibrate import LONE, derive, labels_of


def _row(dominance: float, coverage: float, right: bool, exact: bool = False) -> dict:
    return {"ranked": ["a.py" if right else "b.py"], "gold_files": ["a.py"],
            "features": {"dominance": dominance, "coverage": coverage, "exact_symbol": float(exact)}}


def test_derive_picks_the_widest_high_that_stays_precise() -> None:
    rows = [_row(2.0, 1.0, True)] * 6 + [_row(1.3, 1.0, True)] * 3 + [_row(1.3, 1.0, False)] * 3
    candidates = [(1.25, 0.5, 0.34, math.inf), (1.5, 0.5, 0.34, math.inf)]
    # a lead of 1.25 labels 12 "high" but only 0.75 of them right; 1.5 labels 6, all right
    assert derive(rows, candidates, 0.85) == (1.5, 0.5, 0.34, math.inf)
    assert derive(rows, candidates, 0.7) == (1.25, 0.5, 0.34, math.inf)
    assert derive(rows, [(3.0, 0.5, 0.34, math.inf)], 0.85) is None  # nothing is "high" at all


def test_a_lone_file_and_an_exact_symbol_follow_the_thresholds() -> None:
    lone = _row(LONE, 1.0, True)
    exact = _row(1.1, 1.0, True, exact=True)
    assert labels_of([lone, exact], (1.5, 0.5, 0.34, math.inf))["partial"] == [1.0, 1.0]
    assert labels_of([exact], (1.5, 0.5, 0.34, 1.0))["high"] == [1.0]
    assert labels_of([lone], (1.5, 0.5, 0.34, 1.0))["high"] == []  # a lone file does not lead
    lone_exact = _row(LONE, 1.0, True, exact=True)
    assert labels_of([lone_exact], (1.5, 0.5, 0.34, math.inf))["high"] == [1.0]  # unless it defines the name
