"""The MCP server: the agent tools over the official MCP SDK (stdio by default, streamable HTTP with --http).

Every tool is generated from its ToolSpec (answer/serving/tool_contracts.py): the request model's fields
are the
tool's arguments (types, defaults, bounds, descriptions), and its description, which an agent reads to decide
which tool to call, says *when* to call it, not only what it does. Errors come back as MCP tool errors
(`isError: true`) whose text starts with the error kind and HTTP-like status, e.g.
"NotFoundError (404): src/x.py is not in the index".
"""

from __future__ import annotations

import inspect
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from answer.serving.tool_contracts import TOOLS, ToolSpec
from sourcebook.errors import SourcebookError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from answer.serving.tools import Tools

log = logging.getLogger(__name__)

INSTRUCTIONS = """\
sourcebook answers questions about this code base from an index of its source and its generated wiki.
Start with get_answer for any "how / where / why" question: it returns a cited answer, a graded confidence
and fallback_targets. When confidence is below "high", verify with get_context on fallback_targets (or
get_symbol for a named function/class) before editing. Use search_codebase for ranked files and spans,
read_file for one whole indexed file, get_repo_structure to orient in an unfamiliar repository. Call index
after you change files so later answers see your edits, and remember to record a durable fact for others.
"""

# what an agent reads to choose a tool: each ToolSpec's description (answer/serving/tool_contracts.py)
DESCRIPTIONS = {spec.name: spec.description for spec in TOOLS}


def _call(fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """Run a tool; turn a SourcebookError into a ToolError whose text names its kind and status."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        result = fn()
    except SourcebookError as exc:
        raise ToolError(f"{type(exc).__name__} ({exc.http_status}): {exc}") from exc
    return result


def _tool_function(tools: Tools, spec: ToolSpec) -> Any:
    """A function whose signature is the request model's fields (types, defaults, bounds, descriptions):
    the MCP SDK derives the tool's input schema and argument validation from it."""
    from pydantic import Field

    params = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY,
                                annotation=Annotated[(info.annotation, *info.metadata,
                                                      Field(description=info.description))],
                                default=inspect.Parameter.empty if info.is_required() else info.get_default(
                                    call_default_factory=True))
              for name, info in spec.request.model_fields.items()]

    def run(**arguments: Any) -> dict[str, Any]:
        return _call(lambda: spec.invoke(tools, spec.parse(arguments)))

    run.__name__ = spec.name
    run.__doc__ = spec.description
    run.__signature__ = inspect.Signature(params, return_annotation=dict[str, Any])  # type: ignore[attr-defined]
    return run


def create_server(tools: Tools) -> MCPServer:
    """An MCPServer exposing every tool of answer.serving.tool_contracts.TOOLS over `tools`."""
    from mcp.server.mcpserver import MCPServer

    from sourcebook import __version__

    server: MCPServer = MCPServer("sourcebook", instructions=INSTRUCTIONS, version=__version__,
                                  log_level="WARNING")
    for spec in TOOLS:
        server.add_tool(_tool_function(tools, spec), name=spec.name, description=spec.description)
    return server


def run_stdio(tools: Tools) -> None:
    # Importing LanceDB and opening the index overlaps the MCP SDK import and the client's handshake,
    # so the first tool call does not pay for it. The reference graph is left for the first get_context /
    # get_symbol: building it here would compete with the first answer for the CPU.
    tools.warm_in_background(graph=False)
    import answer.retrieval.tiers  # noqa: F401  (imported here, not by the first call)

    # stdout is the protocol's stream: a library that colours its output (rich, the SDK's logging) must not
    # put escape codes there. A switch for those libraries, not a sourcebook setting.
    os.environ.setdefault("NO_COLOR", "1")
    create_server(tools).run("stdio")


def run_http(tools: Tools, host: str, port: int, token: str | None = None) -> None:
    """Streamable HTTP at /mcp, behind the same bearer-token and body-size guard as the HTTP API."""
    import uvicorn

    from answer.serving.http_api import DEFAULT_MAX_BODY_BYTES, Guard, check_bind, is_loopback

    check_bind(host, token)
    tools.warm_in_background(graph=True)
    app = create_server(tools).streamable_http_app(host=host)
    guarded = Guard(app, token, DEFAULT_MAX_BODY_BYTES, local_only=is_loopback(host) and not token)
    from answer.serving.connections import server_options

    uvicorn.run(guarded, host=host, port=port, log_level="warning", **server_options())
