"""Retrieval evaluation: questions with known answer files, scored on exactly what `rank_files` returns
(or, given a `locate` function, what the answer engine returns: files, the span it names per file, and the
confidence label it would give).

Input lines: {"id", "question", "gold_files": [...]} (extra fields are kept; `gold_functions`
[{path, qualname[, start_line, end_line]}] and `language` are read when present). Metrics: hit@k (a gold
file in the top k), recall@5 (share of gold files in the top 5), MRR (reciprocal rank of the first gold
file), function-level hit@5 (a named span of the top 5 lies in a gold function: by the lines its row
carries, else the indexed checkout's), the median and p95 seconds per question; per label, the share of
questions whose top file was right.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from collections.abc import Callable, Iterable, Mapping
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
class Span:
    """A place an answer names: a file, the symbol and the lines it points at (0 lines: the whole file)."""

    path: str
    symbol: str = ""
    start_line: int = 0
    end_line: int = 0


@dataclass(frozen=True)
class Located:
    """What a locate function returns for one question."""

    files: tuple[str, ...]
    spans: tuple[Span, ...] = ()
    label: str | None = None  # the confidence label the answer would carry
    features: dict[str, float] = field(default_factory=dict)  # what the label was computed from


@dataclass(frozen=True)
class Outcome:
    question: Question
    ranked: tuple[str, ...]
    seconds: float
    spans: tuple[Span, ...] = ()
    label: str | None = None
    features: dict[str, float] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        out = {**self.question.extra, "id": self.question.id, "question": self.question.question,
               "gold_files": list(self.question.gold_files), "ranked": list(self.ranked),
               "seconds": round(self.seconds, 4)}
        if self.spans:
            out["spans"] = [[s.path, s.symbol, s.start_line, s.end_line] for s in self.spans]
        if self.label is not None:
            out["label"] = self.label
        if self.features:
            out["features"] = self.features
        return out


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
        rank: Callable[..., list[Any]] | None = None,
        locate: Callable[[IndexStore, str], Located] | None = None) -> list[Outcome]:
    """Rank files for every question with `rank` (default: answer.retrieval.tiers.rank_files), or locate
    them with `locate` (files, spans, label), and time each."""
    if rank is None:
        from answer.retrieval.tiers import rank_files

        rank = rank_files
    out = []
    for q in questions:
        started = time.perf_counter()
        if locate is not None:
            found = locate(store, q.question)
            seconds = time.perf_counter() - started
            out.append(Outcome(q, found.files[:limit], seconds, found.spans, found.label, found.features))
            continue
        hits = rank(store, q.question, limit=limit)
        out.append(Outcome(q, tuple(h.path for h in hits), time.perf_counter() - started))
    return out


def gold_functions(q: Question) -> list[tuple[str, str]]:
    """(path, qualname) of the functions a question's answer changed (history sets), else []."""
    rows = q.extra.get("gold_functions") or []
    return [(str(r["path"]), str(r["qualname"])) for r in rows if isinstance(r, dict) and "qualname" in r]


def span_in_function(span: Span, path: str, qualname: str,
                     lines: Mapping[tuple[str, str], tuple[int, int]]) -> bool:
    """A named span answers a gold function when it names it, or its lines lie inside the function's
    lines in the indexed checkout (`lines`)."""
    if span.path != path:
        return False
    if span.symbol and _overload_free(span.symbol) == _overload_free(qualname):
        return True
    bounds = lines.get((path, qualname))
    return bool(bounds and span.end_line and bounds[0] <= span.start_line and span.end_line <= bounds[1])


def _overload_free(qualname: str) -> str:
    """`get~2` -> `get`: the analysis numbers a file's overloads in order, and the numbering at a commit
    need not be today's (an overload added above shifts the rest), so overloads count as one function."""
    return re.sub(r"~\d+$", "", qualname)


def gold_function_lines(q: Question) -> dict[tuple[str, str], tuple[int, int]]:
    """(path, qualname) -> lines of the gold functions whose rows carry them: a question asked of an index of
    its own commit has its functions' lines there, which another question's revision need not share."""
    rows = q.extra.get("gold_functions") or []
    return {(str(r["path"]), str(r["qualname"])): (int(r["start_line"]), int(r["end_line"]))
            for r in rows if isinstance(r, dict) and {"qualname", "start_line", "end_line"} <= r.keys()}


def function_hit(o: Outcome, lines: Mapping[tuple[str, str], tuple[int, int]], k: int = 5) -> bool:
    """Whether one of the first `k` spans answers a gold function, by the lines the question carries, else
    by `lines` (the indexed checkout's)."""
    gold = gold_functions(o.question)
    own = gold_function_lines(o.question)
    where = {**lines, **own} if own else lines
    return any(span_in_function(s, p, q, where) for s in o.spans[:k] for p, q in gold)


@dataclass(frozen=True)
class Breakdown:
    """Localization figures of one group of questions (a language, a repository, all)."""

    metrics: Metrics
    function_n: int  # questions with gold functions
    function_hit5: float
    p95_seconds: float
    labels: dict[str, tuple[int, float]]  # label -> (questions, share whose top file was right)


def breakdown(outcomes: list[Outcome], lines: Mapping[tuple[str, str], tuple[int, int]] | None = None
              ) -> Breakdown:
    lines = lines or {}
    rows = [o for o in outcomes if o.question.gold_files]
    with_functions = [o for o in rows if gold_functions(o.question)]
    fhit = statistics.mean(float(function_hit(o, lines)) for o in with_functions) if with_functions else 0.0
    seconds = sorted(o.seconds for o in outcomes) or [0.0]
    by_label: dict[str, list[float]] = {}
    for o in rows:
        if o.label is not None:
            right = bool(o.ranked) and o.ranked[0] in o.question.gold_files
            by_label.setdefault(o.label, []).append(float(right))
    return Breakdown(score(outcomes), len(with_functions), fhit,
                     seconds[min(len(seconds) - 1, round(0.95 * (len(seconds) - 1)))],
                     {label: (len(v), statistics.mean(v)) for label, v in sorted(by_label.items())})


def by_group(outcomes: list[Outcome], key: str) -> dict[str, list[Outcome]]:
    """Outcomes grouped by a question field (`language`, `repo`), in first-seen order."""
    groups: dict[str, list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault(str(o.question.extra.get(key) or "?"), []).append(o)
    return groups


def format_breakdown(name: str, b: Breakdown) -> str:
    m = b.metrics
    hits = " ".join(f"{m.hit[k]:.3f}" for k in HIT_KS)
    labels = "  ".join(f"{label} {n}:{share:.2f}" for label, (n, share) in b.labels.items())
    return (f"{name:<12} {m.n:>4}  {hits}  {m.mrr:.3f}  {b.function_hit5:.3f} ({b.function_n:>3})  "
            f"{m.median_seconds:.3f} {b.p95_seconds:.3f}  {labels}")


BREAKDOWN_HEADER = ("group           n  hit@1 hit@3 hit@5 hit@10  MRR    fn@5  (n)    p50_s p95_s  "
                    "label n:top-1 right")


def format_metrics(m: Metrics) -> str:
    hits = "  ".join(f"hit@{k} {m.hit[k]:.3f}" for k in HIT_KS)
    return (f"n {m.n}  {hits}  recall@5 {m.recall5:.3f}  MRR {m.mrr:.3f}  "
            f"median {m.median_seconds * 1000:.1f} ms")
