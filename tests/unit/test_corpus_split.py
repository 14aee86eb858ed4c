"""bench/corpus.py's TUNE split: the first repository listed per language, plus those marked `split = "tune"`,
so that adding TUNE repositories leaves the REPORT split as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.corpus import CorpusError, load, tune_split

CORPUS = """
[[repo]]
name = "a/first-java"
commit = "1"
language = "java"

[[repo]]
name = "b/second-java"
commit = "2"
language = "java"

[[repo]]
name = "c/first-php"
commit = "3"
language = "php"

[[repo]]
name = "d/more-java"
commit = "4"
language = "java"
split = "tune"
"""


def test_marked_repositories_join_the_first_of_each_language(tmp_path: Path) -> None:
    path = tmp_path / "corpus.toml"
    path.write_text(CORPUS, encoding="utf-8")
    repos = load(path)
    assert tune_split(repos) == {"a/first-java", "c/first-php", "d/more-java"}
    report = {r.name for r in repos} - tune_split(repos)
    assert report == {"b/second-java"}


def test_an_unknown_split_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "corpus.toml"
    path.write_text(CORPUS.replace('split = "tune"', 'split = "report"'), encoding="utf-8")
    with pytest.raises(CorpusError, match="split"):
        load(path)

