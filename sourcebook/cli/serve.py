"""`sourcebook serve` (the HTTP API + wiki) and `sourcebook mcp` (the MCP server, stdio or HTTP)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

from sourcebook.cli.paths import index_uri_option, path_argument_and_option, reader_path, user_settings
from sourcebook.settings import TOKEN_ENV

if TYPE_CHECKING:
    import uvicorn

    from sourcebook.settings import ServeSettings


@click.command("serve")
@path_argument_and_option(file_okay=True)
@index_uri_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=7700, show_default=True, type=click.IntRange(0, 65535))
@click.option("--token", default=None,
              help=f"Bearer token required on every request (required for a non-loopback --host; also "
                   f"${TOKEN_ENV}).")
@click.option("--max-body", default=1_000_000, show_default=True, type=click.IntRange(1),
              help="Largest request body accepted, in bytes (larger: 413).")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 32),
              help="Worker processes (each opens its own index handles; more cores, more memory).")
@click.option("--orgs", "orgs_file", default=None, type=click.Path(exists=True, dir_okay=False),
              help="Serve organisations (answer/serving/orgs.py): each its own token hashes and index "
                   "root; the bearer token selects the organisation. Re-read on SIGHUP.")
def serve_command(path: str | None, path_option: str | None, host: str, port: int,  # noqa: PLR0917
                  token: str | None, max_body: int, workers: int, orgs_file: str | None) -> None:
    """Serve the HTTP API (/ask, /search, /context, /symbol, /file, /structure, /index, /remember),
    its OpenAPI schema (/docs) and the built wiki (/wiki/) for PATH.

    /ask sends the question and the evidence it found, redacted, to the LLM you
    configured (SOURCEBOOK_LLM_* / OPENAI_* or ~/.config/sourcebook/config.toml; never
    the repository's own config); without one nothing leaves the machine. The wiki
    is served under a strict CSP, and no web page can POST /remember or /index
    without the token.

    With --index-uri and no checkout (no PATH, none around the working
    directory), every tool answers from the index alone."""
    token = token or user_settings().token
    if orgs_file is not None:
        _serve_orgs(orgs_file, path or path_option, host, port, token, max_body, workers)
        return
    path = reader_path(path, path_option)
    import uvicorn

    from answer.serving import http_api
    from answer.serving.connections import server_options
    from answer.serving.workspace import load_workspace
    from sourcebook.settings import ServeSettings

    http_api.check_bind(host, token)
    local_only = http_api.is_loopback(host) and not token
    settings = user_settings()
    aliases = load_workspace(path, settings=settings).aliases  # report a bad path or workspace before binding
    click.echo(f"sourcebook API for {', '.join(aliases)} on http://{host}:{port} "
               f"(schema /docs, wiki /wiki/){' with bearer token' if token else ''}", err=True)
    if workers > 1:
        serve = ServeSettings(settings=settings, path=os.path.abspath(path) if path is not None else None,
                              host=host, max_body=max_body, local_only=local_only, token=token or None)
        from uvicorn.supervisors import Multiprocess

        config = worker_config(http_api.app_from_settings, serve, port=port, workers=workers)
        Multiprocess(config, sockets=[_bound(config)]).run()
        return
    from answer.serving.tools import Tools

    tools = Tools.for_path(path, settings=settings)
    tools.warm_in_background(graph=True)  # the first /context or /symbol then finds the graph built
    app = http_api.create_app(tools, token=token or None, max_body_bytes=max_body, local_only=local_only)
    uvicorn.run(app, host=host, port=port, log_level="warning", **server_options())


def _serve_orgs(orgs_file: str, path: str | None, host: str, port: int,  # noqa: PLR0917
                token: str | None, max_body: int, workers: int) -> None:
    """`serve --orgs`: every request is an organisation's, selected by its token (answer/serving/orgs.py);
    the HTTP
    API and MCP (streamable HTTP at /mcp) on one port."""
    import signal

    import uvicorn

    from answer.serving.connections import server_options
    from answer.serving.orgs import OrgRouter, load_orgs
    from sourcebook.errors import UsageError

    if path is not None or token:
        raise UsageError("--orgs serves the organisations' own indexes with their own tokens: give no PATH "
                         "and no --token")
    names = sorted(load_orgs(orgs_file))  # a bad orgs file is reported before binding
    click.echo(f"sourcebook API for organisations {', '.join(names)} on http://{host}:{port} "
               f"(MCP at /mcp; bearer token per organisation; SIGHUP re-reads the orgs file"
               f"{f'; {workers} workers' if workers > 1 else ''})", err=True)
    if workers > 1:
        _serve_orgs_workers(orgs_file, host, port, max_body, workers)
        return
    router = OrgRouter(orgs_file, max_body_bytes=max_body, host=host, settings=user_settings())
    # the handler only asks: the reload runs on the router's own thread and swaps the tenants whole
    router.start_reloader()
    signal.signal(signal.SIGHUP, lambda _signum, _frame: router.schedule_reload())
    uvicorn.run(router, host=host, port=port, log_level="warning", **server_options())


WORKER_START_S = 60


def worker_config(factory: Any, serve: ServeSettings, *, port: int, workers: int) -> uvicorn.Config:
    """uvicorn's configuration for worker processes whose app `factory` builds from `serve`: the settings
    travel serialized (JSON) inside the configuration uvicorn hands each worker it spawns, never through
    environment variables."""
    import functools

    import uvicorn

    from answer.serving.connections import server_options

    # a replacement worker (SIGHUP) must come up within timeout_worker_healthcheck or the old one is kept: a
    # worker imports the whole answer engine, which took 13 s on a busy 2-core machine (uvicorn's default: 5)
    return uvicorn.Config(functools.partial(factory, serve.model_dump_json()), factory=True, workers=workers,
                          host=serve.host, port=port, log_level="warning",
                          timeout_worker_healthcheck=WORKER_START_S, **server_options())


def _bound(config: uvicorn.Config) -> Any:
    import socket

    sock = config.bind_socket()
    # uvicorn does not set TCP_NODELAY on a socket it hands to workers: without it every response waits for
    # a delayed ACK (docs/performance.md). Accepted connections inherit the option from the listening socket.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def _serve_orgs_workers(orgs_file: str, host: str, port: int, max_body: int, workers: int) -> None:
    """Worker processes, each with its own router (answer.serving.orgs.router_from_settings). On SIGHUP the
    supervisor
    checks the orgs file and only then replaces the workers one by one (uvicorn keeps an old worker whose
    replacement does not come up): a file that no longer parses leaves every worker as it was."""
    import logging

    from uvicorn.supervisors import Multiprocess

    from answer.serving.orgs import load_orgs, router_from_settings
    from sourcebook.errors import ConfigError
    from sourcebook.settings import ServeSettings

    log = logging.getLogger("sourcebook.serve")
    serve = ServeSettings(settings=user_settings(), orgs_file=os.path.abspath(orgs_file), host=host,
                          max_body=max_body)

    class Supervisor(Multiprocess):
        def handle_hup(self) -> None:
            try:
                load_orgs(orgs_file)
            except ConfigError as exc:
                log.error("orgs file %s not reloaded, the workers keep the previous configuration: %s",
                          orgs_file, exc)
                click.echo(f"orgs file not reloaded: {exc}", err=True)
                return
            super().handle_hup()

    config = worker_config(router_from_settings, serve, port=port, workers=workers)
    Supervisor(config, sockets=[_bound(config)]).run()


@click.command("mcp")
@path_argument_and_option(file_okay=True)
@index_uri_option
@click.option("--http", "use_http", is_flag=True, help="Streamable HTTP at /mcp instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (with --http).")
@click.option("--port", default=7701, show_default=True, type=click.IntRange(0, 65535))
@click.option("--token", default=None,
              help=f"Bearer token for --http (required for a non-loopback --host; also ${TOKEN_ENV}).")
def mcp_command(path: str | None, path_option: str | None, use_http: bool, host: str,  # noqa: PLR0917
                port: int, token: str | None) -> None:
    """Run the MCP server for PATH (stdio by default, for Claude Code, Cursor, Codex…).

    get_answer sends the question and the evidence it found, redacted, to the LLM you
    configured (SOURCEBOOK_LLM_* / OPENAI_* or ~/.config/sourcebook/config.toml; never
    the repository's own config); without one nothing leaves the machine.
    With --index-uri and no checkout, every tool answers from the index alone."""
    token = token or user_settings().token
    path = reader_path(path, path_option)
    from answer.serving.mcp_server import run_http, run_stdio
    from answer.serving.tools import Tools

    tools = Tools.for_path(path, settings=user_settings())
    if use_http:
        run_http(tools, host, port, token=token)
    else:
        run_stdio(tools)


COMMANDS = [serve_command, mcp_command]
