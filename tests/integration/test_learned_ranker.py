"""The learned file re-ranker (answer/retrieval/ranker.py) through search_codebase on a small real index:
it re-orders the fused files, keeps the fused scores' scale, and is off with Weights(ranker=False), for a
question about how the code works and for one asking for tests or docs; with the shipped model a task asking
for tests gets the test file first; the model's probability of its first file comes with the ranking."""

import dataclasses
import math

import pytest

from answer.retrieval import ranker_model
from answer.retrieval.ranker import FEATURES, scores, top_share
from answer.retrieval.tiers import DEFAULT_WEIGHTS, file_candidates, search_codebase
from generator.index.command import index_repository
from generator.index.store import open_index
from sourcebook.config import load_config
from tests.support.index_repos import FakeEmbedder

HAND = dataclasses.replace(DEFAULT_WEIGHTS, ranker=False)


def _store(make_repo):
    # the question's words fill one big module (many chunks match) while the module it names by file
    # name matches them once
    crowd = "".join(f"def retry_request_{i}(session, timeout):\n    # retry the request after a timeout\n"
                    f"    return session.retry(timeout={i})\n\n\n" for i in range(25))
    files = {
        "pkg/session.py": crowd,
        "pkg/backoff.py": "def wait(attempt):\n    # how long a retry waits: grows with the attempt\n"
                          "    return 2 ** attempt\n",
        "pkg/util.py": "def unrelated():\n    return 1\n",
    }
    root = make_repo(files)
    config = load_config(root)
    index_repository(config, embedder=None)
    return open_index(config)


def test_the_ranker_reorders_the_fused_files_and_keeps_their_scores_scale(make_repo, monkeypatch):
    store = _store(make_repo)
    question = "Retry backoff waits too long after a request timeout"
    hand = search_codebase(store, question, "hybrid", limit=10, weights=HAND)
    assert [f.path for f in hand.files][:2] == ["pkg/session.py", "pkg/backoff.py"]
    # a model weighing the file name the question spells lifts pkg/backoff.py over the crowd
    monkeypatch.setattr(ranker_model, "COEFFICIENTS", {"name": 5.0})
    ranked = search_codebase(store, question, "hybrid", limit=10)
    assert [f.path for f in ranked.files][:2] == ["pkg/backoff.py", "pkg/session.py"]
    # the same files, and the k-th file takes the k-th fused score: the scores' spread is the fusion's
    assert sorted(f.path for f in ranked.files) == sorted(f.path for f in hand.files)
    assert [f.score for f in ranked.files] == [f.score for f in hand.files]
    # a file keeps its own tiers
    assert ranked.files[0].tiers == next(f.tiers for f in hand.files if f.path == "pkg/backoff.py")
    # ranker=False is the hand fusion whatever the model, and a single-tier search is never re-ranked
    assert search_codebase(store, question, "hybrid", limit=10, weights=HAND).files == hand.files
    lexical = search_codebase(store, question, "lexical", limit=10)
    assert lexical.files == search_codebase(store, question, "lexical", limit=10, weights=HAND).files
    # a question asking how the code works keeps the hand fusion (the ranker ranks tasks and reports)
    asked = "How long does a retry wait after a request timeout?"
    assert (search_codebase(store, asked, "hybrid", limit=10).files
            == search_codebase(store, asked, "hybrid", limit=10, weights=HAND).files)
    # nor does a task asking for tests or documentation (the fitting sets' gold is never either)
    for asking in ("Fix the tests of the retry backoff after a request timeout",
                   "Fix the docs of the retry backoff after a request timeout"):
        assert (search_codebase(store, asking, "hybrid", limit=10).files
                == search_codebase(store, asking, "hybrid", limit=10, weights=HAND).files)
    # no coefficients: the fused order
    monkeypatch.setattr(ranker_model, "COEFFICIENTS", {})
    assert search_codebase(store, question, "hybrid", limit=10).files == hand.files


def test_file_candidates_give_the_fused_top_files_and_one_feature_row_each(make_repo):
    store = _store(make_repo)
    question = "Retry backoff waits too long after a request timeout"
    hits, rows = file_candidates(store, question, HAND)
    hand = search_codebase(store, question, "hybrid", limit=10, weights=HAND)
    assert [h.path for h in hits] == [f.path for f in hand.files]
    assert len(rows) == len(hits)
    named = FEATURES.index("name")
    assert rows[[h.path for h in hits].index("pkg/backoff.py")][named] == 1.0
    assert rows[[h.path for h in hits].index("pkg/session.py")][named] == 0.0  # "session" is not spelled
    assert file_candidates(store, "   ", HAND) == ([], [])


