"""`sourcebook build` (wiki + site + index of a repository) and `sourcebook serve-site` (view it locally)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sourcebook.cli.paths import chosen_path, index_uri_option, path_argument_and_option, user_settings

if TYPE_CHECKING:
    from rich.console import Console

    from generator.build import BuildReport
    from generator.pages.writer import PageWriter
    from sourcebook.config import Config

_STAGE_LABELS = {
    "scan": "Scanning files", "parse": "Parsing", "graph": "Building the graph", "plan": "Planning pages",
    "files": "Writing file pages", "modules": "Writing module pages", "overview": "Writing the overview",
    "topics": "Writing topic pages",
    "site": "Building the site (mkdocs)", "index": "Updating the search index",
}


def make_writer(config: Config, *, no_llm: bool = False, max_pages: int | None = None,
                max_cost: float | None = None) -> PageWriter:
    """The page writer this run uses: the LLM writer when a provider is configured, else extractive prose."""
    from generator.build_llm import writer_from_config
    from generator.pages.writer import ExtractiveWriter

    if not no_llm:
        llm = writer_from_config(config, max_pages=max_pages, max_cost=max_cost)
        if llm is not None:
            return llm
    return ExtractiveWriter()


def _with_llm_progress(progress: _StageProgress, writer: PageWriter) -> Any:
    """The stage progress plus pages, tokens and cost so far on the writing stages (a model's writer only)."""
    from generator.pages.model_writer import ModelWriter

    if not isinstance(writer, ModelWriter):
        return progress

    def notify(stage: str, done: int, total: int) -> None:
        progress(stage, done, total)
        if stage in {"files", "modules", "overview", "topics"}:
            if progress.live:
                progress.progress.update(progress.tasks[stage],
                                         description=f"{_STAGE_LABELS[stage]} ({writer.progress()})")
            elif total and done >= total:
                progress.console.print(f"  LLM so far: {writer.progress()}")

    return notify


class _StageProgress:
    """One Rich progress row per stage on a terminal; one line per finished stage elsewhere (CI logs)."""

    def __init__(self, console: Console) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = console
        self.live = console.is_terminal
        self.progress = Progress(TextColumn("{task.description:<30}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=console, disable=not self.live)
        self.tasks: dict[str, Any] = {}
        self.started: dict[str, float] = {}
        self.finished: set[str] = set()

    def __enter__(self) -> _StageProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(*exc)  # type: ignore[arg-type]

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage not in self.tasks:
            self.tasks[stage] = self.progress.add_task(_STAGE_LABELS.get(stage, stage), total=total or None)
            self.started[stage] = time.perf_counter()
        self.progress.update(self.tasks[stage], completed=done, total=total or None)
        if total and done >= total and stage not in self.finished:
            self.finished.add(stage)
            if not self.live:
                took = time.perf_counter() - self.started[stage]
                self.console.print(f"{_STAGE_LABELS.get(stage, stage)}: {done}/{total} ({took:.2f}s)")


def _capability_notes(config: Config, report: BuildReport) -> list[tuple[str, str]]:
    """The summary rows for what this build ran without: the semantic tier (an index without vectors) and
    offline diagrams (a site that loads mermaid.js from the CDN), each with the command that adds it."""
    notes: list[tuple[str, str]] = []
    if report.index is not None and getattr(report.index, "embedder", "none") == "none":
        from sourcebook.cli.doctor import semantic_off_note

        notes.append(("Semantic tier", semantic_off_note(config.embed, index_has_vectors=False)))
    if report.site_dir is not None:
        from sourcebook.cli.doctor import mermaid_check

        check = mermaid_check()
        if not check.ok:
            notes.append(("Diagrams", f"{check.detail} (offline copy: {check.fix})"))
    return notes


def _summary(console: Console, report: BuildReport, took: float, config: Config) -> None:
    from rich.table import Table

    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")  # wrap long paths and URLs, never cut them with "…"
    table.add_row("Repository", str(report.root))
    table.add_row("Files", f"{report.files} ({report.parsed} parsed, {report.parse_cached} unchanged)")
    table.add_row("Symbols", str(report.symbols))
    table.add_row("Pages", f"{len(report.pages_written)} written, {report.pages_unchanged} unchanged, "
                           f"{len(report.pages_deleted)} deleted ({report.pages_total} in the wiki)"
                  + (f"; from the shared build cache: {len(report.pages_restored)} as they were, "
                     f"{len(report.drafts_reused)} re-rendered from cached drafts"
                     if report.pages_restored or report.drafts_reused else ""))
    table.add_row("Prose", f"{report.writer_id}"
                  + (f", {len(report.write_failures)} pages fell back (retried on later builds, with backoff)"
                     if report.write_failures else "")
                  + (f", {len(report.kept_prose)} of them kept the model's earlier prose"
                     if report.kept_prose else ""))
    if report.skipped:
        reasons = ", ".join(f"{n} {reason}" for reason, n in report.skip_reasons.items())
        table.add_row("Skipped", f"{len(report.skipped)} files: {reasons}")
    if report.warnings:
        table.add_row("Warnings", f"{report.warnings} extraction warnings (listed on the file pages)")
    if report.index is not None:
        idx = report.index
        table.add_row("Index", f"{getattr(idx, 'files_indexed', '?')} files indexed, "
                               f"{getattr(idx, 'files_unchanged', '?')} unchanged "
                               f"({getattr(idx, 'embedder', 'none')})")
    for name, note in _capability_notes(config, report):
        table.add_row(name, note)
    stages = ", ".join(f"{stage} {secs:.1f}s" for stage, secs in report.timings.items() if secs >= 0.05)
    table.add_row("Time", f"{took:.1f}s" + (f" ({stages})" if stages else ""))
    if report.site_dir is not None:
        index_html = report.site_dir / "index.html"
        state = "built" if report.site_built else "up to date"
        table.add_row("Site", f"{state}: {index_html.as_uri()}")
        default_out = report.out_dir == report.root / ".sourcebook"
        table.add_row("", f"serve it: sourcebook serve-site {report.root}"
                          + ("" if default_out else f" --out {report.out_dir}"))
    else:
        table.add_row("Markdown", str(report.out_dir / "docs"))
    console.print(table)


@click.command("build")
@path_argument_and_option()
@index_uri_option
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output folder (default PATH/.sourcebook): docs/ Markdown, site/ HTML, index/ LanceDB.")
@click.option("--include", multiple=True, help="Only files matching this glob (repeatable).")
@click.option("--exclude", multiple=True, help="Skip files matching this glob (repeatable).")
@click.option("--repo-url", default=None,
              help="Base URL for source links, e.g. https://github.com/o/r/blob/main/ .")
@click.option("--check", is_flag=True,
              help="Write nothing; list pages whose inputs changed and exit 1 if any (for CI).")
@click.option("--fail-on-fallback", is_flag=True,
              help="With --check: also exit 1 when pages hold fallback prose (the LLM failed them).")
@click.option("--no-site", is_flag=True, help="Write the Markdown pages but do not run mkdocs.")
@click.option("--no-index", is_flag=True, help="Do not update the search index.")
@click.option("--serve", is_flag=True, help="Serve the site on 127.0.0.1 after building it.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--dry-run", is_flag=True,
              help="Write nothing, call nothing: print the pages to write and the estimated tokens and cost.")
@click.option("--max-cost", type=click.FloatRange(min=0), default=None,
              help="Stop calling the LLM once this many dollars are spent (the rest is retried next run).")
@click.option("--max-pages", type=click.IntRange(min=0), default=None,
              help="Write at most this many pages with the LLM this run (the rest is retried next run).")
@click.option("--llm-base-url", default=None,
              help="OpenAI-compatible endpoint. Also SOURCEBOOK_LLM_BASE_URL / OPENAI_BASE_URL or [llm] "
                   "base_url in ~/.config/sourcebook/config.toml; never the repository's own config. The key "
                   "comes from SOURCEBOOK_LLM_API_KEY / OPENAI_API_KEY or that file only.")
@click.option("--llm-model", default=None,
              help="Model name (SOURCEBOOK_LLM_MODEL, or the user config file; never the repository's).")
@click.option("--llm-mode", type=click.Choice(["tools", "json", "md_json"]), default=None,
              help="Instructor mode (SOURCEBOOK_LLM_MODE); llama.cpp's server needs tools.")
@click.option("--context-tokens", type=click.IntRange(min=1024), default=None,
              help="The model's context window (SOURCEBOOK_LLM_CONTEXT_TOKENS); every prompt fits it.")
@click.option("--no-llm", is_flag=True, help="Extractive prose even when an LLM provider is configured.")
@click.option("--lock-wait", type=click.FloatRange(min=0), default=None, metavar="SECONDS",
              help="When another build or index run is writing the same output folder, wait at most this "
                   "long (default: until it finishes; 0: exit at once).")
@click.option("--site-workers", type=click.IntRange(min=1), default=None, metavar="N",
              help="Processes rendering pages: the wiki's Markdown and the site's HTML (also "
                   "SOURCEBOOK_SITE_WORKERS; default: the CPUs this process may use).")
@click.option("--parse-workers", type=click.IntRange(min=1), default=None, metavar="N",
              help="Processes parsing files and making index rows (also SOURCEBOOK_PARSE_WORKERS; default: "
                   "--site-workers when given, else the CPUs this process may use).")
def build_command(path: str | None, path_option: str | None, out_dir: str | None,  # noqa: PLR0917
                  include: tuple[str, ...], exclude: tuple[str, ...], repo_url: str | None, check: bool,
                  fail_on_fallback: bool, no_site: bool, no_index: bool, serve: bool, port: int,
                  dry_run: bool, max_cost: float | None, max_pages: int | None, llm_base_url: str | None,
                  llm_model: str | None, llm_mode: str | None, context_tokens: int | None, no_llm: bool,
                  lock_wait: float | None, site_workers: int | None, parse_workers: int | None) -> None:
    """Build the wiki, the site and the search index of the repository at PATH.

    With an LLM you configured (--llm-base-url, SOURCEBOOK_LLM_* / OPENAI_* or
    ~/.config/sourcebook/config.toml; never the repository's own config), page and
    docstring prompts (source excerpts, the README, extracted facts), redacted, are
    sent to it; with the openai embedder, chunk text is sent to that endpoint.
    Otherwise nothing leaves the machine. Writes stay in the output folder."""
    path = chosen_path(path, path_option)
    from rich.console import Console

    from generator.build import build
    from sourcebook.config import load_config

    overrides: dict[str, Any] = {"out_dir": out_dir, "repo_url": repo_url}
    if include:
        overrides["include"] = include
    if exclude:
        overrides["exclude"] = exclude
    llm = {"base_url": llm_base_url, "model": llm_model, "mode": llm_mode, "context_tokens": context_tokens}
    overrides["llm"] = {k: v for k, v in llm.items() if v is not None}
    settings = user_settings()
    config = load_config(Path(path), overrides=overrides, settings=settings)
    writer = make_writer(config, no_llm=no_llm, max_pages=max_pages, max_cost=max_cost)
    console = Console(stderr=True)
    if dry_run:
        _dry_run(config, writer)
        return
    started = time.perf_counter()
    with _StageProgress(console) as progress:
        report = build(config, writer=writer, check=check, site=not no_site and not check,
                       index=not no_index and not check, progress=_with_llm_progress(progress, writer),
                       lock_wait=lock_wait, site_workers=site_workers or settings.site_workers,
                       parse_workers=parse_workers or settings.parse_workers)
    if check:
        _check_result(report, fail_on_fallback=fail_on_fallback)
        return
    if report.changes is not None:  # what changed since the last build, kept for the answer engine
        from answer.answering.episodes import EpisodeStore

        EpisodeStore(config.out_dir).record_changes(report.changes)
    _summary(console, report, time.perf_counter() - started, config)
    from generator.pages.model_writer import ModelWriter

    if isinstance(writer, ModelWriter):
        from generator.build_llm import finish_run

        console.print(finish_run(config, writer))
    if serve and report.site_dir is not None:
        _serve(report.site_dir, port, console)


def _check_result(report: BuildReport, *, fail_on_fallback: bool) -> None:
    """Print what --check found; exit 1 on changed inputs (and on fallbacks with --fail-on-fallback)."""
    if report.stale:
        click.echo(f"{len(report.stale)} stale pages (run `sourcebook build` to update them):")
        for page_id in report.stale:
            click.echo(f"  {page_id}")
    if report.fallbacks:
        click.echo(f"{len(report.fallbacks)} pages hold fallback prose (the LLM failed them; retried with "
                   "backoff on later builds):")
        for page_id in report.fallbacks:
            click.echo(f"  {page_id}")
    if report.stale or (fail_on_fallback and report.fallbacks):
        raise SystemExit(1)
    click.echo(f"wiki is up to date ({report.pages_total} pages)")


def _dry_run(config: Config, writer: PageWriter) -> None:
    from generator.build_llm import dry_run

    click.echo(dry_run(config, writer))


def _serve(site_dir: Path, port: int, console: Console) -> None:
    import functools
    import http.server

    if not (site_dir / "index.html").is_file():
        from sourcebook.errors import NotFoundError

        raise NotFoundError(f"{site_dir}: no built site here; run `sourcebook build` first")
    from generator.site.publish import site_headers

    headers = site_headers(site_dir)

    class Handler(http.server.SimpleHTTPRequestHandler):
        def end_headers(self) -> None:
            for name, value in headers.items():  # the same strict CSP as the wiki under `sourcebook serve`
                self.send_header(name, value)
            super().end_headers()

    handler = functools.partial(Handler, directory=str(site_dir))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        console.print(f"serving {site_dir} at http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
        server.serve_forever()


@click.command("serve-site")
@path_argument_and_option()
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Output folder used by `build --out` (default PATH/.sourcebook).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
def serve_site_command(path: str | None, path_option: str | None, out_dir: str | None, port: int) -> None:
    """Serve the built site of PATH on http://127.0.0.1:PORT/."""
    path = chosen_path(path, path_option)
    from rich.console import Console

    from sourcebook.config import load_config

    config = load_config(Path(path), overrides={"out_dir": out_dir}, settings=user_settings())
    _serve(config.site_dir, port, Console(stderr=True))


COMMANDS = [build_command, serve_site_command]
