import math

from answer.answering.calibration import (
    MIN_QUESTIONS,
    SHRINK,
    Observation,
    calibrate,
    candidates,
    derive,
    labels_of,
    shrink,
)
from answer.answering.grade import GLOBAL_THRESHOLDS, Thresholds


def _obs(lead: float, cover: float, right: bool, n: int, share: float | None = None) -> list[Observation]:
    return [Observation(lead, cover, False, True, right, share) for _ in range(n)]


def test_observation_of_a_results_line():
    obs = Observation.of({"dominance": 1e9, "coverage": 0.5, "exact_symbol": 1.0}, ["a.py", "b.py"], ["a.py"])
    assert obs == Observation(math.inf, 0.5, True, True, True)
    assert not Observation.of({"dominance": 2.0, "coverage": 1.0}, [], ["a.py"]).right
    # the ranker's share as bench/history_bench.py writes it: -1 when no model ranked
    ranked = Observation.of({"dominance": 1.1, "coverage": 1.0, "share": 0.83}, ["a.py"], ["a.py"])
    assert ranked.share == 0.83
    unranked = Observation.of({"dominance": 1.1, "coverage": 1.0, "share": -1.0}, ["a.py"], ["a.py"])
    assert unranked.share is None


def test_the_share_labels_a_ranking_the_model_made_whatever_the_fused_lead():
    obs = _obs(1.05, 1.0, True, 2, share=0.9) + _obs(3.0, 1.0, True, 3, share=0.5)
    labelled = labels_of(obs, GLOBAL_THRESHOLDS)
    assert (len(labelled["high"]), len(labelled["partial"])) == (2, 3)
    assert len(labels_of(obs, Thresholds(share_high=0.4))["high"]) == 5


def test_a_repository_where_the_models_confidence_is_often_wrong_gets_a_stricter_share():
    # shares of 0.85 are right half the time here, shares of 0.92 always; the fused lead says nothing
    obs = (_obs(1.1, 1.0, True, 10, share=0.85) + _obs(1.1, 1.0, False, 10, share=0.85)
           + _obs(1.1, 1.0, True, 10, share=0.92))
    assert labels_of(obs, GLOBAL_THRESHOLDS)["high"].count(True) / 30 < 0.85
    cal = calibrate(obs)
    assert cal.derived is not None
    assert cal.derived.share_high == 0.9
    # no question was labelled by the lead: it stays the global one
    assert cal.derived.dominance_high == cal.thresholds.dominance_high == GLOBAL_THRESHOLDS.dominance_high
    assert GLOBAL_THRESHOLDS.share_high < cal.thresholds.share_high < 0.9
    assert "share 0.9" in cal.reason
    high = labels_of(obs, cal.thresholds)["high"]
    assert len(high) == 10
    assert all(high)


def test_labels_follow_the_thresholds():
    obs = _obs(1.3, 1.0, True, 3) + _obs(3.0, 1.0, True, 2) + _obs(math.inf, 1.0, False, 1)
    assert [len(v) for v in labels_of(obs, GLOBAL_THRESHOLDS).values()] == [2, 4, 0]
    lenient = Thresholds(1.25, 0.5)
    assert labels_of(obs, lenient)["high"] == [True] * 5  # a lone file still does not lead


def test_a_repository_where_a_smaller_lead_is_right_gets_a_lower_threshold_moved_toward_the_global():
    obs = _obs(1.3, 1.0, True, 20) + _obs(3.0, 1.0, True, 10) + _obs(1.3, 0.2, False, 10)
    # 30 "high", all right; the tie: stricter cover
    assert derive(obs, candidates(shares=False)) == Thresholds(1.25, 1.0)
    cal = calibrate(obs)
    weight = 40 / (40 + SHRINK)
    assert cal.derived == Thresholds(1.25, 1.0)  # no share observed: the share threshold stays
    g = GLOBAL_THRESHOLDS
    assert cal.thresholds == Thresholds(round(g.dominance_high + weight * (1.25 - g.dominance_high), 3),
                                        round(g.coverage_high + weight * (1.0 - g.coverage_high), 3))
    assert cal.thresholds.dominance_high < GLOBAL_THRESHOLDS.dominance_high
    assert cal.thresholds.coverage_partial == GLOBAL_THRESHOLDS.coverage_partial


def test_a_repository_where_the_global_high_is_often_wrong_gets_a_stricter_lead():
    # leads of 1.6 are right only half the time here; leads of 2.6 always
    obs = _obs(1.6, 1.0, True, 10) + _obs(1.6, 1.0, False, 10) + _obs(2.6, 1.0, True, 10)
    assert labels_of(obs, GLOBAL_THRESHOLDS)["high"].count(True) / 30 < 0.85
    cal = calibrate(obs)
    assert cal.derived is not None
    assert cal.derived.dominance_high == 2.5
    assert GLOBAL_THRESHOLDS.dominance_high < cal.thresholds.dominance_high < 2.5
    high = labels_of(obs, cal.thresholds)["high"]
    assert high
    assert all(high)


def test_few_questions_or_no_precise_candidate_keep_the_global_thresholds():
    few = calibrate(_obs(1.3, 1.0, True, MIN_QUESTIONS - 1))
    assert few.thresholds == GLOBAL_THRESHOLDS
    assert few.derived is None
    assert "fewer than" in few.reason
    wrong = calibrate(_obs(5.0, 1.0, False, 40))
    assert wrong.thresholds == GLOBAL_THRESHOLDS
    assert wrong.derived is None
    assert "no candidate" in wrong.reason


def test_shrink_weights():
    derived = Thresholds(2.5, 1.0)
    assert shrink(derived, GLOBAL_THRESHOLDS, 0.0) == GLOBAL_THRESHOLDS
    assert shrink(derived, GLOBAL_THRESHOLDS, 1.0) == derived
