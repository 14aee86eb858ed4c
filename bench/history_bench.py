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
listed per language, and those corpus.toml marks `split = "tune"`: the only ones to tune ranking on) and the
REPORT split (the others), and writes every outcome to DIR/results-LABEL.jsonl.

The index is of the pinned checkout, which already holds each commit's change: see history.py.

    PYTHONPATH=$PWD python bench/history_bench.py --work DIR --at-commit [--repo NAME ...] [--label TEXT]

asks the same questions (DIR/sets, mined by the default mode) each of an index of the tree AT ITS OWN COMMIT,
so code moved, renamed or removed since the commit (the drift a pinned index conflates with retrieval) does
not decide the score. The gold is read at the commit (history.gold_at_commit): the paths the commit changed as
it names them, kept by the source rule applied to that revision's index, and the functions holding a changed
line by that index's symbols, their lines carried by the question (fn@5 at that revision). The indexes stay in
DIR/revs/NAME/<sha12> (an out_dir each; a run reuses the complete ones, so a ranking change re-asks without
re-indexing); they are built oldest commit first, each a copy of the previous one updated by the ordinary
incremental `index_repository` on a scratch work tree (DIR/revs/NAME/.tree) that git read-tree moves to the
next commit. A commit whose tree cannot be read or indexed, and a question whose gold is empty at its commit,
are left out and counted. Seconds per question are the ask alone, on a store that has answered once.
Results carry "mode": "at-commit" (the default mode writes "pinned").
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from answer.answering.localize import locate
from answer.retrieval import history
from answer.retrieval.evaluate import Outcome, Question, load_questions, run
from bench import corpus
from generator.analyze.languages import is_parsed
from generator.index.command import index_repository
from generator.index.store import open_index
from sourcebook.cli import eval_report
from sourcebook.config import load_config
from sourcebook.errors import SourcebookError, UsageError
from sourcebook.sql import in_list

if TYPE_CHECKING:
    from generator.index.store import IndexStore

MIRRORS = Path("/work/.mirror")


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


# -------------------------------------------------------- --at-commit: each question at its own commit

REVISION_DONE = "revision.json"  # written last into a revision's out_dir: its index is complete
WARM_UP = "where is the main entry point configured"


def _scratch_git(git_dir: Path, tree: Path, *args: str, index: str = ".git-index", stdin: str | None = None
                 ) -> str:
    """git on the scratch work tree `tree` with its own index file beside it; objects are read from the
    mirror, and any git writes (materialise's filtered trees) go to a folder beside the tree, so the mirror
    is never written to. Returns git's output."""
    objects = tree.with_name(tree.name + ".objects")
    env = {**os.environ, "GIT_INDEX_FILE": str(tree.with_name(tree.name + index)),
           "GIT_OBJECT_DIRECTORY": str(objects), "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(git_dir / "objects")}
    objects.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["git", f"--git-dir={git_dir}", f"--work-tree={tree}", "-c", "core.fsmonitor=false",
                           "-c", "core.hooksPath=/dev/null", *args], capture_output=True, text=True,
                          errors="replace", env=env, check=False, input=stdin)
    if done.returncode:
        raise UsageError(f"git {args[0]} in {tree}: {done.stderr.strip()[:300]}")
    return done.stdout


def materialise(git_dir: Path, tree: Path, sha: str) -> None:
    """Make `tree` the commit's files. git writes only the files that differ from the last commit put there
    (its index file remembers which), and removes the ones the commit lacks. Repository content is
    untrusted: git refuses paths that climb out or into a .git folder, and the scan skips symlinks leading
    out of the tree (generator/analyze/scan.py).

    A mirror may lack a blob (the `fetch` tool leaves some repositories' largest files out), and read-tree
    then refuses the whole commit: the commit's tree is then put there without those files (a build would
    skip a file it cannot read anyway), as bench/corpus.py checks the pinned commit out."""
    tree.mkdir(parents=True, exist_ok=True)
    try:
        _scratch_git(git_dir, tree, "read-tree", "--reset", "-u", sha)
        return
    except UsageError:
        absent = corpus.missing_blobs(git_dir, sha)
        if not absent:
            raise
    # the commit's tree less the absent files, built in a throwaway index (no blob is read for that)
    _scratch_git(git_dir, tree, "read-tree", sha, index=".filter-index")
    _scratch_git(git_dir, tree, "update-index", "--force-remove", "-z", "--stdin", index=".filter-index",
                 stdin="".join(p + "\0" for p in sorted(absent)))
    filtered = _scratch_git(git_dir, tree, "write-tree", index=".filter-index").strip()
    _scratch_git(git_dir, tree, "read-tree", "--reset", "-u", filtered)
    print(f"{tree.parent.name}@{sha[:12]}: without {len(absent)} file(s) the mirror lacks", file=sys.stderr)


