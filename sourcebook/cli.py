"""The command line: the one place that prints and turns SourcebookError into exit codes.

Commands live in small modules next to this one (cli_build, cli_search, cli_answer, cli_serve), each keeping
heavy imports inside the command body so that `sourcebook --help` and `sourcebook search` start fast.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys

import click

from sourcebook import __version__
from sourcebook.errors import SourcebookError

# module name -> the click commands it defines; a module not written yet is simply absent
_COMMAND_MODULES = ("cli_build", "cli_search", "cli_answer", "cli_tools", "cli_serve", "cli_setup")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sourcebook")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
@click.option("--trust-repo-config", is_flag=True,
              help="Obey the repository's own sourcebook.toml / [tool.sourcebook] also where it chooses "
                   "where data goes (LLM and embedding endpoints, keys, models, index_uri, out_dir outside "
                   "it). Off by default: those come from you (environment, flags, "
                   "~/.config/sourcebook/config.toml).")
def cli(verbose: int, trust_repo_config: bool) -> None:
    """Turn a repository into a wiki and a search index, and answer questions about it.

    A repository is untrusted input: its own config shapes its wiki but cannot send your code or keys
    anywhere (see "Threat model" in the README).
    """
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    if trust_repo_config:
        # the one switch every command's load_config reads (workspaces resolve configs lazily, deep inside)
        os.environ["SOURCEBOOK_TRUST_REPO_CONFIG"] = "1"


def _register() -> None:
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(f"sourcebook.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"sourcebook.{name}":
                raise
            continue
        for command in getattr(module, "COMMANDS", ()):
            cli.add_command(command)


_register()


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except SourcebookError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)


if __name__ == "__main__":
    main()
