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
from sourcebook.settings import Settings

F = TypeVar("F", bound=Callable[..., Any])

# what marks a repository root, strongest first at each level
ROOT_MARKERS = (".sourcebook", "sourcebook-workspace.toml", "sourcebook.toml", ".git")


def enclosing_root(start: Path | str) -> Path | None:
    """The nearest folder at or above `start` holding a ROOT_MARKERS entry, or None."""
    here = Path(start).expanduser().resolve()
    for folder in (here, *here.parents):
        if any((folder / marker).exists() for marker in ROOT_MARKERS):
            return folder
    return None


def find_root(start: Path | str) -> Path:
    """The nearest folder at or above `start` holding a ROOT_MARKERS entry; `start` itself when none does."""
    return enclosing_root(start) or Path(start).expanduser().resolve()


def user_settings() -> Settings:
    """The user's settings for this command: the environment with the flags given so far laid over it (the
    group's --trust-repo-config, the command's --index-uri). Passed down as an argument, never through
    os.environ; read from the environment when the command runs outside the `sourcebook` group."""
    ctx = click.get_current_context(silent=True)
    found = ctx.find_object(Settings) if ctx is not None else None
    return found if found is not None else Settings.from_env()


def reader_path(positional: str | None = None, option: str | None = None) -> str | None:
    """What a reading command (ask, search, the tools, serve, mcp) works on: as `chosen_path`, except that
    with an index URI set (--index-uri / SOURCEBOOK_INDEX_URI), no path given and no repository around the
    working directory, there is no checkout: None, and the index alone answers
    (answer/serving/workspace.py)."""
    if positional is None and option is None and user_settings().index_uri \
            and enclosing_root(Path.cwd()) is None:
        return None
    return chosen_path(positional, option)


def _set_index_uri(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    if value:
        # this command's settings (user_settings): every load_config it makes, also in workspaces resolved
        # lazily and in server workers, is handed them
        ctx.obj = user_settings().with_flags(index_uri=value)


def index_uri_option(command: F) -> F:
    """--index-uri URI: where the index is read and written (a path, s3://, gs://, az://)."""
    return click.option(
        "--index-uri", default=None, metavar="URI", expose_value=False, callback=_set_index_uri,
        help="Where the index lives: a path, s3://bucket/prefix, gs://… or az://… (also "
             "SOURCEBOOK_INDEX_URI; never the repository's own config). Credentials and endpoint come from "
             "the store's standard environment (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, …).")(command)


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
