import subprocess
from pathlib import Path

import pytest

from bench.history_baseline import measure, source_files, table


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(repo)}).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str]:
    """A repository whose one commit holds two source files, a test and a README that all speak of 'retry'."""
    root = tmp_path / "r"
    (root / "tests").mkdir(parents=True)
    (root / "pkg").mkdir()
    (root / "pkg" / "retry.py").write_text("def backoff_delay(attempt):\n    return retry_base * attempt\n")
    (root / "pkg" / "parse.py").write_text("def parse_header(line):\n    return line.split(':')\n")
    (root / "tests" / "test_retry.py").write_text("def test_retry():\n    backoff_delay(1) retry retry\n")
    (root / "README.md").write_text("retry backoff delay retry backoff delay\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "init")
    return root / ".git", _git(root, "rev-parse", "HEAD")


def _row(question: str, gold: str, ranked: list[str], language: str, sha: str) -> dict[str, object]:
    return {"repo": "o/r", "id": question, "question": question, "gold_files": [gold], "ranked": ranked,
            "language": language, "mode": "at-commit", "commit": sha}


def test_the_baseline_ranks_only_the_files_the_judge_counts(repo):
    git_dir, sha = repo
    # the test and the README are no gold for the history sets' judge, so the baseline never ranks them
    assert sorted(source_files(git_dir, sha)) == ["pkg/parse.py", "pkg/retry.py"]


def test_lift_and_kept_are_read_against_python(repo):
    git_dir, sha = repo
    rows = [
        # the baseline finds both: its words are in the files; sourcebook finds the first, not the second
        _row("backoff delay of a retry", "pkg/retry.py", ["pkg/retry.py"], "python", sha),
        _row("split the header line", "pkg/parse.py", ["README.md"] * 6 + ["pkg/parse.py"], "python", sha),
        # no word of this one is in its file: the baseline misses it, sourcebook has it first
        _row("make it faster", "pkg/parse.py", ["pkg/parse.py"], "java", sha),
    ]
    tally, points = measure(rows, lambda _name: git_dir, lambda _name: sha)
    assert [(p.language, p.x, p.n, p.hits) for p in points] == [("python", 2 / 3, 3, 2)]
    n, base_hits, base_rr, our_hits, our_rr, kept = tally["python"]
    assert (n, base_hits, our_hits, kept) == (2, 2, 1, 1)
    assert base_rr == pytest.approx(2.0)  # each gold file first
    assert our_rr == pytest.approx(1.0 + 1 / 7)
    assert tally["java"][:2] == [1, 0]
    lines = table(tally)
    java = next(line.split() for line in lines if line.startswith("java "))
    # java: baseline 0, ours 1, lift +1; python: baseline 1, ours 0.5, lift -0.5; lift vs python +1.5
    assert float(java[6]) == pytest.approx(1.0)
    assert float(java[10]) == pytest.approx(1.5)
    python = next(line.split() for line in lines if line.startswith("python "))
    assert float(python[7]) == pytest.approx(0.5)  # kept: one of the two the baseline answers
    assert lines[-1].startswith("ALL ")
