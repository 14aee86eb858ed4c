"""In-memory BM25 over a table's `tokens` column, ranking as LanceDB's native full-text index does.

The index (generator/index/store.py) is built with the whitespace tokenizer, tokens of 40 or more UTF-8 bytes
dropped, lower case, ASCII folding and the Snowball English stemmer, stop words kept. LanceDB scores BM25
with k1 = 1.2, b = 0.75 and idf = ln(1 + (N - n + 0.5) / (n + 0.5)); a query term repeated after
stemming ("serialized serialization") counts once per occurrence. Only equal scores may come out in a
different order: LanceDB breaks ties by its internal document ids, which the table does not expose.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

K1 = 1.2
B = 0.75
MAX_TOKEN_BYTES = 40  # LanceDB's default max_token_length: longer tokens are dropped, not cut


@dataclass
class Analyzer:
    """The index's token pipeline, memoised per distinct raw token."""
    _stems: dict[str, str] = field(default_factory=dict)
    _stemmer: Any = None

    def terms(self, text: str | None) -> list[str]:
        out: list[str] = []
        for word in (text or "").split():
            stem = self._stems.get(word)
            if stem is None:
                stem = self._stems[word] = self._analyze(word)
            if stem:
                out.append(stem)
        return out

    def _analyze(self, word: str) -> str:
        if len(word.encode("utf-8")) >= MAX_TOKEN_BYTES:
            return ""
        word = word.lower()
        if not word.isascii():
            # ASCII folding: accents dropped; characters with no ASCII form kept as they are
            word = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
        if self._stemmer is None:
            from nltk.stem.snowball import SnowballStemmer

            self._stemmer = SnowballStemmer("english")
        return str(self._stemmer.stem(word))


@dataclass
class Bm25Index:
    """Postings of one table: per term, the documents (row positions) holding it and their frequencies."""
    postings: dict[str, tuple[Any, Any]]  # term -> (numpy int32 doc positions, numpy float64 frequencies)
    norms: Any  # numpy (n,) float64: k1 * (1 - b + b * length / average length)
    size: int
    analyzer: Analyzer


def build(texts: list[str | None], analyzer: Analyzer | None = None) -> Bm25Index:
    """The index of `texts` (one per row, in row order)."""
    analyzer = analyzer or Analyzer()
    counted: list[dict[str, int]] = []
    for text in texts:
        counts: dict[str, int] = {}
        for term in analyzer.terms(text):
            counts[term] = counts.get(term, 0) + 1
        counted.append(counts)
    return from_counts(counted, analyzer)


def from_counts(counted: Sequence[Mapping[str, int]], analyzer: Analyzer) -> Bm25Index:
    """The index of documents given as term counts (one per row, in row order); `analyzer` reads the
    queries `search` is given."""
    import numpy as np

    docs: dict[str, list[int]] = {}
    freqs: dict[str, list[int]] = {}
    lengths = np.zeros(len(counted), dtype=np.float64)
    for pos, counts in enumerate(counted):
        lengths[pos] = sum(counts.values())
        for term, count in counts.items():
            docs.setdefault(term, []).append(pos)
            freqs.setdefault(term, []).append(count)
    average = float(lengths.mean()) if len(counted) else 0.0
    norms = K1 * (1 - B + B * lengths / average) if average else np.full(len(counted), K1 * (1 - B))
    postings = {t: (np.asarray(docs[t], dtype=np.int32), np.asarray(freqs[t], dtype=np.float64))
                for t in docs}
    return Bm25Index(postings, norms, len(counted), analyzer)


def search(index: Bm25Index, query: str, limit: int, keep: Any = None) -> list[tuple[int, float]]:
    """The best `limit` (row position, score) pairs for `query`, best first. `keep` (numpy bool per row,
    or None) filters rows after scoring, as a prefilter does: statistics stay those of the whole table."""
    import numpy as np

    scores = np.zeros(index.size, dtype=np.float64)
    hit = np.zeros(index.size, dtype=bool)
    for term in index.analyzer.terms(query):
        posting = index.postings.get(term)
        if posting is None:
            continue
        docs, tf = posting
        n = len(docs)
        idf = math.log(1 + (index.size - n + 0.5) / (n + 0.5))
        scores[docs] += idf * tf * (K1 + 1) / (tf + index.norms[docs])
        hit[docs] = True
    if keep is not None:
        hit &= keep
    found = np.flatnonzero(hit)
    if not len(found) or limit <= 0:
        return []
    order = found[np.lexsort((found, -scores[found]))][:limit]
    return [(int(p), float(scores[p])) for p in order]
