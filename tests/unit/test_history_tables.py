import math

import pytest

from answer.retrieval.evaluate import Outcome, Question
from bench.history_tables import size_table


def _outcomes(repo: str, language: str, hits: int, n: int) -> list[Outcome]:
    """n questions of `repo`, the first `hits` of them with their gold file ranked first."""
    out = []
    for i in range(n):
        q = Question(f"{repo}{i}", "q", ("gold.py",), {"repo": repo, "language": language, "split": "report"})
        out.append(Outcome(q, ("gold.py",) if i < hits else ("other.py",), 0.0))
    return out


def _row(lines: list[str], language: str) -> list[str]:
    return next(line.split() for line in lines if line.startswith(language + " "))


def test_size_is_held_out_of_the_language_gap():
    # both languages lose 0.1 of hit@5 per e-fold of code files; "big" repositories are e-times larger, and
    # the second language is 0.1 below what size predicts in each of its two repositories
    sizes = {"small": 10, "big": round(10 * math.e ** 2), "mid": round(10 * math.e),
             "large": round(10 * math.e ** 3)}
    outcomes = (_outcomes("o/small", "python", 90, 100) + _outcomes("o/big", "python", 70, 100)
                + _outcomes("o/mid", "java", 70, 100) + _outcomes("o/large", "java", 50, 100))
    lines = size_table(outcomes, sizes)
    assert lines, "four sized repositories fit a line"
    java, python = _row(lines, "java"), _row(lines, "python")
    # observed: java 0.600 against python 0.800, a gap of 0.2; by size, half of it is the repositories' size
    assert float(java[2]) == pytest.approx(0.6)
    assert float(python[2]) == pytest.approx(0.8)
    assert float(java[-1]) == pytest.approx(-0.1, abs=0.03)
    assert float(python[-1]) == pytest.approx(0.0)


def test_too_few_repositories_or_sizes_fit_nothing():
    outcomes = _outcomes("o/a", "python", 5, 10) + _outcomes("o/b", "java", 5, 10)
    assert size_table(outcomes, {"a": 10, "b": 100}) == []
    three = outcomes + _outcomes("o/c", "go", 5, 10)
    assert size_table(three, {"a": 10, "b": 100}) == []  # c has no size: left out
    assert size_table(three, {"a": 10, "b": 10, "c": 10}) == []  # one size: no slope
    assert size_table(three, {"a": 10, "b": 100, "c": 1000})
