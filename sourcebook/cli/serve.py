"""`sourcebook serve` (the HTTP API + wiki) and `sourcebook mcp` (the MCP server, stdio or HTTP)."""

from __future__ import annotations

import os

import click

from sourcebook.cli.paths import index_uri_option, path_argument_and_option, reader_path


@click.command("serve")
@path_argument_and_option(file_okay=True)
@index_uri_option
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--port", default=7700, show_default=True, type=click.IntRange(0, 65535))
@click.option("--token", default=None, envvar="SOURCEBOOK_TOKEN", show_envvar=True,
              help="Bearer token required on every request (required for a non-loopback --host).")
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
    if orgs_file is not None:
        _serve_orgs(orgs_file, path or path_option, host, port, token, max_body, workers)
        return
    path = reader_path(path, path_option)
    import uvicorn

    from answer.serving import http_api
    from answer.serving.connections import server_options
    from answer.serving.workspace import load_workspace

    http_api.check_bind(host, token)
    local_only = http_api.is_loopback(host) and not token
    aliases = load_workspace(path).aliases  # report a bad path or workspace before binding
    click.echo(f"sourcebook API for {', '.join(aliases)} on http://{host}:{port} "
               f"(schema /docs, wiki /wiki/){' with bearer token' if token else ''}", err=True)
    if workers > 1:
        if path is not None:
            os.environ[http_api.SERVE_PATH_ENV] = os.path.abspath(path)
        os.environ[http_api.MAX_BODY_ENV] = str(max_body)
        os.environ[http_api.LOCAL_ONLY_ENV] = "1" if local_only else "0"
        if token:
            os.environ[http_api.TOKEN_ENV] = token
        import socket

        from uvicorn.supervisors import Multiprocess

        config = uvicorn.Config("answer.serving.http_api:app_from_env", factory=True, workers=workers,
                                host=host, port=port, log_level="warning", **server_options())
        sock = config.bind_socket()
        # uvicorn does not set TCP_NODELAY on a socket it hands to workers: without it every response
        # waits for a delayed ACK (docs/performance.md).
        # Accepted connections inherit the option from the listening socket.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        Multiprocess(config, sockets=[sock]).run()
        return
    from answer.serving.tools import Tools

    tools = Tools.for_path(path)
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
    router = OrgRouter(orgs_file, max_body_bytes=max_body, host=host)
    # the handler only asks: the reload runs on the router's own thread and swaps the tenants whole
    router.start_reloader()
    signal.signal(signal.SIGHUP, lambda _signum, _frame: router.schedule_reload())
    uvicorn.run(router, host=host, port=port, log_level="warning", **server_options())


def _serve_orgs_workers(orgs_file: str, host: str, port: int, max_body: int, workers: int) -> None:
    """Worker processes, each with its own router (answer.serving.orgs.router_from_env). On SIGHUP the
    supervisor
    checks the orgs file and only then replaces the workers one by one (uvicorn keeps an old worker whose
    replacement does not come up): a file that no longer parses leaves every worker as it was."""
    import logging
    import socket

    import uvicorn
    from uvicorn.supervisors import Multiprocess

    from answer.serving import http_api
    from answer.serving.connections import server_options
    from answer.serving.orgs import ORGS_FILE_ENV, ORGS_HOST_ENV, load_orgs
    from sourcebook.errors import ConfigError

    log = logging.getLogger("sourcebook.serve")
    os.environ[ORGS_FILE_ENV] = os.path.abspath(orgs_file)
    os.environ[ORGS_HOST_ENV] = host
    os.environ[http_api.MAX_BODY_ENV] = str(max_body)

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

    config = uvicorn.Config("answer.serving.orgs:router_from_env", factory=True, workers=workers, host=host,
                            port=port, log_level="warning", **server_options())
    sock = config.bind_socket()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # see serve_command: no delayed-ACK wait
    Supervisor(config, sockets=[sock]).run()


@click.command("mcp")
@path_argument_and_option(file_okay=True)
@index_uri_option
@click.option("--http", "use_http", is_flag=True, help="Streamable HTTP at /mcp instead of stdio.")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (with --http).")
@click.option("--port", default=7701, show_default=True, type=click.IntRange(0, 65535))
@click.option("--token", default=None, envvar="SOURCEBOOK_TOKEN", show_envvar=True,
              help="Bearer token for --http (required for a non-loopback --host).")
def mcp_command(path: str | None, path_option: str | None, use_http: bool, host: str,  # noqa: PLR0917
                port: int, token: str | None) -> None:
    """Run the MCP server for PATH (stdio by default, for Claude Code, Cursor, Codex…).

    get_answer sends the question and the evidence it found, redacted, to the LLM you
    configured (SOURCEBOOK_LLM_* / OPENAI_* or ~/.config/sourcebook/config.toml; never
    the repository's own config); without one nothing leaves the machine.
    With --index-uri and no checkout, every tool answers from the index alone."""
    path = reader_path(path, path_option)
    from answer.serving.mcp_server import run_http, run_stdio
    from answer.serving.tools import Tools

    tools = Tools.for_path(path)
    if use_http:
        run_http(tools, host, port, token=token)
    else:
        os.environ.setdefault("NO_COLOR", "1")
        run_stdio(tools)


COMMANDS = [serve_command, mcp_command]
