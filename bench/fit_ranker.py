"""Fit the learned file re-ranker (answer/retrieval/ranker.py) on the TUNE split of the history sets.

    PYTHONPATH=$PWD python bench/fit_ranker.py --work DIR [--dump FILE] [--lam 0.3,1,3] [--write]
        [--embedder default]

Reads what bench/history_bench.py left in DIR (checkouts, pinned indexes, sets) for the TUNE split only
(corpus.tune_split; never a REPORT repository), and for each question dumps the
fused top TOP_K files before the ranker and their feature rows (tiers.file_candidates: the same lists and
fusion search_codebase ranks), with which of them are gold, to FILE (reused when it exists: delete it
after a feature change). Then fits a linear model by a listwise softmax (the probability the ranker puts
on the gold files among the candidates) with an L2 penalty towards zero coefficients (zero is the hand
fusion's own order), every repository weighing alike whatever its number of questions, in numpy alone.
The penalty is picked by leaving one TUNE repository out at a time: fitted on the others, measured on it
(MRR and hit@5 within the candidates, mean over repositories; the best by their sum). Prints the
cross-validated table against the fused order; with --write, fits on all TUNE repositories with the best
penalty and writes answer/retrieval/ranker_model.py. `--at-commit` dumps from the revision indexes instead,
and `--also FILE` fits on another dump too (pinned and at-commit questions together). `--embedder
default` reads pinned indexes with vectors (history_bench.py --embedder default), whose semantic lists rank
files too, and `--write` then writes SEMANTIC_COEFFICIENTS, the set for such indexes, keeping COEFFICIENTS.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from answer.retrieval import history
from answer.retrieval.evaluate import Question, load_questions
from answer.retrieval.ranker import FEATURES
from answer.retrieval.tiers import DEFAULT_WEIGHTS, file_candidates
from bench import corpus
from bench.history_bench import MIRRORS, REVISION_DONE, question_at
from generator.index.store import open_index
from sourcebook.config import load_config

if TYPE_CHECKING:
    from generator.index.store import IndexStore

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "answer" / "retrieval" / "ranker_model.py"
BASE = FEATURES.index("fused")


def _tune_sets(work: Path) -> Iterator[tuple[corpus.Repo, list[Question]]]:
    """The TUNE repositories that have a history set in `work`, each with its questions."""
    repos = corpus.load()
    tuned = corpus.tune_split(repos)
    for repo in repos:
        set_path = work / "sets" / f"{repo.folder}.jsonl"
        if repo.name in tuned and set_path.exists():
            yield repo, load_questions(set_path)


def _write(fh: TextIO, store: IndexStore, repo: corpus.Repo, q: Question, gold: set[str]) -> None:
    """One JSON line: the question's fused candidates (hand fusion), their feature rows and gold flags."""
    hits, rows = file_candidates(store, q.question, dataclasses.replace(DEFAULT_WEIGHTS, ranker=False))
    fh.write(json.dumps({"repo": repo.folder, "id": q.id, "paths": [h.path for h in hits],
                         "rows": rows, "gold": [h.path in gold for h in hits]}) + "\n")


def dump(work: Path, out: Path, embedder: str = "none") -> None:
    """One JSON line per TUNE question: repo, id, candidate paths, feature rows, gold flags. `embedder`:
    the pinned indexes' embed.provider (bench/history_bench.py --embedder), whose semantic lists then rank
    files too."""
    with out.open("w", encoding="utf-8") as fh:
        for repo, questions in _tune_sets(work):
            config = load_config(work / "src" / repo.folder, {"out_dir": str(work / "out" / repo.folder),
                                                               "embed": {"provider": embedder}})
            store = open_index(config)
            for q in questions:
                _write(fh, store, repo, q, set(q.gold_files))
            print(f"{repo.folder}: {len(questions)} questions", flush=True)


def dump_at_commit(work: Path, out: Path) -> None:
    """As `dump`, each question asked of the index of its own commit's tree (DIR/revs, left by
    history_bench.py --at-commit; a revision without a complete index is skipped, none is built), gold
    read at that commit."""
    with out.open("w", encoding="utf-8") as fh:
        for repo, questions in _tune_sets(work):
            git_dir = corpus.mirror_of(repo, MIRRORS)
            commits, _ = history.commits_of(git_dir, [str(q.extra.get("commit") or "") for q in questions])
            asked = 0
            for q in questions:
                sha = str(q.extra.get("commit") or "")
                index = work / "revs" / repo.folder / sha[:12]
                if sha not in commits or not (index / REVISION_DONE).exists():
                    continue
                config = load_config(work / "revs" / repo.folder / ".tree",
                                     {"out_dir": str(index), "embed": {"provider": "none"}})
                store = open_index(config)
                at = question_at(store, q, commits[sha], git_dir)
                if at is None:
                    continue
                _write(fh, store, repo, q, set(at.gold_files))
                asked += 1
            print(f"{repo.folder}: {asked} questions at their commits", flush=True)