def test_with_the_shipped_model_a_task_asking_for_tests_ranks_the_test_first(make_repo):
    code = ("def bulk_discount(cart):\n    # round half cents down\n"
            "    return round(cart.total * cart.rate, 2)\n")
    test = "".join(f"def test_bulk_discount_rounds_half_cents_{i}(cart):\n"
                   f"    assert bulk_discount(cart) == {i}\n\n\n" for i in range(6))
    files = {"shop/discount.py": code, "checks/test_discount_rules.py": test,
             "docs/discounts.md": "# Discounts\n\nA bulk discount rounds half cents down.\n"}
    files |= {f"shop/part{i}.py": f"def part_{i}(order):\n    return order[{i}]\n" for i in range(5)}
    root = make_repo(files)
    config = load_config(root)
    index_repository(config, embedder=None)
    store = open_index(config)

    def first(question: str) -> str:
        return search_codebase(store, question, "hybrid", limit=5).files[0].path

    assert first("Fix the bulk discount rounding of half cents") == "shop/discount.py"
    assert first("Fix the tests of the bulk discount rounding") == "checks/test_discount_rules.py"
    assert first("Add a test for the bulk discount rounding of half cents") == "checks/test_discount_rules.py"


def test_search_codebase_gives_the_models_probability_of_its_first_file(make_repo, monkeypatch):
    store = _store(make_repo)
    question = "Retry backoff waits too long after a request timeout"
    monkeypatch.setattr(ranker_model, "COEFFICIENTS", {"name": 5.0})
    ranked = search_codebase(store, question, "hybrid", limit=10)
    # the softmax of the model's own scores over the files it re-ranked (file_candidates: the same ones)
    _hits, rows = file_candidates(store, question)
    scored = scores(rows, {"name": 5.0})
    assert ranked.top_share == pytest.approx(top_share(scored))
    assert ranked.top_share == pytest.approx(1 / sum(math.exp(s - max(scored)) for s in scored))
    assert 0.5 < ranked.top_share < 1.0  # the file name lifts pkg/backoff.py well clear of the rest
    # a model weighing the name more is surer of the same first file
    monkeypatch.setattr(ranker_model, "COEFFICIENTS", {"name": 9.0})
    surer = search_codebase(store, question, "hybrid", limit=10)
    assert surer.files[0].path == ranked.files[0].path == "pkg/backoff.py"
    assert surer.top_share > ranked.top_share
    # where no model ranks (the hand fusion, a question about how the code works, no coefficients), no share
    assert search_codebase(store, question, "hybrid", limit=10, weights=HAND).top_share is None
    assert search_codebase(store, "How long does a retry wait after a timeout?", "hybrid").top_share is None
    monkeypatch.setattr(ranker_model, "COEFFICIENTS", {})
    assert search_codebase(store, question, "hybrid", limit=10).top_share is None


def test_an_index_with_vectors_is_ranked_by_the_model_fitted_with_the_semantic_lists(make_repo, monkeypatch,
                                                                                    tmp_path):
    # one tree indexed without and with an embedder: the semantic tier runs only for the second, and the
    # coefficients fitted with its ranks among the features (SEMANTIC_COEFFICIENTS) rank it
    question = "Retry backoff waits too long after a request timeout"
    plain = _store(make_repo)  # the tree make_repo wrote to tmp_path/repo
    config = load_config(tmp_path / "repo", {"out_dir": str(tmp_path / "vec")})
    embedder = FakeEmbedder()
    index_repository(config, embedder=embedder)
    vectors = open_index(config, embedder=embedder)

    def paths(store, **kw):
        return [f.path for f in search_codebase(store, question, "hybrid", limit=10, **kw).files]

    hand = paths(vectors, weights=HAND)
    assert hand[:2] == ["pkg/session.py", "pkg/backoff.py"]
    assert not any("semantic" in note for note in search_codebase(vectors, question, "hybrid").notes)
    assert any("semantic" in note for note in search_codebase(plain, question, "hybrid").notes)  # skipped
    monkeypatch.setattr(ranker_model, "COEFFICIENTS", {})
    monkeypatch.setattr(ranker_model, "SEMANTIC_COEFFICIENTS", {"name": 5.0})
    assert paths(vectors)[:2] == ["pkg/backoff.py", "pkg/session.py"]
    assert paths(plain) == paths(plain, weights=HAND)  # without vectors the other set ranks: none here
    monkeypatch.setattr(ranker_model, "COEFFICIENTS", {"name": 5.0})
    monkeypatch.setattr(ranker_model, "SEMANTIC_COEFFICIENTS", {})
    assert paths(vectors) == hand
    assert paths(plain)[0] == "pkg/backoff.py"
