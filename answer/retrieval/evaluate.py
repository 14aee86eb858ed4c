"""Retrieval evaluation: questions with known answer files, scored on exactly what `rank_files` returns.

Input lines: {"id", "question", "gold_files": [...]} (extra fields are kept). Metrics: hit@k (a gold file in
the top k), recall@5 (share of gold files in the top 5), MRR (reciprocal rank of the first gold file) and the
median seconds per question.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sourcebook.errors import UsageError

if TYPE_CHECKING:
    from generator.index.store import IndexStore

HIT_KS = (1, 3, 5, 10)


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    gold_files: tuple[str, ...]
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Outcome:
    question: Question
    ranked: tuple[str, ...]
    seconds: float

    def as_json(self) -> dict[str, Any]:
        return {**self.question.extra, "id": self.question.id, "question": self.question.question,
                "gold_files": list(self.question.gold_files), "ranked": list(self.ranked),
                "seconds": round(self.seconds, 4)}


@dataclass(frozen=True)
class Metrics:
    n: int
    hit: dict[int, float]
    recall5: float
    mrr: float
    median_seconds: float


def load_questions(path: Path | str) -> list[Question]:
    """Read a JSONL question file; a malformed line is a UsageError naming the line."""
    out: list[Question] = []
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read ({exc})") from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            gold = row["gold_files"]
            if not isinstance(gold, list):
                raise TypeError("gold_files must be a list")
            out.append(Question(id=str(row.get("id", number)), question=str(row["question"]),
                                gold_files=tuple(str(g) for g in gold),
                                extra={k: v for k, v in row.items()
                                       if k not in {"id", "question", "gold_files", "answer"}}))
        except (ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"{path}:{number}: not a question line ({exc})") from exc
    return out


def reciprocal_rank(ranked: Iterable[str], gold: Iterable[str]) -> float:
    wanted = set(gold)
    for i, path in enumerate(ranked, start=1):
        if path in wanted:
            return 1.0 / i
    return 0.0


def score(outcomes: list[Outcome]) -> Metrics:
    """Metrics over questions that have gold files (others cannot be scored)."""
    rows = [o for o in outcomes if o.question.gold_files]
    if not rows:
        return Metrics(0, dict.fromkeys(HIT_KS, 0.0), 0.0, 0.0, 0.0)
    hit = {k: statistics.mean(float(bool(set(o.question.gold_files) & set(o.ranked[:k]))) for o in rows)
           for k in HIT_KS}
    recall = statistics.mean(len(set(o.question.gold_files) & set(o.ranked[:5]))
                             / len(set(o.question.gold_files)) for o in rows)
    mrr = statistics.mean(reciprocal_rank(o.ranked, o.question.gold_files) for o in rows)
    return Metrics(len(rows), hit, recall, mrr, statistics.median(o.seconds for o in outcomes))


def run(store: IndexStore, questions: list[Question], limit: int = 10,
        rank: Callable[..., list[Any]] | None = None) -> list[Outcome]:
    """Rank files for every question with `rank` (default: answer.retrieval.tiers.rank_files) and time
    each."""
    if rank is None:
        from answer.retrieval.tiers import rank_files

        rank = rank_files
    out = []
    for q in questions:
        started = time.perf_counter()
        hits = rank(store, q.question, limit=limit)
        out.append(Outcome(q, tuple(h.path for h in hits), time.perf_counter() - started))
    return out


def format_metrics(m: Metrics) -> str:
    hits = "  ".join(f"hit@{k} {m.hit[k]:.3f}" for k in HIT_KS)
    return (f"n {m.n}  {hits}  recall@5 {m.recall5:.3f}  MRR {m.mrr:.3f}  "
            f"median {m.median_seconds * 1000:.1f} ms")