def build_revisions(repo: corpus.Repo, work: Path, shas: list[str], embedder: str, git_dir: Path
                    ) -> dict[str, Path]:
    """sha -> the out_dir of an index of the tree at that commit, DIR/revs/NAME/<sha12>, built in the order
    given (oldest first), each from a copy of the previous one updated by the ordinary incremental
    `index_repository`; an existing complete one is reused. A commit whose tree cannot be read or indexed is
    left out, and said."""
    base = work / "revs" / repo.folder
    tree = base / ".tree"
    built: dict[str, Path] = {}
    previous: Path | None = None
    seconds: list[float] = []
    for sha in shas:
        out = base / sha[:12]
        if (out / REVISION_DONE).exists():
            built[sha] = previous = out
            continue
        started = time.perf_counter()
        part = base / f".{sha[:12]}.part"
        try:
            materialise(git_dir, tree, sha)
            if part.exists():
                shutil.rmtree(part)
            if previous is not None:
                shutil.copytree(previous, part, ignore=shutil.ignore_patterns(REVISION_DONE, "*.lock"))
            # a private copy no reader holds open: superseded versions go at once (10 minutes by default)
            config = load_config(tree, {"out_dir": str(part), "embed": {"provider": embedder},
                                        "index_keep_s": 0})
            index_repository(config)
        except (UsageError, SourcebookError, OSError) as exc:
            print(f"{repo.name}@{sha[:12]}: no index ({exc})", file=sys.stderr)
            shutil.rmtree(part, ignore_errors=True)
            continue
        took = time.perf_counter() - started
        (part / REVISION_DONE).write_text(json.dumps({"commit": sha, "seconds": round(took, 2),
                                                      "from": previous.name if previous else None}) + "\n")
        part.rename(out)
        seconds.append(took)
        built[sha] = previous = out
    if seconds:
        print(f"{repo.name}: {len(seconds)} revision indexes built, {sum(seconds):.0f}s "
              f"(first {seconds[0]:.1f}s, median {statistics.median(seconds):.2f}s each), "
              f"{_disk(base) / 1e6:.0f} MB under {base}", file=sys.stderr)
    return built


