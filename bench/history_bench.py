"""Localization on history sets mined from the corpus (bench/corpus.toml), per language, tuned and untuned
repositories apart.

    PYTHONPATH=$PWD python bench/history_bench.py --work DIR [--n 40] [--repo NAME ...] [--label TEXT]
        [--embedder none|default|...]

For each corpus repository: a checkout at its pinned commit (bench/corpus.py, from the local mirror) in
DIR/src, its index (`sourcebook index`'s path; no embedder unless --embedder names one: give each
embedder its own DIR, its indexes are built once) in DIR/out, and its history set: the last N
non-merge commits up to the pinned commit that changed source files (answer/retrieval/history.py, read from
the mirror), saved as DIR/sets/NAME.jsonl and reused by later runs, so a ranking change is measured on the
same questions and indexes. Each question is asked through the answer engine's retrieval
(answer/answering/localize.py), as `sourcebook eval` does. Prints hit@1/3/5/10, MRR, function-level hit@5,
median / p95 seconds and per-label top-1 precision, per language, for the TUNE split (the first repository
listed per language: the only ones to tune ranking on) and the REPORT split (the others), and writes every
outcome to DIR/results-LABEL.jsonl.

The index is of the pinned checkout, which already holds each commit's change: see history.py.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from answer.answering.localize import locate
from answer.retrieval.evaluate import Outcome, load_questions, run
from bench import corpus
from generator.index.command import index_repository
from generator.index.store import open_index
from sourcebook.cli import eval_report
from sourcebook.config import load_config
from sourcebook.errors import UsageError

MIRRORS = Path("/work/.mirror")


def tune_split(repos: list[corpus.Repo]) -> set[str]:
    """The first repository listed per language: the tuning split."""
    first: dict[str, str] = {}
    for r in repos:
        first.setdefault(r.language, r.name)
    return set(first.values())


def measure(repo: corpus.Repo, work: Path, n: int, split: str, embedder: str = "none"
            ) -> tuple[list[Outcome], dict]:
    src = work / "src"
    src.mkdir(parents=True, exist_ok=True)
    root = src / repo.folder
    if not root.exists():  # reused as is later: a repository exporting fewer files fails the re-check
        corpus.checkout(repo, src, MIRRORS)
    config = load_config(root, {"out_dir": str(work / "out" / repo.folder), "embed": {"provider": embedder}})
    if not (work / "out" / repo.folder).exists():
        index_repository(config)
    store = open_index(config)
    if embedder != "none" and store.embedder is None:  # measuring full-text while calling it semantic
        raise UsageError(f"{repo.name}: no semantic tier ({store.embedder_error}): was {work / 'out'} "
                         f"built with another embedder?")
    set_path = work / "sets" / f"{repo.folder}.jsonl"
    if not set_path.exists():
        set_path.parent.mkdir(parents=True, exist_ok=True)
        mined = eval_report.mine_history(store, root, n, rev=repo.commit,
                                         git_dir=corpus.mirror_of(repo, MIRRORS))
        eval_report.write_set(mined, set_path)
        with set_path.with_suffix(".left-out.jsonl").open("w", encoding="utf-8") as fh:
            for why, sha, text in mined.left_out:  # to audit the rules that leave commits out
                fh.write(json.dumps({"why": why, "commit": sha, "message": text}, ensure_ascii=False) + "\n")
        print(f"{repo.name}: {mined.considered} commits, {mined.trivial} trivial, "
              f"{mined.uninformative} uninformative, {mined.housekeeping} housekeeping, "
              f"{len(mined.questions)} questions", file=sys.stderr)
    questions = load_questions(set_path)
    for q in questions:
        # grouped by the repository's language (a C repository's .h files may read as C++)
        q.extra.update(repo=repo.name, split=split, language=repo.language)
    outcomes = run(store, questions, locate=locate)
    return outcomes, eval_report.function_lines(store, questions)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--repo", action="append", default=[], help="folder name (repeatable; default all)")
    parser.add_argument("--label", default="run")
    parser.add_argument("--embedder", default="none",
                        help="embed.provider of indexes and questions (default none: full-text only)")
    args = parser.parse_args()
    repos = corpus.load()
    tuned = tune_split(repos)
    chosen = [r for r in repos if not args.repo or r.folder in args.repo]
    outcomes: list[Outcome] = []
    lines: dict[tuple[str, str], tuple[int, int]] = {}
    started = time.perf_counter()
    for repo in chosen:
        try:
            got, found = measure(repo, args.work, args.n, "tune" if repo.name in tuned else "report",
                                 args.embedder)
        except (UsageError, corpus.CorpusError) as exc:
            print(f"{repo.name}: skipped ({exc})", file=sys.stderr)
            continue
        outcomes += got
        lines.update(found)
    with (args.work / f"results-{args.label}.jsonl").open("w", encoding="utf-8") as fh:
        for o in outcomes:
            fh.write(json.dumps(o.as_json()) + "\n")
    for split in ("tune", "report"):
        mine = [o for o in outcomes if o.question.extra.get("split") == split]
        if mine:
            print(f"\n== {split} split ({len({o.question.extra['repo'] for o in mine})} repositories)")
            print("\n".join(eval_report.table(mine, lines)))
    print(f"\n{len(outcomes)} questions in {time.perf_counter() - started:.0f}s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
