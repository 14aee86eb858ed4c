"""A ranked test file lifts the source file it tests (answer/retrieval/subjects.py), through the real
search interface on a small index."""

import dataclasses

import pytest

from answer.retrieval.tiers import Weights, search_codebase
from generator.index.command import index_repository
from generator.index.store import open_index
from sourcebook.config import load_config

# the change's words are spelled out by the test's cases; the code it changed says them only in passing
CART = ("def add_item(cart, sku, qty):\n    line = cart.lines.setdefault(sku, 0)\n"
        "    cart.lines[sku] = line + qty\n    return apply_rules(cart)\n\n\n"
        "def apply_rules(cart):\n    total = sum(cart.prices[s] * q for s, q in cart.lines.items())\n"
        "    return round(total * (1 - cart.rate), 2)\n")
TEST_CART = "".join(
    f"def test_bulk_discount_rounds_half_cents_{i}(cart):\n"
    f"    # a bulk discount on {i} items rounds half cents down\n"
    f"    add_item(cart, 'sku{i}', {i})\n    assert cart.discount == bulk_discount({i})\n\n\n"
    for i in range(8))
OTHER = {f"shop/part{i}.py": f"def part_{i}(order):\n    # bulk orders of part {i}\n    return order[{i}]\n"
         for i in range(6)}


def test_a_ranked_test_lifts_the_file_it_tests(make_repo):
    root = make_repo({"shop/cart.py": CART, "tests/test_cart.py": TEST_CART,
                      "shop/pricing.py": "def price_of(sku):\n    # a rounded unit price\n    return 1\n",
                      **OTHER})
    config = load_config(root)
    index_repository(config, embedder=None)
    store = open_index(config)
    question = "bulk discount rounds half cents"
    # a task holds tests further back (Weights.task_test_prior): here the test prior of every question
    # (and the hand fusion alone: the learned ranker re-assigns scores by position)
    base = Weights(task_test_prior=Weights().test_prior, ranker=False)
    lifted = search_codebase(store, question, limit=20, weights=base).files
    plain = search_codebase(store, question, limit=20,
                            weights=dataclasses.replace(base, subjects=0.0)).files
    ranked = [f.path for f in lifted]
    unlifted = [f.path for f in plain]
    assert unlifted[0] == "tests/test_cart.py"
    # its subject rises with a share of the test's evidence, the other files keep their scores
    assert ranked.index("shop/cart.py") < unlifted.index("shop/cart.py")
    assert ranked.index("shop/cart.py") < ranked.index("tests/test_cart.py")
    scores = {f.path: f.score for f in lifted}
    before = {f.path: f.score for f in plain}
    assert scores["shop/cart.py"] > before["shop/cart.py"]
    # the test that lent its evidence takes the test prior twice; the other files keep their scores
    prior = base.test_prior
    assert scores["tests/test_cart.py"] == pytest.approx(before["tests/test_cart.py"] * prior, abs=2e-6)
    assert all(scores[p] == before[p] for p in before if p not in ("shop/cart.py", "tests/test_cart.py"))


def test_a_test_asked_for_keeps_its_score_after_lifting_its_subject(make_repo):
    root = make_repo({"shop/cart.py": CART, "tests/test_cart.py": TEST_CART, **OTHER})
    config = load_config(root)
    index_repository(config, embedder=None)
    store = open_index(config)
    question = "which tests check that a bulk discount rounds half cents"
    lifted = {f.path: f.score for f in search_codebase(store, question, limit=20).files}
    plain = {f.path: f.score for f in search_codebase(store, question, limit=20,
                                                      weights=Weights(subjects=0.0)).files}
    assert lifted["shop/cart.py"] > plain["shop/cart.py"]
    assert lifted["tests/test_cart.py"] == plain["tests/test_cart.py"]