@dataclasses.dataclass
class Query:
    repo: str
    x: Any  # (candidates, features)
    gold: Any  # bool per candidate


def load(path: Path) -> list[Query]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if not row["rows"]:
            out.append(Query(row["repo"], np.zeros((0, len(FEATURES))), np.zeros(0, bool)))
            continue
        out.append(Query(row["repo"], np.array(row["rows"], float), np.array(row["gold"], bool)))
    return out


def _padded(queries: list[Query]) -> tuple[Any, Any, Any, Any]:
    """The questions with a gold candidate as arrays: features (Q, K, F), real-candidate mask, gold mask,
    and each question's weight (every repository weighs alike)."""
    usable = [q for q in queries if q.gold.any() and len(q.gold) > 1]
    k = max(len(q.gold) for q in usable)
    x = np.zeros((len(usable), k, len(FEATURES)))
    real = np.zeros((len(usable), k), bool)
    gold = np.zeros((len(usable), k), bool)
    for i, q in enumerate(usable):
        x[i, :len(q.gold)] = q.x
        real[i, :len(q.gold)] = True
        gold[i, :len(q.gold)] = q.gold
    per_repo: dict[str, int] = {}
    for q in usable:
        per_repo[q.repo] = per_repo.get(q.repo, 0) + 1
    weight = np.array([1.0 / (per_repo[q.repo] * len(per_repo)) for q in usable])
    return x, real, gold, weight


