"""Fit the fusion weights (answer/retrieval/tiers.py Weights) on the tuning split of the history sets.

    PYTHONPATH=$PWD python bench/fit_weights.py --work DIR [--rounds 2] [--repo NAME ...] [--knob NAME ...]
        [--embedder none|default]

Reads what bench/history_bench.py left in DIR (checkouts, indexes, sets) for the TUNE split only (the first
repository listed per language), and runs coordinate ascent over a few knobs of Weights: each knob in turn
tries its candidate values with the others fixed and keeps the best by the mean over repositories of MRR
(every repository counts alike, whatever its number of questions). Prints every trial, then the fitted
values: copy them into Weights by hand, with the figures, after checking the REPORT split and the
development set (bench/eval_dev.py) did not drop. The learned re-ranker (Weights.ranker) is off while
fitting: it was fitted on the hand fusion's output, so refit it (bench/fit_ranker.py) after changing a knob.
`--knob NAME=V1,V2` tries those values of any field of
Weights; `--embedder` must be the one DIR's indexes were built with (history_bench.py --embedder).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from answer.retrieval.evaluate import load_questions, reciprocal_rank
from answer.retrieval.tiers import DEFAULT_WEIGHTS, Weights, rank_files
from bench import corpus
from generator.index.store import open_index
from sourcebook.config import load_config

KNOBS: dict[str, tuple[float, ...]] = {
    "length_prior": (0.0, 0.03, 0.05, 0.1),
    "subjects": (0.0, 0.5, 0.8, 1.0),
    "rrf_k": (20.0, 30.0, 45.0, 60.0),
    "decay": (0.15, 0.25, 0.4),
    "test_prior": (1.0, 0.8, 0.6, 0.45),
    "doc_prior": (1.0, 0.8, 0.6),
    "aux_prior": (1.0, 0.7, 0.5, 0.3),
    "config_prior": (1.0, 0.8, 0.6),
    "changelog_prior": (0.7, 0.5, 0.3),
    "chunks": (0.7, 1.0, 1.3),
    "files": (0.7, 1.0, 1.3),
    "pages": (1.3, 1.0, 0.6),
    "symbols": (0.5, 0.7, 1.0),
    "names": (0.7, 1.0, 1.3),
    "literal": (0.3, 0.45, 0.6),
    "substrings": (0.3, 0.5, 0.7),
    "paths": (1.0, 2.0),
}


def _knob(text: str) -> tuple[str, tuple[float, ...]]:
    """`NAME` (its values in KNOBS) or `NAME=V1,V2` (any field of Weights) -> (name, values)."""
    name, _, values = text.partition("=")
    if not values:
        if name not in KNOBS:
            raise SystemExit(f"--knob {name!r}: not in KNOBS ({', '.join(KNOBS)}); give NAME=V1,V2")
        return name, KNOBS[name]
    if not hasattr(DEFAULT_WEIGHTS, name):
        raise SystemExit(f"--knob {text!r}: {name} is not a field of Weights")
    kind = type(getattr(DEFAULT_WEIGHTS, name))
    return name, tuple(kind(v) for v in values.split(","))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--repo", action="append", default=[])
    parser.add_argument("--knob", action="append", default=[],
                        help="fit only this knob (repeatable; default all), or NAME=V1,V2 for other values")
    parser.add_argument("--embedder", default="none")
    args = parser.parse_args()
    knobs = dict(_knob(k) for k in args.knob) or KNOBS
    repos = corpus.load()
    tuned = corpus.tune_split(repos)
    data = []
    for repo in repos:
        if repo.name not in tuned or (args.repo and repo.folder not in args.repo):
            continue
        set_path = args.work / "sets" / f"{repo.folder}.jsonl"
        if not set_path.exists():
            continue
        config = load_config(args.work / "src" / repo.folder,
                             {"out_dir": str(args.work / "out" / repo.folder),
                              "embed": {"provider": args.embedder}})
        store = open_index(config)
        if args.embedder != "none" and store.embedder is None:
            raise SystemExit(f"{repo.folder}: no semantic tier ({store.embedder_error})")
        data.append((repo.folder, store, load_questions(set_path)))

    def objective(w: Weights) -> tuple[float, float]:
        mrrs, hits = [], []
        for _name, store, questions in data:
            ranked = [[f.path for f in rank_files(store, q.question, weights=w)] for q in questions]
            mrrs.append(statistics.mean(reciprocal_rank(r, q.gold_files) for r, q in zip(ranked, questions,
                                                                                         strict=True)))
            hits.append(statistics.mean(float(bool(set(r[:5]) & set(q.gold_files)))
                                        for r, q in zip(ranked, questions, strict=True)))
        return statistics.mean(mrrs), statistics.mean(hits)

    # the hand fusion alone: the learned ranker (fitted on top of it by bench/fit_ranker.py) is off
    best = dataclasses.replace(DEFAULT_WEIGHTS, ranker=False)
    best_score = objective(best)
    print(f"default: MRR {best_score[0]:.4f} hit@5 {best_score[1]:.4f}")
    for _ in range(args.rounds):
        for knob, values in knobs.items():
            for value in values:
                if getattr(best, knob) == value:
                    continue
                trial = dataclasses.replace(best, **{knob: value})
                got = objective(trial)
                print(f"{knob}={value}: MRR {got[0]:.4f} hit@5 {got[1]:.4f}")
                if got > best_score:
                    best, best_score = trial, got
    fitted = {k: getattr(best, k) for k in knobs}
    print(f"fitted: {fitted}  MRR {best_score[0]:.4f} hit@5 {best_score[1]:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
