import json

from bench.history_misses import misses


def _record(repo: str, split: str, ranked: list[str], gold: list[str]) -> str:
    return json.dumps({"repo": repo, "split": split, "id": "x", "mode": "pinned", "question": "q",
                       "ranked": ranked, "gold_files": gold})


def test_only_tune_misses_below_k_are_listed():
    lines = [_record("o/a", "tune", ["x", "y", "g"], ["g"]),  # rank 3: a miss at k=2
             _record("o/a", "tune", ["g", "y"], ["g"]),  # rank 1: a hit
             _record("o/b", "tune", ["x", "y"], ["g"]),  # never ranked
             _record("o/c", "report", ["x"], ["g"])]  # REPORT is never shown
    found = misses(lines, set(), k=2)
    assert [(r["repo"], r["rank"]) for r in found] == [("o/a", 3), ("o/b", 0)]
    assert [r["repo"] for r in misses(lines, {"b"}, k=2)] == ["o/b"]
    assert [r["repo"] for r in misses(lines, set(), k=3)] == ["o/b"]
