from __future__ import annotations

import os
from pathlib import Path

import pytest

from answer.answering.cache import AnswerCache, cache_key
from answer.answering.response import AnswerResponse


def _reply(citations: list[str], degraded: str | None = None) -> AnswerResponse:
    confidence = "medium" if degraded else "high"
    return AnswerResponse(answer="It works (a.py).", citations=citations, confidence=confidence,  # type: ignore[arg-type]
                          degraded=degraded)  # type: ignore[arg-type]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    return root


def test_key_normalizes_question_and_separates_scope_repo_state() -> None:
    base = cache_key("What does a() do?", None, None, "v1")
    assert cache_key("  what does A() do ", None, None, "v1") == base
    assert cache_key("What does a() do?", "src", None, "v1") != base
    assert cache_key("What does a() do?", None, "other", "v1") != base
    assert cache_key("What does a() do?", None, None, "v2") != base


def test_round_trip(repo: Path) -> None:
    cache = AnswerCache(repo / ".sourcebook", repo)
    key = cache_key("q", None, None, "s")
    assert cache.get(key, "p1") is None
    assert cache.put(key, _reply(["a.py"]), "p1", hedged=False)
    hit = cache.get(key, "p1")
    assert hit is not None
    assert hit.citations == ["a.py"]


def test_degraded_reply_is_not_stored(repo: Path) -> None:
    cache = AnswerCache(repo / ".sourcebook", repo)
    key = cache_key("q", None, None, "s")
    assert not cache.put(key, _reply(["a.py"], degraded="no-llm-provider"), "p1", hedged=False)
    assert cache.get(key, "p1") is None


def test_changed_cited_file_invalidates(repo: Path) -> None:
    cache = AnswerCache(repo / ".sourcebook", repo)
    key = cache_key("q", None, None, "s")
    cache.put(key, _reply(["a.py"]), "p1", hedged=False)
    # a touch alone (same bytes) keeps the entry
    os.utime(repo / "a.py", ns=(1, 1))
    assert cache.get(key, "p1") is not None
    (repo / "a.py").write_text("def a():\n    return 2\n")
    assert cache.get(key, "p1") is None
    assert not list(cache.dir.glob("*.json"))  # deleted on read


def test_deleted_cited_file_invalidates(repo: Path) -> None:
    cache = AnswerCache(repo / ".sourcebook", repo)
    key = cache_key("q", None, None, "s")
    cache.put(key, _reply(["a.py"]), "p1", hedged=False)
    (repo / "a.py").unlink()
    assert cache.get(key, "p1") is None


def test_hedged_answer_resynthesized_when_pipeline_changes(repo: Path) -> None:
    cache = AnswerCache(repo / ".sourcebook", repo)
    hedged, plain = cache_key("hedged", None, None, "s"), cache_key("plain", None, None, "s")
    cache.put(hedged, _reply(["a.py"]), "p1", hedged=True)
    cache.put(plain, _reply(["a.py"]), "p1", hedged=False)
    assert cache.get(hedged, "p1") is not None
    assert cache.get(hedged, "p2") is None
    assert cache.get(plain, "p2") is not None


def test_corrupt_entry_is_dropped(repo: Path) -> None:
    cache = AnswerCache(repo / ".sourcebook", repo)
    key = cache_key("q", None, None, "s")
    cache.put(key, _reply(["a.py"]), "p1", hedged=False)
    [entry] = cache.dir.glob("*.json")
    entry.write_text("{not json")
    assert cache.get(key, "p1") is None
    assert not entry.exists()


def test_bad_key_never_reaches_the_filesystem(repo: Path) -> None:
    cache = AnswerCache(repo / ".sourcebook", repo)
    with pytest.raises(ValueError, match="bad cache key"):
        cache.get("../../etc/passwd", "p1")


def test_entries_from_another_machine_are_never_served(repo: Path) -> None:
    # answers/ sits in the repository's output folder: a repository can commit entries for the questions it
    # expects, under the name the plain key would give or under another machine's keyed name
    attacker = AnswerCache(repo / ".sourcebook", repo, secret=b"a" * 32)
    key = cache_key("How is auth done?", None, None, "s")
    assert attacker.put(key, _reply(["a.py"]), "p1", hedged=False)
    [planted] = attacker.dir.glob("*.json")
    (attacker.dir / f"{key}.json").write_bytes(planted.read_bytes())
    user = AnswerCache(repo / ".sourcebook", repo, secret=b"u" * 32)
    assert user.get(key, "p1") is None
    assert attacker.get(key, "p1") is not None  # the entry itself was valid
    local = AnswerCache(repo / ".sourcebook", repo)  # this user's own key, made on first use
    assert local.secret
    assert local.get(key, "p1") is None


def test_no_local_key_means_no_cache(repo: Path) -> None:
    from sourcebook.local_key import local_key

    assert local_key({}) is None  # no home, no XDG_STATE_HOME
    cache = AnswerCache(repo / ".sourcebook", repo, secret=b"")
    key = cache_key("q", None, None, "s")
    assert not cache.put(key, _reply(["a.py"]), "p1", hedged=False)
    assert cache.get(key, "p1") is None
    assert not cache.dir.exists()
