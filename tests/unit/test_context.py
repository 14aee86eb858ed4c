"""Context packing: priority order, exact budget, and the top match always present."""

from __future__ import annotations

import pytest

from answer.retrieval.packing import (
    Candidate,
    count_tokens,
    expand,
    pack,
    parse_target,
)
from sourcebook.errors import UsageError

FILES = {
    "app.py": "\n".join(f"line {i} of app" for i in range(1, 201)),
    "util.py": "\n".join(f"util {i}" for i in range(1, 41)),
}


def read(path: str, start: int, end: int) -> str | None:
    text = FILES.get(path)
    if text is None:
        return None
    return "\n".join(text.split("\n")[start - 1:end])


def test_count_tokens_rule() -> None:
    assert count_tokens("") == 0
    assert count_tokens("abcd") == 1
    assert count_tokens("abcde") == 2


@pytest.mark.parametrize("budget", [1, 7, 50, 123, 400, 5000])
def test_budget_is_never_exceeded_and_used_tokens_is_exact(budget: int) -> None:
    cands = [Candidate("app.py", 1, 30, "match", 1.0, "a"),
             Candidate("util.py", 1, 10, "match", 0.5, "b"),
             Candidate("app.py", 100, 120, "callee", 0.5, "c"),
             Candidate("util.py", 20, 40, "caller", 0.2, "d")]
    packed = pack(cands, read, budget)
    assert packed.used_tokens == sum(count_tokens(s.text) for s in packed.spans)
    assert all(s.tokens == count_tokens(s.text) for s in packed.spans)
    assert packed.used_tokens <= budget
    assert packed.spans, "a matched query never comes back empty"
    assert packed.spans[0].path == "app.py"
    assert packed.spans[0].start_line == 1


def test_top_match_is_truncated_to_whole_lines_when_it_alone_overflows() -> None:
    packed = pack([Candidate("app.py", 1, 200, "match", 1.0, "big"),
                   Candidate("util.py", 1, 2, "match", 0.5, "small")], read, 20)
    top = packed.spans[0]
    assert top.truncated
    assert top.text == read("app.py", 1, top.end_line)
    assert 1 <= top.end_line < 200
    assert packed.used_tokens <= 20
    # the small second match still fits in what is left, or is counted as skipped
    assert len(packed.spans) == 2 or packed.skipped == 1


def test_a_single_overlong_line_is_cut_by_characters() -> None:
    FILES["long.py"] = "x" * 1000
    try:
        packed = pack([Candidate("long.py", 1, 1, "match", 1.0)], read, 10)
    finally:
        del FILES["long.py"]
    assert packed.spans[0].text == "x" * 40
    assert packed.used_tokens == 10


def test_greedy_skips_what_does_not_fit_but_keeps_smaller_later_spans() -> None:
    cands = [Candidate("util.py", 1, 5, "match", 1.0),  # ~ 8 chars * 5 lines
             Candidate("app.py", 1, 200, "callee", 0.9),  # far too big
             Candidate("util.py", 30, 31, "caller", 0.1)]
    packed = pack(cands, read, 30)
    assert [(s.path, s.reason) for s in packed.spans] == [("util.py", "match"), ("util.py", "caller")]
    assert packed.skipped == 1


def test_duplicates_and_contained_spans_are_dropped() -> None:
    cands = [Candidate("app.py", 1, 30, "match", 1.0), Candidate("app.py", 5, 10, "callee", 1.0),
             Candidate("app.py", 1, 30, "caller", 1.0)]
    packed = pack(cands, read, 10_000)
    assert len(packed.spans) == 1


def test_unreadable_top_candidate_passes_the_guarantee_to_the_next() -> None:
    packed = pack([Candidate("gone.py", 1, 3, "match", 1.0), Candidate("app.py", 1, 200, "match", 0.5)],
                  read, 5)
    assert packed.spans[0].path == "app.py"
    assert packed.spans[0].truncated


def test_bad_budget_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        pack([], read, 0)


def test_expand_orders_seeds_then_callees_then_ranked_callers() -> None:
    seeds = [Candidate("b.py", 1, 2, "match", 0.2, "low"), Candidate("a.py", 1, 5, "match", 0.9, "top")]
    calls = {("a.py", "top"): [("c.py", "helper"), ("c.py", "unknown")]}
    callers = {("a.py", "top"): [("d.py", "minor"), ("d.py", "major")]}
    where = {("c.py", "helper"): (3, 9), ("d.py", "minor"): (1, 2), ("d.py", "major"): (10, 20)}
    out = expand(seeds, calls, callers, where.get, rank={("d.py", "major"): 0.9, ("d.py", "minor"): 0.1})
    assert [(c.reason, c.symbol) for c in out] == [
        ("match", "top"), ("match", "low"), ("callee", "helper"), ("caller", "major"), ("caller", "minor")]
    assert out[2].via == "top"
    assert (out[2].start_line, out[2].end_line) == (3, 9)


@pytest.mark.parametrize(("text", "kind", "value", "lines"), [
    ("src/app.py:10-40", "range", "src/app.py", (10, 40)),
    ("src/app.py:12", "range", "src/app.py", (12, 12)),
    ("src/app.py", "file", "src/app.py", (0, 0)),
    ("Flask.route", "symbol", "Flask.route", (0, 0)),
    ("make_response", "symbol", "make_response", (0, 0)),
    ("docs/guide.md", "file", "docs/guide.md", (0, 0)),
])
def test_parse_target(text: str, kind: str, value: str, lines: tuple[int, int]) -> None:
    target = parse_target(text, lambda p: p in {"src/app.py"})
    assert (target.kind, target.value, (target.start_line, target.end_line)) == (kind, value, lines)


@pytest.mark.parametrize("text", ["", "   ", "app.py:0", "app.py:9-3", "what is this?"])
def test_parse_target_refuses_garbage(text: str) -> None:
    with pytest.raises(UsageError):
        parse_target(text, lambda p: False)


def test_named_targets_are_cut_to_the_remaining_budget_not_dropped() -> None:
    cands = [Candidate("util.py", 1, 2, "target", 1.0), Candidate("app.py", 1, 200, "target", 1.0),
             Candidate("util.py", 30, 31, "caller", 0.1)]
    packed = pack(cands, read, 100)
    assert [s.path for s in packed.spans[:2]] == ["util.py", "app.py"]
    assert packed.spans[1].truncated
    assert packed.used_tokens <= 100


def test_edge_overlaps_are_trimmed_so_no_line_is_paid_twice() -> None:
    cands = [Candidate("app.py", 10, 20, "match", 1.0), Candidate("app.py", 15, 30, "callee", 1.0),
             Candidate("app.py", 5, 12, "caller", 1.0), Candidate("app.py", 1, 40, "caller", 1.0)]
    packed = pack(cands, read, 10_000)
    assert [(s.start_line, s.end_line) for s in packed.spans] == [(10, 20), (21, 30), (5, 9), (1, 40)]
    assert packed.spans[1].text == read("app.py", 21, 30)


def test_trimming_reaches_a_fixpoint_whatever_the_packing_order() -> None:
    cands = [Candidate("app.py", 21, 30, "match", 1.0), Candidate("app.py", 10, 20, "match", 0.9),
             Candidate("app.py", 15, 35, "callee", 1.0)]
    packed = pack(cands, read, 10_000)
    assert [(s.start_line, s.end_line) for s in packed.spans] == [(21, 30), (10, 20), (31, 35)]
