"""`sourcebook context`, `symbol`, `file`, `structure`: the agent tools from the shell, each with --json."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from answer.context import DEFAULT_BUDGET_TOKENS
from sourcebook.cli_paths import index_uri_option, path_option, reader_path

if TYPE_CHECKING:
    from answer.tools import Tools

_path_option = path_option(dest="root")
_repo_option = click.option("--repo", default=None, help="Repository alias in a workspace.")
_json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


def _tools(root: str | None) -> Tools:
    from answer.tools import Tools

    return Tools.for_path(reader_path(option=root))


def _dump(data: dict[str, Any]) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


@click.command("context")
@click.argument("query", required=False)
@click.option("-t", "--target", "targets", multiple=True,
              help="A path, path:START-END or symbol name (repeatable).")
@click.option("--budget", "budget_tokens", default=DEFAULT_BUDGET_TOKENS, show_default=True,
              type=click.IntRange(1), help="Token budget (tokens = ceil(characters / 4)).")
@click.option("--scope", default=None, help="Path prefix for the query's search.")
@_repo_option
@_path_option
@index_uri_option
@_json_option
def context_command(query: str | None, targets: tuple[str, ...], budget_tokens: int,  # noqa: PLR0917
                    scope: str | None, repo: str | None, root: str | None, as_json: bool) -> None:
    """Pack the code most relevant to QUERY (and/or --target) into a token budget."""
    data = _tools(root).get_context(query=query, targets=list(targets), budget_tokens=budget_tokens,
                                    scope=scope, repo=repo)
    if as_json:
        _dump(data)
        return
    for note in data["notes"]:
        click.echo(f"note: {note}", err=True)
    if data["missing"]:
        click.echo(f"not found: {', '.join(data['missing'])}", err=True)
    for span in data["spans"]:
        label = f" {span['symbol']}" if span["symbol"] else ""
        cut = " (truncated)" if span["truncated"] else ""
        click.echo(f"# {span['path']}:{span['start_line']}-{span['end_line']}{label} [{span['reason']}]{cut}")
        click.echo(span["text"])
        click.echo()
    click.echo(f"{data['used_tokens']}/{data['budget_tokens']} tokens, {len(data['spans'])} spans, "
               f"{data['skipped']} skipped", err=True)


@click.command("symbol")
@click.argument("name")
@click.option("--in", "in_path", default=None, help="Only definitions in this file.")
@_repo_option
@_path_option
@index_uri_option
@_json_option
def symbol_command(name: str, in_path: str | None, repo: str | None, root: str | None, as_json: bool) -> None:
    """Definitions of NAME with signature, docstring, live body, callers and callees."""
    data = _tools(root).get_symbol(name, path=in_path, repo=repo)
    if as_json:
        _dump(data)
        return
    for d in data["definitions"]:
        click.echo(f"# {d['path']}:{d['start_line']}-{d['end_line']} {d['kind']} {d['qualname']}")
        click.echo(d["signature"])
        if d["docstring"]:
            click.echo(f'    """{d["docstring"]}"""')
        if d.get("note"):
            click.echo(f"note: {d['note']}", err=True)
        if d.get("callers"):
            click.echo("callers: " + ", ".join(f"{c['path']}::{c['qualname']}" for c in d["callers"][:10]))
        if d.get("callees"):
            click.echo("calls: " + ", ".join(f"{c['path']}::{c['qualname']}" for c in d["callees"][:10]))
        click.echo()


@click.command("file")
@click.argument("file_path")
@click.option("--lines", default=None, help="START-END line range.")
@_repo_option
@_path_option
@index_uri_option
@_json_option
def file_command(file_path: str, lines: str | None, repo: str | None, root: str | None,
                 as_json: bool) -> None:
    """Print the indexed content of FILE_PATH (relative to the repository root)."""
    start = end = None
    if lines:
        head, _, tail = lines.partition("-")
        try:
            start, end = int(head), int(tail or head)
        except ValueError as exc:
            raise click.BadParameter("expected START-END", param_hint="--lines") from exc
    data = _tools(root).read_file(file_path, start_line=start, end_line=end, repo=repo)
    if as_json:
        _dump(data)
        return
    click.echo(data["content"])


def prune_tree(node: dict[str, Any], depth: int | None) -> dict[str, Any]:
    """`node` with directories below `depth` levels folded: they keep their counts, lose their children."""
    if depth is None:
        return node
    if depth <= 0:
        return {k: v for k, v in node.items() if k != "children"}
    out = dict(node)
    if "children" in node:
        out["children"] = [prune_tree(c, depth - 1) if c.get("type") == "dir" else c
                           for c in node["children"]]
    return out


@click.command("structure")
@click.option("--scope", default=None, help="Only this path prefix.")
@click.option("--depth", type=click.IntRange(min=1), default=None,
              help="Show this many levels (as `tree -L`); deeper directories are folded into their counts.")
@_repo_option
@_path_option
@index_uri_option
@_json_option
def structure_command(scope: str | None, depth: int | None, repo: str | None, root: str | None,
                      as_json: bool) -> None:
    """The indexed file tree with symbol counts."""
    data = _tools(root).get_repo_structure(scope=scope, repo=repo)
    data["tree"] = prune_tree(data["tree"], depth)
    if as_json:
        _dump(data)
        return
    if not data["indexed"]:
        click.echo("not indexed: run `sourcebook index` first", err=True)

    def show(node: dict[str, Any], depth: int) -> None:
        for child in node.get("children", []):
            pad = "  " * depth
            if child["type"] == "dir":
                click.echo(f"{pad}{child['name']}/  ({child['files']} files, {child['symbols']} symbols)")
                show(child, depth + 1)
            else:
                click.echo(f"{pad}{child['name']}  {child['symbols']}")

    show(data["tree"], 0)
    click.echo(f"{data['files']} files, {data['symbols']} symbols", err=True)


COMMANDS = [context_command, symbol_command, file_command, structure_command]
