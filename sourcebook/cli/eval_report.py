"""`sourcebook eval`'s work below the command: mining a history set against an index, scoring a run of the
answer engine's localization, and the per-language table it prints."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING

from answer.answering.calibration import Calibration, Observation, precision_line
from answer.answering.grade import GLOBAL_THRESHOLDS, Thresholds
from answer.retrieval.evaluate import (
    BREAKDOWN_HEADER,
    Outcome,
    Question,
    breakdown,
    by_group,
    format_breakdown,
    gold_functions,
)
from sourcebook.sql import in_list

if TYPE_CHECKING:
    from answer.retrieval.history import Mined
    from generator.index.store import IndexStore


def mine_history(store: IndexStore, root: Path, n: int, rev: str = "HEAD", git_dir: Path | None = None
                 ) -> Mined:
    """The last `n` source-changing commits of `root`'s history (or of `git_dir`'s, up to `rev`) as
    questions; a gold file must be indexed as code of a parsed language (tests, docs, config, generated
    and vendored files are not), so files that no longer exist drop out."""
    from answer.retrieval.history import mine

    source = source_languages(store)
    return mine(git_dir or root, n, source.__contains__, lambda p: source.get(p) or "?", rev=rev)


def source_languages(store: IndexStore) -> dict[str, str]:
    """path -> language of the indexed files a history question's gold may be: code of a parsed language."""
    from generator.analyze.languages import is_parsed

    rows = store.rows("files", ["path", "kind", "language"])
    return {r["path"]: r["language"] for r in rows if r["kind"] == "code" and is_parsed(r["language"])}


def baseline_lines(store: IndexStore, root: Path, questions: list[Question], outcomes: list[Outcome],
                   *, limit: int, history: bool) -> list[str]:
    """The questions ranked by the language-blind full-text baseline (answer/retrieval/baseline.py) over the
    checkout's files, its metrics, and what sourcebook adds over it. The files: for a history set the ones
    its gold may be (source_languages), else every indexed file."""
    from answer.retrieval import baseline
    from answer.retrieval.evaluate import format_metrics, score

    paths = sorted(source_languages(store)) if history else [r["path"] for r in store.rows("files", ["path"])]
    started = time.perf_counter()
    docs = baseline.read_terms(root, paths)
    read = time.perf_counter() - started
    search = baseline.FullText(docs)
    ranked: list[Outcome] = []
    for q in questions:
        started = time.perf_counter()
        files = tuple(search.ranked(q.question, limit))
        ranked.append(Outcome(q, files, time.perf_counter() - started))
    ours, base = score(outcomes), score(ranked)
    return [f"full-text baseline (BM25 over the whole text of {len(docs)} files, read in {read:.1f} s; no "
            f"index): {format_metrics(base)}",
            f"sourcebook over the baseline: hit@1 {ours.hit[1] - base.hit[1]:+.3f}  hit@5 "
            f"{ours.hit[5] - base.hit[5]:+.3f}  MRR {ours.mrr - base.mrr:+.3f}"]


def write_set(mined: Mined, out: Path) -> None:
    with out.open("w", encoding="utf-8") as fh:
        for q in mined.questions:
            fh.write(json.dumps(q.as_json(), ensure_ascii=False) + "\n")


def as_questions(mined: Mined) -> list[Question]:
    return [Question(q.id, q.question, q.gold_files,
                     {k: v for k, v in q.as_json().items() if k not in {"id", "question", "gold_files"}})
            for q in mined.questions]


def function_lines(store: IndexStore, questions: list[Question]) -> dict[tuple[str, str], tuple[int, int]]:
    """(path, qualname) -> lines in the indexed checkout, for every gold function."""
    wanted = {pq for q in questions for pq in gold_functions(q)}
    paths = sorted({p for p, _ in wanted})
    if not paths:
        return {}
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for r in store.rows("symbols", ["path", "qualname", "start_line", "end_line"], in_list("path", paths)):
        key = (r["path"], r["qualname"])
        if key in wanted:
            out.setdefault(key, (int(r["start_line"]), int(r["end_line"])))
    return out


def table(outcomes: list[Outcome], lines: dict[tuple[str, str], tuple[int, int]], key: str = "language"
          ) -> list[str]:
    """The per-group lines `sourcebook eval` prints (a group per `key` value, then ALL)."""
    out = [BREAKDOWN_HEADER]
    groups = by_group(outcomes, key)
    if len(groups) > 1 or "?" not in groups:
        out += [format_breakdown(name, breakdown(rows, lines)) for name, rows in groups.items()]
    out.append(format_breakdown("ALL", breakdown(outcomes, lines)))
    return out


def observations(outcomes: list[Outcome]) -> list[Observation]:
    """What the confidence labels are computed from, per scored question that carries it."""
    return [Observation.of(o.features, o.ranked, o.question.gold_files)
            for o in outcomes if o.question.gold_files and o.features]


def label_lines(observed: list[Observation], stored: Thresholds | None, calibration: Calibration | None
                ) -> list[str]:
    """Per confidence label, the questions and the share whose top file was right: with the global
    thresholds, with the ones stored for this repository and with the ones just derived (on these same
    questions, so an in-sample figure)."""
    rows = [("global", GLOBAL_THRESHOLDS)]
    if stored is not None and stored != GLOBAL_THRESHOLDS:
        rows.append(("stored for this repository", stored))
    if calibration is not None and calibration.thresholds != GLOBAL_THRESHOLDS:
        rows.append(("calibrated on these questions", calibration.thresholds))
    out = ["confidence label n:top-1 right, by thresholds (lead over the runner-up, the ranker's share of "
           "the top file, coverage of the question)"]
    for name, t in rows:
        out.append(precision_line(f"{name} ({t.dominance_high:g}, {t.share_high:g}, {t.coverage_high:g})",
                                  observed, t))
    return out
