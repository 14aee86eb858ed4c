"""What get_answer points at for a question, without synthesizing: for evaluation (`sourcebook eval`).

The same retrieval as the answer (evidence.retrieve): its ranked files, the spans it names (get_answer's
`candidates`: evidence.candidates, the top file's two best functions and one in each next file), and the
retrieval quality that starts the answer's confidence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from answer.answering.evidence import retrieve
from answer.answering.grade import dominance
from answer.retrieval.evaluate import Located, Span

if TYPE_CHECKING:
    from generator.index.store import IndexStore


def locate(store: IndexStore, question: str) -> Located:
    evidence = retrieve(store, question)
    spans = [Span(a.path, a.symbol, *(a.lines or (0, 0))) for a in evidence.candidates]
    lead = dominance(evidence.scores)
    features = {"dominance": lead if lead != float("inf") else 1e9, "coverage": evidence.coverage,
                "exact_symbol": float(evidence.exact_symbol),
                "share": -1.0 if evidence.share is None else evidence.share,  # -1: no model ranked
                "lists": float(len(evidence.files[0].tiers)) if evidence.files else 0.0}
    return Located(tuple(evidence.paths), tuple(spans), evidence.quality, features)
