from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from answer.answering.episodes import EpisodeStore, scope_intersects, select_episode
from answer.answering.response import Episode
from answer.retrieval.paths import normalize_scope
from sourcebook.errors import UsageError


def _ep(scope: str, when: str = "2026-01-01T00:00:00+00:00", text: str = "fact") -> Episode:
    return Episode(text=text, scope=scope, recorded_at=when)


def test_normalize_scope() -> None:
    assert normalize_scope(None) == ""
    assert normalize_scope(".") == ""
    assert normalize_scope("./src/flask") == "src/flask"
    assert normalize_scope("./src/flask/") == "src/flask/"  # a prefix: the trailing "/" means the directory
    with pytest.raises(UsageError):
        normalize_scope("../outside")
    with pytest.raises(UsageError):
        normalize_scope("/etc")


def test_scope_intersects_prefix_not_substring() -> None:
    assert scope_intersects("src/flask", ["src/flask/app.py"])
    assert scope_intersects("src/flask/app.py", ["src/flask/app.py"])
    assert scope_intersects("", ["anything.py"])
    assert not scope_intersects("src/fla", ["src/flask/app.py"])
    assert not scope_intersects("docs", ["src/flask/app.py"])


def test_never_at_high_confidence() -> None:
    assert select_episode([_ep("src")], ["src/a.py"], "high") is None
    assert select_episode([_ep("src")], ["src/a.py"], "medium") is not None


def test_only_when_scope_intersects_answer_files() -> None:
    assert select_episode([_ep("docs")], ["src/a.py"], "low") is None
    assert select_episode([_ep("docs")], [], "low") is None


def test_at_most_one_most_specific_then_newest() -> None:
    episodes = [
        _ep("", "2026-03-01T00:00:00+00:00", "repo-wide"),
        _ep("src", "2026-01-01T00:00:00+00:00", "old src"),
        _ep("src", "2026-02-01T00:00:00+00:00", "new src"),
    ]
    chosen = select_episode(episodes, ["src/a.py"], "low")
    assert chosen is not None
    assert chosen.text == "new src"


def test_store_round_trip_and_auto_dedupe(tmp_path: Path) -> None:
    store = EpisodeStore(tmp_path)
    when = datetime(2026, 5, 1, tzinfo=UTC)
    store.record("  tests are   flaky on CI ", "./tests", now=when)
    assert store.record_auto("src/a.py changed after indexing", "src/a.py") is not None
    assert store.record_auto("src/a.py changed after indexing", "src/a.py") is None
    episodes = store.all()
    assert [e.text for e in episodes] == ["tests are flaky on CI", "src/a.py changed after indexing"]
    assert episodes[0].scope == "tests"
    assert episodes[0].recorded_at.startswith("2026-05-01")
    assert episodes[1].source == "auto"
    with pytest.raises(UsageError):
        store.record("   ")


def test_concurrent_appends_never_interleave(tmp_path: Path) -> None:
    store = EpisodeStore(tmp_path)

    def writer(n: int) -> None:
        for i in range(25):
            # 4-byte characters: each record is ~7 KB, past PIPE_BUF, yet within the 2,000-character cap
            store.record(f"writer {n} fact {i} " + "\U0001F600" * 1900, "src")

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store.all()) == 100


def test_corrupt_line_is_skipped(tmp_path: Path) -> None:
    store = EpisodeStore(tmp_path)
    store.record("good", "src")
    with store.path.open("a") as fh:
        fh.write('{"text": "half\n')
    store.record("also good", "src")
    assert [e.text for e in store.all()] == ["good", "also good"]
