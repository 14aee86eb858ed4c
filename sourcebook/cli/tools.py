"""`sourcebook context`, `symbol`, `file`, `structure`: the agent tools from the shell, each with --json.

Their arguments are generated from the tools' request models (sourcebook/cli/contract.py), so defaults and
bounds are the ones MCP and HTTP use; --json prints exactly what those surfaces return."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import click

from answer.serving.tool_contracts import BY_NAME
from sourcebook.cli.contract import tool_options, tool_request
from sourcebook.cli.paths import index_uri_option, path_option, reader_path, user_settings

if TYPE_CHECKING:
    from answer.serving.tools import Tools

_path_option = path_option(dest="root")
_json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


def _tools(root: str | None) -> Tools:
    from answer.serving.tools import Tools

    return Tools.for_path(reader_path(option=root), settings=user_settings())


def run_tool(name: str, root: str | None, values: dict[str, Any],
             require_index: bool = False) -> dict[str, Any]:
    """Run tool `name` with the command's arguments, validated by its request model (as MCP and HTTP do).

    `require_index`: an index that cannot be opened (missing, not made by this user, broken) is an error
    with its one-line reason and exit code, not the empty `degraded` reply a long-running server gives."""
    spec = BY_NAME[name]
    request = tool_request(spec, values)  # bad arguments fail before the index is opened
    tools = _tools(root)
    if require_index:
        tools.state(getattr(request, "repo", None)).store()
    return spec.invoke(tools, request)


def _dump(data: dict[str, Any]) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


@click.command("context")
@tool_options(BY_NAME["get_context"], argument="query",
              names={"targets": ("-t", "--target"), "budget_tokens": ("--budget",)})
@_path_option
@index_uri_option
@_json_option
def context_command(root: str | None, as_json: bool, **values: Any) -> None:
    """Pack the code most relevant to QUERY (and/or --target) into a token budget."""
    data = run_tool("get_context", root, values)
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
@tool_options(BY_NAME["get_symbol"], argument="name", names={"path": ("--in",)})
@_path_option
@index_uri_option
@_json_option
def symbol_command(root: str | None, as_json: bool, **values: Any) -> None:
    """Definitions of NAME with signature, docstring, live body, callers and callees."""
    data = run_tool("get_symbol", root, values)
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
@tool_options(BY_NAME["read_file"], argument="path")
@click.option("--lines", default=None, help="START-END line range (shorthand for --start-line/--end-line).")
@_path_option
@index_uri_option
@_json_option
def file_command(lines: str | None, root: str | None, as_json: bool, **values: Any) -> None:
    """Print the indexed content of PATH (relative to the repository root)."""
    if lines:
        head, _, tail = lines.partition("-")
        try:
            values["start_line"], values["end_line"] = int(head), int(tail or head)
        except ValueError as exc:
            raise click.BadParameter("expected START-END", param_hint="--lines") from exc
    data = run_tool("read_file", root, values)
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
@tool_options(BY_NAME["get_repo_structure"])
@click.option("--depth", type=click.IntRange(min=1), default=None,
              help="Show this many levels (as `tree -L`); deeper directories are folded into their counts.")
@_path_option
@index_uri_option
@_json_option
def structure_command(depth: int | None, root: str | None, as_json: bool, **values: Any) -> None:
    """The indexed file tree with symbol counts."""
    data = run_tool("get_repo_structure", root, values)
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
