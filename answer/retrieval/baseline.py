"""A language-blind full-text search to measure sourcebook against: BM25 of a question's terms over each
file's whole text, what a developer's grep-and-read or a search box without an index of symbols does.

`sourcebook eval` ranks its questions this way too and prints the figures beside its own, so a user sees
on their own repository what the index adds over plain full-text search; bench/history_baseline.py reads
the history sets' per-language gaps with it (a gap the baseline shows as well lies in the questions and the
repositories, not in how sourcebook reads a language). It knows nothing of languages, symbols, paths or
kinds of file: terms are the index's own (generator/index/tokens.terms: identifiers whole and split into
their parts, lower case), no stemming, BM25 with LanceDB's constants (k1 1.2, b 0.75). Pure but for
`read_terms`, which reads the files.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from generator.index.tokens import terms

K1, B = 1.2, 0.75
MAX_BYTES = 4 << 20  # a file larger than this is left unread (the scan skips huge files before this)


def text_terms(text: str) -> Counter[str]:
    """The term counts of a file's text."""
    return Counter(terms(text))


def ranked(question: str, docs: Mapping[str, Counter[str]]) -> list[str]:
    """The paths of `docs` holding a term of the question, best first by BM25 (ties by path). A file
    without any of its terms is not ranked: a full-text search does not return it."""
    wanted = set(terms(question))
    if not docs or not wanted:
        return []
    average = sum(sum(c.values()) for c in docs.values()) / len(docs) or 1.0
    df = {t: sum(1 for c in docs.values() if t in c) for t in wanted}
    idf = {t: math.log(1 + (len(docs) - n + 0.5) / (n + 0.5)) for t, n in df.items() if n}
    score: dict[str, float] = {}
    for path, counts in docs.items():
        norm = K1 * (1 - B + B * sum(counts.values()) / average)
        s = sum(weight * counts[t] * (K1 + 1) / (counts[t] + norm)
                for t, weight in idf.items() if t in counts)
        if s > 0:
            score[path] = s
    return sorted(score, key=lambda p: (-score[p], p))


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
