"""`sourcebook search`, `sourcebook index` and `sourcebook eval`: the index and retrieval from the shell."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from answer.serving.tool_contracts import BY_NAME
from sourcebook.cli.contract import tool_options
from sourcebook.cli.paths import (
    chosen_path,
    index_uri_option,
    path_argument_and_option,
    path_option,
    user_settings,
)

_ROOT_HELP = "Repository root (default: the repository around the working directory)."


@click.command("index")
@path_argument_and_option()
@index_uri_option
@click.option("--prune/--no-prune", default=True, show_default=True,
              help="Remove indexed files that no longer exist.")
@click.option("--reset", is_flag=True,
              help="Re-point the index at this checkout: prune even when it is not the one the index was "
                   "built from (another git remote or folder, or no files found; refused otherwise).")
@click.option("--lock-wait", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
              help="When another build or index run is writing the same output folder, wait at most this "
                   "long (default: until it finishes; 0: exit at once).")
def index_command(path: str | None, path_option: str | None, prune: bool, reset: bool,
                  lock_wait: float | None) -> None:
    """Build or update the search index of PATH (no wiki pages are written).

    Embedding inputs go to the embedder you configure (SOURCEBOOK_EMBEDDER and SOURCEBOOK_EMBED_* or the
    user config file; the default runs locally); the repository's own config cannot choose a remote one.
    """
    path = chosen_path(path, path_option)
    from generator.index.command import index_repository
    from sourcebook.config import load_config

    report = index_repository(load_config(Path(path), settings=user_settings()), prune=prune,
                              lock_wait=lock_wait, reset=reset)
    vectors = (f"{report.embedded} embedded, {report.embed_reused} reused ({report.embedder})"
               if report.embedder != "none" else "no vectors (full-text only)")
    click.echo(f"indexed {report.files_total} files: {report.files_indexed} new or changed, "
               f"{report.files_unchanged} unchanged, {report.files_deleted} removed; "
               f"{report.chunks_written} chunks, {report.symbols_written} symbols; {vectors}; "
               f"{report.seconds:.2f}s" + (f" (rebuilt: {report.rebuilt})" if report.rebuilt else ""))
    for warning in report.warnings:
        click.echo(f"warning: {warning}", err=True)


@click.command("search")
@tool_options(BY_NAME["search_codebase"], argument="query")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output (what MCP and HTTP return).")
@path_option(dest="root", help_text=_ROOT_HELP, file_okay=False)
@index_uri_option
def search_command(as_json: bool, root: str | None, **values: Any) -> None:
    """Search the index: ranked files and spans for QUERY."""
    from sourcebook.cli.tools import run_tool

    data = run_tool("search_codebase", root, values, require_index=True)
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    for note in data["notes"]:
        click.echo(f"note: {note}", err=True)
    if not data["files"]:
        click.echo("no results")
        return
    click.echo("files:")
    for i, f in enumerate(data["files"], start=1):
        click.echo(f"{i:3}. {f['path']}  ({f['score']:.4f}; {', '.join(f['tiers'])})")
    click.echo("spans:")
    for h in data["hits"]:
        label = f"  {h['symbol']}" if h["symbol"] else ""
        click.echo(f"  {h['path']}:{h['start_line']}-{h['end_line']}{label}  ({', '.join(h['tiers'])})")


@click.command("eval")
@click.argument("questions", type=click.Path(exists=True, dir_okay=False), required=False)
@path_option(dest="repo", help_text=_ROOT_HELP, file_okay=False)
@index_uri_option
@click.option("--history", type=click.IntRange(1, 100_000), default=None, metavar="N",
              help="Ask the last N commits that changed source files: the message as the question, the "
                   "changed files and functions as the answer (the index is of the current checkout, so "
                   "each change is already in it).")
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="With --history: write the mined set (re-run it with `sourcebook eval SET.jsonl`); "
                   "otherwise: one JSON line of results per question.")
@click.option("--results", type=click.Path(dir_okay=False), default=None,
              help="Write one JSON line of results per question.")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 1000))
@click.option("--calibrate", is_flag=True,
              help="Derive this repository's confidence thresholds from these questions (the most 'high' "
                   "answers whose top file is right for at least 0.85 of them, moved toward the global "
                   "thresholds when the questions are few) and store them in the output folder, where "
                   "ask, MCP and HTTP read them.")
@click.option("--baseline/--no-baseline", default=True, show_default=True,
              help="Also rank the questions by a full-text search (BM25 over each file's whole text, no "
                   "index) and print what sourcebook adds over it.")
def eval_command(questions: str | None, repo: str | None, history: int | None, *, out: str | None,
                 results: str | None, limit: int, calibrate: bool, baseline: bool) -> None:
    """Score retrieval on QUESTIONS.jsonl ({id, question, gold_files} per line), or on the repository's
    own history (--history N): hit@k, recall@5, MRR, function-level hit@5, seconds, and per confidence
    label the share of questions whose top file was right, with the global thresholds and this
    repository's (--calibrate derives and stores them)."""
    from answer.answering.calibration import calibrate as derive_thresholds
    from answer.answering.calibration import read_calibration, write_calibration
    from answer.answering.localize import locate
    from answer.retrieval.evaluate import format_metrics, load_questions, run, score
    from generator.index.command import index_repository
    from generator.index.store import open_index
    from sourcebook.cli import eval_report
    from sourcebook.config import load_config
    from sourcebook.errors import UsageError

    if (questions is None) == (history is None):
        raise UsageError("give either QUESTIONS.jsonl or --history N")
    root = Path(chosen_path(option=repo))
    config = load_config(root, settings=user_settings())
    asked = load_questions(questions) if questions else []  # a malformed file fails before any indexing
    if not Path(config.index_location).exists() and "://" not in config.index_location:
        click.echo(f"no index at {config.index_location}: building it first", err=True)
        index_repository(config)
    store = open_index(config)
    if history is not None:
        mined = eval_report.mine_history(store, root, history)
        click.echo(f"history: {mined.considered} commits changed source files; {mined.trivial} left out "
                   f"(the message names a changed file), {mined.uninformative} (it says nothing of the "
                   f"code: 'Fix build'), {mined.housekeeping} (it names a chore: 'chore(deps): …', "
                   f"'Fix typo'); {len(mined.questions)} questions", err=True)
        if out:
            eval_report.write_set(mined, Path(out))
        asked, out = eval_report.as_questions(mined), None
    outcomes = run(store, asked, limit=limit, locate=locate)
    for target in (out, results):
        if target:
            with Path(target).open("w", encoding="utf-8") as fh:
                for outcome in outcomes:
                    fh.write(json.dumps(outcome.as_json()) + "\n")
    click.echo(format_metrics(score(outcomes)))
    for line in eval_report.table(outcomes, eval_report.function_lines(store, asked)):
        click.echo(line)
    if baseline:
        for line in eval_report.baseline_lines(store, root, asked, outcomes, limit=limit,
                                                   history=history is not None):
            click.echo(line)
    observed = eval_report.observations(outcomes)
    calibration = derive_thresholds(observed) if calibrate else None
    for line in eval_report.label_lines(observed, read_calibration(config.out_dir), calibration):
        click.echo(line)
    if calibration is not None:
        written = write_calibration(config.out_dir, calibration)
        where = f"stored in {written}" if written else "not stored (no local key to mark it with)"
        click.echo(f"calibration: {calibration.reason}; {where}")


COMMANDS = [search_command, index_command, eval_command]
