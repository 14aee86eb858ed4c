"""The learned file re-ranker's features and scoring (answer/retrieval/ranker.py), on inputs shaped as the
fusion hands them over."""

import math

import pytest

from answer.retrieval.ranker import FEATURES, Candidate, features, order, query_view, scores, top_share
from answer.retrieval.ranker_model import COEFFICIENTS, SEMANTIC_COEFFICIENTS


def _row(rows, i):
    return dict(zip(FEATURES, rows[i], strict=True))


def _cands():
    return [
        Candidate("src/server/router.py", 0.06, {"chunks": 1, "files": 2, "names": 1},
                  {"chunks": 4, "symbols": 0}, "code", 1.2),
        Candidate("tests/test_http_client.py", 0.03, {"chunks": 3}, {"chunks": 1}, "test", lender=True),
        Candidate("src/http/client.py", 0.015, {"files": 1, "substrings": 2}, {"substrings": 2}, "code", -4.0,
                  lifted=True),
        Candidate("docs/routing.md", 0.01, {"pages": 5}, {}, "doc"),
    ]


def test_the_features_of_each_candidate_read_what_the_fusion_knew():
    view = query_view("Fix HTTP client timeouts in the router", asks_tests=False)
    rows = features(_cands(), view, rrf_k=30.0)
    assert len(rows) == 4
    assert all(len(row) == len(FEATURES) for row in rows)
    first, test, client, doc = (_row(rows, i) for i in range(4))
    # the fused score against the best one: 0 for the first, the log of the ratio below
    assert first["fused"] == 0.0
    assert client["fused"] == pytest.approx(math.log(0.015 / 0.06))
    assert (first["first"], test["first"]) == (1.0, 0.0)
    assert (client["top3"], doc["top3"]) == (1.0, 0.0)
    # each list's rank as rrf_k / (rrf_k + rank); a list that did not find the file gives 0
    assert first["rank:chunks"] == pytest.approx(30 / 31)
    assert first["rank:files"] == pytest.approx(30 / 32)
    assert client["rank:chunks"] == 0.0
    assert client["rank:substrings"] == pytest.approx(30 / 32)
    assert first["many:chunks"] == pytest.approx(math.log(5) / 3)
    assert first["lists"] == pytest.approx(3 / 4)
    # kinds, and the length of product source clipped to [-3, 3], for a task only in `length`
    assert (test["kind:test"], doc["kind:doc"], first["kind:test"]) == (1.0, 1.0, 0.0)
    assert first["length"] == pytest.approx(1.2)
    assert client["length"] == -3.0
    assert (client["lifted"], test["lender"], first["lifted"]) == (1.0, 1.0, 0.0)
    # the file name's parts the question spells: http + client; test + http + client (2 of 3);
    # router (1 of 1); folders: src/http -> http of (src, http)
    assert client["name"] == 1.0
    assert test["name"] == pytest.approx(2 / 3)
    assert first["name"] == 1.0
    assert client["folders"] == pytest.approx(1 / 2)
    assert doc["name"] == 0.0  # "routing" is not "router": the question spells whole parts only


def test_a_question_naming_tests_marks_the_tests():
    view = query_view("Fix the router tests", asks_tests=True)
    rows = features(_cands(), view, rrf_k=30.0)
    assert _row(rows, 1)["test:asked"] == 1.0
    assert _row(rows, 0)["test:asked"] == 0.0
    assert features([], view, rrf_k=30.0) == []


def test_without_coefficients_the_fused_order_stands():
    rows = features(_cands(), query_view("router", asks_tests=False), rrf_k=30.0)
    assert order(rows, {}) == [0, 1, 2, 3]
    assert scores(rows, {}) == [row[FEATURES.index("fused")] for row in rows]


def test_coefficients_move_candidates_and_unknown_names_are_ignored():
    rows = features(_cands(), query_view("http client", asks_tests=False), rrf_k=30.0)
    # a strong weight on the file name's overlap lifts src/http/client.py (name share 1) over the router
    # (share 0 for this question) and the test (2 of 3)
    assert order(rows, {"name": 5.0, "no-such-feature": 100.0})[:2] == [2, 1]
    # a penalty on tests only: the test falls behind the client, the rest keep their fused order
    assert order(rows, {"kind:test": -3.0}) == [0, 2, 3, 1]
    got = scores(rows, {"kind:test": -3.0})
    assert got[1] == pytest.approx(math.log(0.03 / 0.06) - 3.0)


def test_the_shipped_model_names_only_known_features():
    for model in (COEFFICIENTS, SEMANTIC_COEFFICIENTS):
        assert set(model) <= set(FEATURES)
        assert all(math.isfinite(v) for v in model.values())
    # the semantic tier's ranks weigh only in the model fitted on indexes with vectors
    assert not any(name.startswith("rank:semantic") for name in COEFFICIENTS)
    assert SEMANTIC_COEFFICIENTS.get("rank:semantic", 0.0) > 0


def test_top_share_is_the_softmax_probability_of_the_best_score():
    assert top_share([]) == 0.0
    assert top_share([0.0, 0.0]) == pytest.approx(0.5)
    assert top_share([math.log(3.0), 0.0]) == pytest.approx(0.75)
    assert top_share([0.0, math.log(3.0)]) == pytest.approx(0.75)  # the best, wherever it stands
    assert top_share([1000.0, 0.0]) == pytest.approx(1.0)  # no overflow
    # without coefficients the scores are log(fused / best): the first file's share of the fused scores
    rows = features(_cands(), query_view("router", asks_tests=False), rrf_k=30.0)
    fused = [c.score for c in _cands()]
    assert top_share(scores(rows, {})) == pytest.approx(fused[0] / sum(fused))
    # a model lifting the router further is surer of it
    assert top_share(scores(rows, {"name": 2.0})) > top_share(scores(rows, {}))