def _disk(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def measure_at_commit(repo: corpus.Repo, work: Path, split: str, embedder: str = "none",
                      git_dir: Path | None = None) -> tuple[list[Outcome], dict, Counter[str]]:
    """The repository's history set (DIR/sets/NAME.jsonl, mined by the default mode) asked question by
    question of the index at the question's own commit, gold read at that commit (history.gold_at_commit).
    Returns the outcomes, no shared function lines (each question carries its own) and why questions were
    left out. `git_dir`: the repository's git dir (default its mirror under MIRRORS)."""
    set_path = work / "sets" / f"{repo.folder}.jsonl"
    if not set_path.exists():
        raise UsageError(f"no history set {set_path}: run the default mode first to mine it")
    questions = load_questions(set_path)
    git_dir = git_dir or corpus.mirror_of(repo, MIRRORS)
    shas = [str(q.extra.get("commit") or "") for q in questions]
    commits, times = history.commits_of(git_dir, shas)
    skipped: Counter[str] = Counter()
    order = history.revision_order([s for s in shas if s in commits], times)
    indexes = build_revisions(repo, work, order, embedder, git_dir)
    skipped.update(["commit unreadable"] * sum(1 for s in shas if s not in commits)
                   + ["no index at the commit"] * sum(1 for s in order if s not in indexes))
    by_sha = {str(q.extra.get("commit")): q for q in questions}
    outcomes: list[Outcome] = []
    for sha in order:
        if sha not in indexes:
            continue
        q = by_sha[sha]
        config = load_config(work / "revs" / repo.folder / ".tree", {"out_dir": str(indexes[sha]),
                                                                     "embed": {"provider": embedder}})
        store = open_index(config)
        asked = question_at(store, q, commits[sha], git_dir)
        if asked is None:
            skipped["gold empty at the commit"] += 1
            print(f"{repo.name}@{sha[:12]}: skipped, no gold source file at the commit "
                  f"({', '.join(commits[sha].paths[:4])})", file=sys.stderr)
            continue
        asked.extra.update(repo=repo.name, split=split, language=repo.language, mode="at-commit",
                           revision=sha[:12], head_gold_files=list(q.gold_files))
        # the first query of a freshly opened store reads its tables: time the question on a store that has
        # answered once. The reference graph stays lazy (built from the stored analysis only for a question
        # naming a symbol, seconds on a large tree, which the default mode pays once per repository): building
        # it for every revision tripled a full run, so this mode's seconds may hold a graph build; quote the
        # default mode's
        locate(store, WARM_UP)
        outcomes += run(store, [asked], locate=locate)
    return outcomes, {}, skipped


def question_at(store: IndexStore, q: Question, commit: history.Commit, git_dir: Path) -> Question | None:
    """`q` with its gold read at its commit from the index of that commit's tree (None: no gold there)."""
    rows = store.rows("files", ["path", "kind", "language"])
    source = {r["path"] for r in rows if r["kind"] == "code" and is_parsed(r["language"])}
    gold, _ = history.gold_at_commit(commit, source.__contains__, {}, lambda _p: ())
    if not gold:
        return None
    spans: dict[str, list[history.SymbolSpan]] = {}
    columns = ["path", "qualname", "kind", "start_line", "end_line"]
    for r in store.rows("symbols", columns, in_list("path", list(gold))):
        spans.setdefault(r["path"], []).append(
            history.SymbolSpan(r["qualname"], r["kind"], int(r["start_line"]), int(r["end_line"])))
    ranges = history.commit_ranges(git_dir, commit, gold)
    gold, functions = history.gold_at_commit(commit, source.__contains__, ranges,
                                             lambda p: spans.get(p, []))
    lines: dict[tuple[str, str], tuple[int, int]] = {}
    for path, found in spans.items():
        for span in found:  # the first of a name, as eval_report.function_lines reads the default mode's
            lines.setdefault((path, span.qualname), (span.start_line, span.end_line))
    extra = {k: v for k, v in q.extra.items() if k != "gold_functions"}
    extra["gold_functions"] = [{"path": p, "qualname": name, "start_line": lines[p, name][0],
                                "end_line": lines[p, name][1]} for p, name in functions]
    return Question(q.id, q.question, gold, extra)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--repo", action="append", default=[], help="folder name (repeatable; default all)")
    parser.add_argument("--label", default="run")
    parser.add_argument("--embedder", default="none",
                        help="embed.provider of indexes and questions (default none: full-text only)")
    parser.add_argument("--at-commit", action="store_true",
                        help="ask each question of an index of its own commit's tree (DIR/revs), gold as the "
                             "commit names it, instead of the pinned checkout's index")
    args = parser.parse_args()
    repos = corpus.load()
    tuned = corpus.tune_split(repos)
    chosen = [r for r in repos if not args.repo or r.folder in args.repo]
    outcomes: list[Outcome] = []
    lines: dict[tuple[str, str], tuple[int, int]] = {}
    skipped: Counter[str] = Counter()
    started = time.perf_counter()
    for repo in chosen:
        split = "tune" if repo.name in tuned else "report"
        try:
            if args.at_commit:
                got, found, left = measure_at_commit(repo, args.work, split, args.embedder)
                skipped.update(left)
            else:
                got, found = measure(repo, args.work, args.n, split, args.embedder)
                for o in got:
                    o.question.extra["mode"] = "pinned"
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
    if skipped:
        print("\nleft out: " + ", ".join(f"{n} {why}" for why, n in sorted(skipped.items())))
    asking = sum(o.seconds for o in outcomes)
    print(f"\n{len(outcomes)} questions in {time.perf_counter() - started:.0f}s ({asking:.0f}s asking)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
