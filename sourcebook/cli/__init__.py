"""The command line: the one place that prints and turns SourcebookError into exit codes.

Commands live in small modules of this package (build, search, answer, tools, serve), each keeping
heavy imports inside the command body so that `sourcebook --help` and `sourcebook search` start fast.
"""

from __future__ import annotations

import importlib
import logging
import os
import signal
import sys
import threading
from types import FrameType

import click

from sourcebook import __version__
from sourcebook.errors import SourcebookError
from sourcebook.settings import Settings

# module name -> the click commands it defines; a module not written yet is simply absent
_COMMAND_MODULES = ("build", "search", "answer", "tools", "serve", "setup")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.pass_context
@click.version_option(__version__, prog_name="sourcebook")
@click.option("-v", "--verbose", count=True, help="More log output (-vv for debug).")
@click.option("--trust-repo-config", is_flag=True,
              help="Obey the repository's own sourcebook.toml / [tool.sourcebook] also where it chooses "
                   "where data goes (LLM and embedding endpoints, keys, models, index_uri, out_dir outside "
                   "it). Off by default: those come from you (environment, flags, "
                   "~/.config/sourcebook/config.toml).")
def cli(ctx: click.Context, verbose: int, trust_repo_config: bool) -> None:
    """Turn a repository into a wiki and a search index, and answer questions about it.

    A repository is untrusted input: its own config shapes its wiki but cannot send your code or keys
    anywhere (see "Threat model" in the README).
    """
    level = logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    # the environment read once (every bad variable reported here, before any work), with the group's flag
    # over it: each command hands this object down (cli/paths.py's user_settings); none writes os.environ
    settings = Settings.from_env()
    ctx.obj = settings.with_flags(trust_repo_config=True) if trust_repo_config else settings


def _register() -> None:
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(f"sourcebook.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"sourcebook.cli.{name}":
                raise
            continue
        for command in getattr(module, "COMMANDS", ()):
            cli.add_command(command)


_register()


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C: every `finally` runs (workers killed, locks freed,
    half-made output dropped), and what the last run published stays as it was."""


def _terminated(signum: int, frame: FrameType | None) -> None:
    raise Terminated()


def main() -> None:
    signal.signal(signal.SIGTERM, _terminated)
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort as exc:
        terminated = isinstance(exc.__context__, Terminated)
        click.echo("terminated" if terminated else "aborted", err=True)
        _leave(143 if terminated else 130)
    except Terminated:
        click.echo("terminated", err=True)
        _leave(143)
    except click.ClickException as exc:
        exc.show()
        _leave(exc.exit_code)
    except SourcebookError as exc:
        click.echo(f"error: {exc}", err=True)
        _leave(exc.exit_code)


def _leave(code: int) -> None:
    """Exit with `code`. A writer thread still waiting on a provider (a hung call after a stall, a build
    interrupted mid-page) would be joined by the interpreter's exit for as long as its call lasts: when one
    is alive, leave at once instead (the output was made safe by the `finally` blocks that already ran)."""
    alive = [t for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive()
             and not t.daemon]
    if alive:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":
    main()
