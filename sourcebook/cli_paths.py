"""Which repository a command works on: PATH (positional or --path), else the one the shell is inside.

Every command takes `--path`; those that always took a positional PATH (build, index, serve, mcp,
serve-site) keep it too. Without either, the repository is found by walking up from the working directory to
the first folder holding `.sourcebook/`, a sourcebook config or workspace file, or `.git`, so a command run
from `src/pkg/` works on the whole repository, as git does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from sourcebook.errors import UsageError

F = TypeVar("F", bound=Callable[..., Any])

# what marks a repository root, strongest first at each level
ROOT_MARKERS = (".sourcebook", "sourcebook-workspace.toml", "sourcebook.toml", ".git")


def find_root(start: Path | str) -> Path:
    """The nearest folder at or above `start` holding a ROOT_MARKERS entry; `start` itself when none does."""
    here = Path(start).expanduser().resolve()
    for folder in (here, *here.parents):
        if any((folder / marker).exists() for marker in ROOT_MARKERS):
            return folder
    return here


def chosen_path(positional: str | None = None, option: str | None = None) -> str:
    """The path a command was given (the positional and --path must agree), else the enclosing repository."""
    if positional is not None and option is not None and Path(positional).resolve() != Path(option).resolve():
        raise UsageError(f"two different paths given: {positional!r} and --path {option!r}; give one")
    given = positional if positional is not None else option
    return given if given is not None else str(find_root(Path.cwd()))


def path_option(*, dest: str = "path", help_text: str = "Repository root, a workspace file, or a directory "
                "holding sourcebook-workspace.toml (default: the repository around the working directory).",
                file_okay: bool = True) -> Callable[[F], F]:
    return click.option("--path", dest, default=None, type=click.Path(exists=True, file_okay=file_okay),
                        help=help_text)


def path_argument_and_option(*, file_okay: bool = False) -> Callable[[F], F]:
    """The positional PATH (optional) plus --path, for the commands that always took a positional."""
    def decorate(command: F) -> F:
        command = click.option("--path", "path_option", default=None,
                               type=click.Path(exists=True, file_okay=file_okay),
                               help="Same as PATH (default: the repository around the working directory).",
                               )(command)
        return click.argument("path", required=False, default=None,
                              type=click.Path(exists=True, file_okay=file_okay))(command)
    return decorate
