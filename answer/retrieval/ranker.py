"""A small learned re-ranker of the fused files: a linear score over each candidate's features.

The hand fusion (tiers.fuse_files: weighted RRF times kind priors) ranks every file; this re-ranks its top
TOP_K by `log(fused score / best fused score) + coefficients · features`, where the features are what the
fusion already knew about the file but folded into one number with hand-set weights: where each tier's
list ranked it, how many lists found it, its kind, its length against the repository's median source file,
whether a test lifted it, and how much of its path the question spells. The coefficients are fitted by
bench/fit_ranker.py on the history sets' TUNE split (a listwise softmax with L2 towards zero: all-zero
coefficients give back the fused order) and ship in answer/retrieval/ranker_model.py; nothing is
downloaded. Pure: every input is computed by the caller from what the tiers returned.

It ranks tasks and reports (a bug report, a feature request, a commit message: where to change the code), as
the length prior does, not questions asking how the code works (question.is_explanatory): the history sets
it is fitted on hold none of those, and their judge counts only code as gold. Nor does it rank a task asking
for tests or documentation ("Fix the tests of ..."): that judge never counts either, so the model learned to
hold them back, and it put the code over the very test file asked for; the hand fusion, which lifts them when
asked, ranks those (tiers._ranked_by_model). That costs the history sets a little (pinned REPORT, 40
repositories: hit@5 0.820 -> 0.815, MRR 0.672 -> 0.663; the development set's SWE-bench rows 0.941 / 0.702
-> 0.882 / 0.700), all of it on questions that name tests or docs, whose own tests and docs neither judge
counts.

Fitted on the 13 TUNE repositories' 741 questions, each asked of the pinned index and of the index at its
own commit (1,482 lists). Leave-one-repository-out MRR within the candidates 0.707 -> 0.731 at L2 0.001,
0.729 at 0.003, 0.721 at 0.01 (hit@5 0.852 -> 0.86 for each). 0.003 ships: on the development set's
SWE-bench rows (17 issues; SWE-QA's questions are explanatory: unchanged) it gave hit@5 / MRR 0.882 / 0.685
-> 0.941 / 0.702, where 0.001 gave 0.941 / 0.655 and 0.01 0.941 / 0.681 (one issue moving is 0.03 of MRR).
History REPORT with 0.003: pinned (27 repositories) hit@5 0.804 -> 0.819, MRR 0.648 -> 0.670; at each
question's commit (26 repositories) hit@5 0.840 -> 0.858, MRR 0.677 -> 0.709. Learned without the kind
features (tests, docs, configuration: the judge's bias) it lost hit@5 (0.845 -> 0.829, pinned TUNE only).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from generator.index.tokens import split_identifier

TOP_K = 40  # fused files re-ranked: below these the fused order stands
# the file-ranking lists whose rank of a file is a feature (callers rank spans only: tiers.SPAN_ONLY_LISTS)
LISTS = ("chunks", "files", "pages", "symbols", "names", "literal", "phrases", "substrings", "paths",
         "semantic", "semantic_pages")
KINDS = ("test", "doc", "config", "aux", "changelog")
FEATURES: tuple[str, ...] = (
    "fused",  # log(fused score / the best fused score): the coefficient adds to the base's 1
    "first",  # the fused order's first file
    "top3",  # in the fused top 3
    *(f"rank:{name}" for name in LISTS),  # rrf_k / (rrf_k + the file's rank in that list), 0 if absent
    *(f"many:{name}" for name in ("chunks", "symbols", "substrings")),  # ln(1 + entries of the file) / 3
    "lists",  # lists that found the file, / 4
    *(f"kind:{kind}" for kind in KINDS),
    "length",  # ln((1 + lines) / (1 + median lines)) of a product source file, clipped to [-3, 3]; else 0
    "test:asked",  # a test, for a question naming tests
    "lifted",  # a source file a ranked test lifted (tiers.fuse_files' subjects)
    "lender",  # a test that lifted its subject
    "name",  # share of the file name's identifier parts the question spells
    "folders",  # share of the folders' identifier parts the question spells
)
_INDEX = {name: i for i, name in enumerate(FEATURES)}


@dataclass(frozen=True)
class Candidate:
    """What the fusion knew about one fused file."""

    path: str
    score: float  # the fused score (after priors)
    ranks: Mapping[str, int]  # list name -> the file's rank among that list's files (1 = first)
    entries: Mapping[str, int]  # list name -> how many entries of that list are the file's
    kind: str = "code"  # code | test | doc | config | aux | changelog
    length: float = 0.0  # ln((1 + lines) / (1 + median)) for product source, else 0
    lifted: bool = False
    lender: bool = False


@dataclass(frozen=True)
class QueryView:
    """What of the question the features read."""

    parts: frozenset[str]  # lower-cased identifier parts of its words
    asks_tests: bool = False


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def query_view(question: str, *, asks_tests: bool) -> QueryView:
    parts = {part for word in _WORD.findall(question) for part in split_identifier(word) if len(part) > 1}
    return QueryView(frozenset(parts), asks_tests)


def _share(parts: Sequence[str], spelled: frozenset[str]) -> float:
    wanted = [p for p in parts if len(p) > 1 and not p.isdigit()]
    return sum(p in spelled for p in wanted) / len(wanted) if wanted else 0.0


def _path_parts(path: str) -> tuple[list[str], list[str]]:
    *folders, name = path.split("/")
    stem = name.split(".", 1)[0]
    return ([p for piece in re.split(r"[-.]", stem) for p in split_identifier(piece)],
            [p for folder in folders for piece in re.split(r"[-.]", folder) for p in split_identifier(piece)])


def features(candidates: Sequence[Candidate], query: QueryView, rrf_k: float) -> list[list[float]]:
    """One row of FEATURES per candidate, the candidates in fused order (best first)."""
    if not candidates:
        return []
    best = max(candidates[0].score, 1e-12)
    rows: list[list[float]] = []
    for position, cand in enumerate(candidates):
        row = [0.0] * len(FEATURES)
        row[_INDEX["fused"]] = math.log(max(cand.score, 1e-12) / best)
        row[_INDEX["first"]] = float(position == 0)
        row[_INDEX["top3"]] = float(position < 3)
        for name, rank in cand.ranks.items():
            if name in LISTS:
                row[_INDEX[f"rank:{name}"]] = rrf_k / (rrf_k + rank)
        for name in ("chunks", "symbols", "substrings"):
            row[_INDEX[f"many:{name}"]] = math.log1p(cand.entries.get(name, 0)) / 3.0
        row[_INDEX["lists"]] = sum(1 for name in cand.ranks if name in LISTS) / 4.0
        if cand.kind in KINDS:
            row[_INDEX[f"kind:{cand.kind}"]] = 1.0
        length = max(-3.0, min(3.0, cand.length))
        row[_INDEX["length"]] = length
        row[_INDEX["test:asked"]] = float(cand.kind == "test" and query.asks_tests)
        row[_INDEX["lifted"]] = float(cand.lifted)
        row[_INDEX["lender"]] = float(cand.lender)
        name_parts, folder_parts = _path_parts(cand.path)
        row[_INDEX["name"]] = _share(name_parts, query.parts)
        row[_INDEX["folders"]] = _share(folder_parts, query.parts)
        rows.append(row)
    return rows


def scores(rows: Sequence[Sequence[float]], coefficients: Mapping[str, float]) -> list[float]:
    """The ranker's score of each row: the fused log-ratio (base 1) plus coefficients · features. A
    coefficient naming no feature is ignored (a model fitted with a feature since removed)."""
    weights = [coefficients.get(name, 0.0) for name in FEATURES]
    base = _INDEX["fused"]
    return [row[base] + sum(w * x for w, x in zip(weights, row, strict=True)) for row in rows]


def top_share(scored: Sequence[float]) -> float:
    """The share of the best of `scored` in their softmax: the probability the model gives its first file
    among the ones it ranks (the fit is a listwise softmax over the same scores, so this is the quantity it
    learned). With all-zero coefficients the scores are log(fused / best) and this is the first file's
    share of the fused scores. 0.0 for no scores."""
    if not scored:
        return 0.0
    best = max(scored)
    return 1.0 / sum(math.exp(s - best) for s in scored)


def order(rows: Sequence[Sequence[float]], coefficients: Mapping[str, float]) -> list[int]:
    """Positions of the rows best first by `scores`; ties keep the fused order."""
    return best_first(scores(rows, coefficients))


def best_first(scored: Sequence[float]) -> list[int]:
    """Positions of `scored` best first; ties keep the fused order."""
    return sorted(range(len(scored)), key=lambda i: (-scored[i], i))
