"""Click options generated from a tool's request model (answer/serving/tool_contracts.py), so the shell
takes the
same arguments, defaults and bounds as MCP and HTTP.

A field becomes `--field-name` (or the names a command keeps for habit, e.g. `--budget`), one field may be
the positional argument, a list field is a repeatable option whose values may also be comma-separated, a
Literal field is a choice, an int with bounds is an IntRange. Options a command adds for the shell only
(`--json`, `--depth`, `--path`) stay in the command.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import annotated_types
import click

from answer.serving.tool_contracts import ToolRequest, ToolSpec

F = TypeVar("F", bound=Callable[..., Any])


def _plain(annotation: Any) -> Any:
    """`X | None` -> X."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _bounds(metadata: Sequence[Any]) -> tuple[int | None, int | None]:
    low = next((int(typing.cast(int, m.ge)) for m in metadata if isinstance(m, annotated_types.Ge)), None)
    high = next((int(typing.cast(int, m.le)) for m in metadata if isinstance(m, annotated_types.Le)), None)
    return low, high


def _param(spec: ToolSpec, name: str, names: Mapping[str, Sequence[str]], argument: str | None) -> Any:
    info = spec.request.model_fields[name]
    kind = _plain(info.annotation)
    default = None if info.is_required() else info.get_default(call_default_factory=True)
    if name == argument:
        if info.is_required():
            return click.argument(name)
        return click.argument(name, required=False, default=default)
    decls = [*names.get(name, (f"--{name.replace('_', '-')}",)), name]
    help_text = info.description or ""
    if typing.get_origin(kind) is list:
        return click.option(*decls, multiple=True, default=default,
                            help=f"{help_text} Repeatable; a,b is split.")
    if typing.get_origin(kind) is typing.Literal:
        return click.option(*decls, type=click.Choice([str(a) for a in typing.get_args(kind)]),
                            default=default, show_default=True, help=help_text)
    if kind is bool:
        flag = decls[0].lstrip("-")
        return click.option(f"--{flag}/--no-{flag}", name, default=bool(default), show_default=True,
                            help=help_text)
    if kind is int:
        low, high = _bounds(info.metadata)
        return click.option(*decls, type=click.IntRange(low, high), default=default,
                            show_default=default is not None, help=help_text)
    return click.option(*decls, default=default, help=help_text)


def tool_options(spec: ToolSpec, *, argument: str | None = None,
                 names: Mapping[str, Sequence[str]] | None = None) -> Callable[[F], F]:
    """Decorate a click command with one parameter per field of `spec`'s request model."""
    def decorate(command: F) -> F:
        for name in reversed(list(spec.request.model_fields)):
            command = _param(spec, name, names or {}, argument)(command)
        return command
    return decorate


def tool_request(spec: ToolSpec, values: Mapping[str, Any]) -> ToolRequest:
    """The validated request from a command's keyword arguments (its shell-only ones are ignored)."""
    data: dict[str, Any] = {}
    for name, info in spec.request.model_fields.items():
        value = values.get(name)
        if typing.get_origin(_plain(info.annotation)) is list:
            value = [part.strip() for item in value or () for part in str(item).split(",") if part.strip()]
        if value is not None:
            data[name] = value
    return spec.parse(data)