def _softmax(s: Any, mask: Any) -> Any:
    s = np.where(mask, s, -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return p / p.sum(axis=1, keepdims=True)


def fit(queries: list[Query], lam: float, steps: int = 1500) -> Any:
    """Coefficients minimising the repository-weighted listwise softmax loss + lam/2 |w|^2 (Adam): the loss
    of a question is -log of the probability its gold files take among its candidates."""
    x, real, gold, weight = _padded(queries)
    w = np.zeros(len(FEATURES))
    m, v = np.zeros_like(w), np.zeros_like(w)
    rate, b1, b2 = 0.02, 0.9, 0.999
    for step in range(1, steps + 1):
        s = x[:, :, BASE] + x @ w
        diff = (_softmax(s, real) - _softmax(s, gold)) * weight[:, None]
        grad = lam * w + np.einsum("qk,qkf->f", diff, x)
        m = b1 * m + (1 - b1) * grad
        v = b2 * v + (1 - b2) * grad * grad
        w -= rate * (m / (1 - b1 ** step)) / (np.sqrt(v / (1 - b2 ** step)) + 1e-8)
    return w


def measure(queries: list[Query], w: Any) -> tuple[float, float]:
    """Mean over repositories of MRR and hit@5 with the candidates re-ranked by `w` (a gold file outside
    the candidates counts as a miss)."""
    by_repo: dict[str, list[tuple[float, float]]] = {}
    for q in queries:
        rr = hit = 0.0
        if q.gold.any():
            s = q.x[:, BASE] + q.x @ w
            order = sorted(range(len(s)), key=lambda i: (-s[i], i))
            first = next(pos for pos, i in enumerate(order, start=1) if q.gold[i])
            rr, hit = 1.0 / first, float(first <= 5)
        by_repo.setdefault(q.repo, []).append((rr, hit))
    mrr = float(np.mean([np.mean([r for r, _ in v]) for v in by_repo.values()]))
    hit5 = float(np.mean([np.mean([h for _, h in v]) for v in by_repo.values()]))
    return mrr, hit5


def cross_validate(queries: list[Query], lam: float) -> tuple[float, float]:
    repos = sorted({q.repo for q in queries})
    held: list[Query] = []
    fitted: dict[str, Any] = {}
    for repo in repos:
        fitted[repo] = fit([q for q in queries if q.repo != repo], lam)
        held += [q for q in queries if q.repo == repo]
    by_repo = [measure([q for q in queries if q.repo == repo], fitted[repo]) for repo in repos]
    return float(np.mean([m for m, _ in by_repo])), float(np.mean([h for _, h in by_repo]))


# the model's two coefficient sets: one for indexes without vectors, one fitted with the semantic lists'
# ranks among the features (answer/retrieval/tiers.py rerank_files picks by whether that tier ran)
MODELS = {"none": "COEFFICIENTS", "semantic": "SEMANTIC_COEFFICIENTS"}


def _model_block(name: str, w: Any, comment: str) -> str:
    lines = [f'    "{feature}": {value:.4f},' for feature, value in zip(FEATURES, w, strict=True)
             if abs(value) >= 5e-5]
    return f"{comment}{name}: dict[str, float] = {{\n" + "\n".join(lines) + "\n}\n"


def write(w: Any, lam: float, note: str, embedder: str = "none") -> None:
    """Rewrite ranker_model.py with `w` as the coefficients for `embedder`'s indexes (none: COEFFICIENTS,
    any other: SEMANTIC_COEFFICIENTS), the other set kept as it is, with its comment."""
    ours = MODELS["none" if embedder == "none" else "semantic"]
    text = MODEL.read_text(encoding="utf-8")
    blocks: dict[str, str] = {}
    for name in MODELS.values():  # each block: its comment lines, then the dict to its closing brace
        start = text.find(f"\n{name}: dict[str, float] = {{")
        if start < 0:
            continue
        head = text.rfind("\n\n", 0, start) + 2
        blocks[name] = text[head:text.index("\n}\n", start) + 3]
    comment = f"# fitted on the history TUNE split ({embedder} indexes), L2 {lam}:\n# {note}\n"
    blocks[ours] = _model_block(ours, w, comment)
    MODEL.write_text(
        '"""The fitted coefficients of answer/retrieval/ranker.py (bench/fit_ranker.py writes them)."""\n\n'
        + "\n\n".join(blocks[name] for name in MODELS.values() if name in blocks), encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--dump", type=Path, help="feature dump (default DIR/ranker-features.jsonl)")
    parser.add_argument("--lam", default="0.01,0.03,0.1,0.3,1")
    parser.add_argument("--at-commit", action="store_true",
                        help="dump from the revision indexes of DIR/revs (history_bench.py --at-commit)")
    parser.add_argument("--also", type=Path, action="append", default=[],
                        help="another dump to fit on too (the same questions at their commits: its "
                             "questions count as their repository's)")
    parser.add_argument("--drop", default="", help="features (or name prefixes) left out of the model")
    parser.add_argument("--embedder", default="none",
                        help="the pinned indexes' embed.provider (history_bench.py --embedder); other than "
                             "none, --write writes the semantic coefficients")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    path = args.dump or args.work / "ranker-features.jsonl"
    if not path.exists():
        if args.at_commit:
            dump_at_commit(args.work, path)
        else:
            dump(args.work, path, args.embedder)
    queries = [q for p in (path, *args.also) for q in load(p)]
    dropped = [i for i, name in enumerate(FEATURES)
               if any(name.startswith(p) for p in args.drop.split(",") if p) and i != BASE]
    for q in queries:  # a column of zeros keeps a zero coefficient: its gradient is the penalty's alone
        q.x[:, dropped] = 0.0
    print(f"left out: {', '.join(FEATURES[i] for i in dropped) or 'none'}")
    base = measure(queries, np.zeros(len(FEATURES)))
    print(f"fused order: MRR {base[0]:.4f} hit@5 {base[1]:.4f} ({len(queries)} questions)")
    from answer.retrieval import ranker_model

    for name in MODELS.values():
        shipped = getattr(ranker_model, name, None)
        if shipped:
            got = measure(queries, np.array([shipped.get(f, 0.0) for f in FEATURES]))
            print(f"shipped {name}: MRR {got[0]:.4f} hit@5 {got[1]:.4f} (fitted on all of these questions "
                  "or others: not held out)")
    best: tuple[float, float, float] | None = None
    for lam in (float(x) for x in args.lam.split(",")):
        mrr, hit5 = cross_validate(queries, lam)
        print(f"L2 {lam}: leave-one-repository-out MRR {mrr:.4f} hit@5 {hit5:.4f}", flush=True)
        if best is None or mrr + hit5 > sum(best[1:]):  # both: the goal is read in hit@5, and MRR
            best = (lam, mrr, hit5)
    assert best is not None
    lam = best[0]
    w = fit(queries, lam)
    for name, value in sorted(zip(FEATURES, w, strict=True), key=lambda kv: -abs(kv[1])):
        print(f"  {name:22s} {value:+.4f}")
    if args.write:
        write(w, lam, f"leave-one-repository-out MRR {base[0]:.3f} -> {best[1]:.3f}, "
                      f"hit@5 {base[1]:.3f} -> {best[2]:.3f}", args.embedder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
