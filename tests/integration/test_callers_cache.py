"""The callers tier's reference edges, kept between processes (generator/index/callers_cache.py): a new
process reading an index version it has seen does not resolve the reference graph again, reads back exactly
what the graph said, and trusts nothing else (another version, another code, a malformed or foreign file)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from answer.retrieval.tiers import ANALYSIS, caller_map, search_codebase
from generator.index import callers_cache
from generator.index.command import index_repository
from generator.index.store import IndexStore, open_index
from sourcebook.config import Config, load_config
from sourcebook.local_key import local_key

FILES = {
    "shop/pricing.py": ("def round_price(value):\n    return round(value, 2)\n\n\n"
                        "def discount(price, rate):\n    return round_price(price * (1 - rate))\n"),
    "shop/cart.py": ("from shop.pricing import discount, round_price\n\n\n"
                     "def total(items):\n    return round_price(sum(discount(p, r) for p, r in items))\n"),
}


def _repo(tmp_path: Path) -> Config:
    root = tmp_path / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return load_config(root)


@pytest.fixture
def config(tmp_path: Path) -> Config:
    cfg = _repo(tmp_path)
    index_repository(cfg, embedder=None)
    return cfg


def _fresh(config: Config) -> IndexStore:
    """What a new `sourcebook ask` process opens: nothing derived yet."""
    return open_index(config, embedder=None)


def _callers_of(store: IndexStore, name: str) -> set[tuple[str, str]]:
    hits = search_codebase(store, name, type="symbolic").hits
    return {(h.path, h.symbol) for h in hits} - {("shop/pricing.py", name)}


def test_a_second_process_reads_the_callers_instead_of_resolving(config: Config) -> None:
    first = _fresh(config)
    resolved = _callers_of(first, "round_price")
    assert first.memos.get(ANALYSIS) is not None  # the first process resolved the graph
    assert ("shop/cart.py", "total") in resolved
    assert ("shop/pricing.py", "discount") in resolved
    analysis = first.memos.get(ANALYSIS)
    assert analysis is not None
    graph_callers = analysis.graph.callers

    second = _fresh(config)
    assert _callers_of(second, "round_price") == resolved
    assert second.memos.get(ANALYSIS) is None  # read back: no analysis loaded, no graph resolved
    assert caller_map(second) == graph_callers


def test_a_new_index_version_resolves_again(config: Config) -> None:
    _callers_of(_fresh(config), "discount")
    pricing = config.root / "shop" / "pricing.py"
    pricing.write_text(pricing.read_text() + "\n\ndef sale(price):\n    return discount(price, 0.5)\n")
    index_repository(config, embedder=None)
    store = _fresh(config)
    assert ("shop/pricing.py", "sale") in _callers_of(store, "discount")
    assert store.memos.get(ANALYSIS) is not None  # the stored callers were of the older version


@pytest.mark.parametrize("body", [
    "not json",
    json.dumps({"format": callers_cache.CALLERS_FORMAT, "version": "another", "callers": []}),
    json.dumps({"format": 99, "callers": []}),
    json.dumps([1, 2, 3]),
])
def test_a_file_of_another_version_or_shape_is_not_trusted(config: Config, body: str) -> None:
    store = _fresh(config)
    path = callers_cache.callers_file(store, local_key())
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body, encoding="utf-8")
    assert ("shop/cart.py", "total") in _callers_of(store, "round_price")
    assert store.memos.get(ANALYSIS) is not None  # resolved, then stored over the bad file
    stored = json.loads(path.read_text(encoding="utf-8"))
    assert stored["version"] == callers_cache.index_version(store)


def test_a_planted_entry_in_the_right_shape_but_wrong_version_changes_nothing(config: Config) -> None:
    """Only this machine's processes write the folder (the user's state, keyed names); even a well-formed
    file is read only for the exact index version and code it records."""
    store = _fresh(config)
    path = callers_cache.callers_file(store, local_key())
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    planted = {"format": callers_cache.CALLERS_FORMAT, "version": "0" * 64,
               "callers": [["shop/pricing.py", "round_price", [["shop/evil.py", "steal"]]]]}
    path.write_text(json.dumps(planted), encoding="utf-8")
    assert ("shop/evil.py", "steal") not in _callers_of(store, "round_price")


def test_without_a_local_key_nothing_is_stored(config: Config) -> None:
    store = _fresh(config)
    assert callers_cache.write_callers(store, {("a.py", "f"): [("b.py", "g")]}, None) is False
    assert callers_cache.read_callers(store, None) is None


def test_a_build_leaves_the_callers_of_the_index_it_published(tmp_path: Path) -> None:
    """`build` holds the graph anyway: the first ask after it reads the callers, and they are the ones the
    stored analysis resolves to."""
    from generator.build import build
    from generator.index.stored_analysis import load_analysis

    cfg = _repo(tmp_path)
    build(cfg, site=False)
    store = _fresh(cfg)
    assert ("shop/cart.py", "total") in _callers_of(store, "round_price")
    assert store.memos.get(ANALYSIS) is None  # read back, not resolved
    assert caller_map(store) == load_analysis(_fresh(cfg)).graph.callers
    path = callers_cache.callers_file(store, local_key())
    assert path is not None
    written = path.stat().st_mtime_ns
    build(cfg, site=False)  # nothing changed: the file already holds this version
    assert path.stat().st_mtime_ns == written


def test_the_folder_keeps_only_the_most_recent_locations(config: Config, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    store = _fresh(config)  # opened under the session's key, which marked the index
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # a folder no other test writes
    path = callers_cache.callers_file(store, local_key())
    assert path is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    older = [path.parent / f"{n:064x}.json" for n in range(callers_cache.MAX_KEPT + 3)]
    for n, old in enumerate(older):
        old.write_text("{}", encoding="utf-8")
        os.utime(old, ns=(n * 10**9, n * 10**9))  # written long ago, oldest first
    other = path.parent / "notes.txt"  # not a name this module writes: never touched
    other.write_text("mine", encoding="utf-8")
    assert callers_cache.write_callers(store, {("a.py", "f"): [("b.py", "g")]}, local_key())
    kept = sorted(p.name for p in path.parent.glob("*.json"))
    assert path.name in kept
    assert len(kept) == callers_cache.MAX_KEPT
    assert not older[0].exists()
    assert older[-1].exists()
    assert other.exists()
