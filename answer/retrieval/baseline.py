"""A language-blind full-text search to measure sourcebook against: BM25 of a question's terms over each
file's whole text, what a developer's grep-and-read or a search box without an index of symbols does.

`sourcebook eval` ranks its questions this way too and prints the figures beside its own, so a user sees
on their own repository what the index adds over plain full-text search; bench/history_baseline.py reads
the history sets' per-language gaps with it (a gap the baseline shows as well lies in the questions and the
repositories, not in how sourcebook reads a language). It knows nothing of languages, symbols, paths or
kinds of file: terms are the index's own (generator/index/tokens.terms: identifiers whole and split into
their parts, lower case), no stemming, scored by answer/retrieval/bm25.py (LanceDB's BM25). Pure but for
`read_terms`, which reads the files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from answer.retrieval import bm25
from generator.index.tokens import terms

MAX_BYTES = 4 << 20  # a file larger than this is left unread (the scan skips huge files before this)


def text_terms(text: str) -> Counter[str]:
    """The term counts of a file's text."""
    return Counter(terms(text))


class _QueryTerms(bm25.Analyzer):
    """A question's index terms, each once (`terms` gives an identifier whole and then its parts, so a part
    can come twice), unstemmed: the documents' terms are the index's own, not the full-text index's."""

    def terms(self, text: str | None) -> list[str]:
        return list(dict.fromkeys(terms(text or "")))


class FullText:
    """The baseline's index of some files' term counts, built once and asked any number of questions."""

    def __init__(self, docs: Mapping[str, Counter[str]]) -> None:
        self.paths = sorted(docs)  # row order: equal scores come out by path
        self.index = bm25.from_counts([docs[p] for p in self.paths], _QueryTerms())

    def ranked(self, question: str, limit: int | None = None) -> list[str]:
        """The paths holding a term of the question, best first by BM25 (ties by path). A file without any
        of its terms is not ranked: a full-text search does not return it."""
        found = bm25.search(self.index, question, len(self.paths) if limit is None else limit)
        return [self.paths[pos] for pos, _ in found]


def ranked(question: str, docs: Mapping[str, Counter[str]]) -> list[str]:
    """FullText(docs).ranked(question): for a set of files asked one question."""
    return FullText(docs).ranked(question)


def read_terms(root: Path, paths: Iterable[str]) -> dict[str, Counter[str]]:
    """The term counts of each of `paths` under `root` (the indexed checkout). A file that is gone,
    unreadable, too large or reached through a link leading out of `root` is left out: the baseline ranks
    what a search of the checkout can read."""
    base = root.resolve()
    out: dict[str, Counter[str]] = {}
    for rel in paths:
        path = (base / rel).resolve()
        if not path.is_relative_to(base):
            continue
        try:
            if path.stat().st_size > MAX_BYTES:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        out[rel] = text_terms(data.decode("utf-8", "replace"))
    return out
