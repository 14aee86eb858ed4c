"""The MCP server: the agent tools over the official MCP SDK (stdio by default, streamable HTTP with --http).

The descriptions below are what an agent reads to decide which tool to call, so they say *when* to call
each one, not only what it does. Errors come back as MCP tool errors (`isError: true`) whose text starts
with the error kind and HTTP-like status, e.g. "NotFoundError (404): src/x.py is not in the index".
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from answer.context import DEFAULT_BUDGET_TOKENS
from answer.episodes import MAX_EPISODE_CHARS
from sourcebook.errors import SourcebookError

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from answer.tools import Tools

log = logging.getLogger(__name__)

INSTRUCTIONS = """\
sourcebook answers questions about this code base from an index of its source and its generated wiki.
Start with get_answer for any "how / where / why" question: it returns a cited answer, a graded confidence
and fallback_targets. When confidence is below "high", verify with get_context on fallback_targets (or
get_symbol for a named function/class) before editing. Use search_codebase for ranked files and spans,
read_file for one whole indexed file, get_repo_structure to orient in an unfamiliar repository. Call index
after you change files so later answers see your edits, and remember to record a durable fact for others.
"""

DESCRIPTIONS = {
    "get_answer": (
        "Call this FIRST for any question about the code (how does X work, where is Y handled, why does Z "
        "happen). Returns one object: answer with inline file citations, confidence (high/medium/low, graded "
        "by checks), fallback_targets and candidates to verify, symbol_bodies when the answer names a "
        "function or class. If 'degraded' is present, no answer was synthesized: use the ranked evidence. "
        "scope = path prefix; include = ['evidence'] for a wider evidence budget, ['diagnostics'] for "
        "retrieval_quality."),
    "search_codebase": (
        "Ranked files and code spans for a query, when you want to look yourself rather than get an answer. "
        "type: hybrid (default, fuses all tiers), lexical (full-text over code and docs), symbolic (symbol "
        "names), semantic (vectors), regex (a Python regular expression over indexed code). A retrieval "
        "outage returns an empty result with degraded=true instead of failing."),
    "get_context": (
        "Pack the most relevant code into a token budget, ready to read: for a query (search seeds) or for "
        "explicit targets (paths, 'path:START-END' ranges, symbol names), plus the definitions those call "
        "and their key callers. Use it to verify get_answer's fallback_targets or before editing. Tokens are "
        "counted as ceil(characters/4) per span; the budget is never exceeded and the top match is always "
        "included (truncated if needed)."),
    "get_symbol": (
        "Look up a function, class or method by name ('route', 'Flask.route', 'flask.app.Flask.route' or "
        "'src/flask/app.py::Flask.route'): every definition with signature, docstring, its live body read "
        "from disk with verified line bounds, and its callers and callees."),
    "read_file": (
        "The indexed content of one file by repository-relative path, optionally a line range. A file that "
        "is not indexed is 'not found' (distinct from an empty file); paths outside the repository are "
        "refused. Prefer get_context when you only need the relevant parts."),
    "get_repo_structure": (
        "The indexed file tree with a symbol count per file and per directory, optionally under a path "
        "prefix. Use it to orient in an unfamiliar repository. An unindexed repository is an empty tree."),
    "index": (
        "(Re)index files after you change them, so later answers and searches see the edits. Give paths "
        "(files or directories) or nothing for the whole tree; unchanged files are skipped by content hash. "
        "prune=true deletes indexed files absent from the request (a full sync when no paths are given)."),
    "remember": (
        "Record a dated fact about this checkout (e.g. 'the payments tests need Redis running'), scoped to "
        "a path prefix. get_answer returns it to later callers whose answers touch that scope. At most "
        f"{MAX_EPISODE_CHARS:,} characters: record the fact, not the evidence."),
}


def _call(fn: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    """Run a tool; turn a SourcebookError into a ToolError whose text names its kind and status."""
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        result: dict[str, Any] = fn(*args, **kwargs)
    except SourcebookError as exc:
        raise ToolError(f"{type(exc).__name__} ({exc.http_status}): {exc}") from exc
    return result


def create_server(tools: Tools) -> MCPServer:
    """An MCPServer exposing every tool over `tools` (shared implementation with HTTP and CLI)."""
    from mcp.server.mcpserver import MCPServer

    from sourcebook import __version__

    server: MCPServer = MCPServer("sourcebook", instructions=INSTRUCTIONS, version=__version__,
                                  log_level="WARNING")

    @server.tool(description=DESCRIPTIONS["get_answer"])
    def get_answer(question: str, scope: str | None = None, repo: str | None = None,
                   include: list[str] | None = None) -> dict[str, Any]:
        return _call(tools.get_answer, question, scope=scope, repo=repo, include=include or [])

    @server.tool(description=DESCRIPTIONS["search_codebase"])
    def search_codebase(query: str, type: str = "hybrid", scope: str | None = None,
                        limit: int = 10, repo: str | None = None) -> dict[str, Any]:
        return _call(tools.search_codebase, query, type=type, scope=scope, limit=limit, repo=repo)

    @server.tool(description=DESCRIPTIONS["get_context"])
    def get_context(query: str | None = None, targets: list[str] | None = None,
                    budget_tokens: int = DEFAULT_BUDGET_TOKENS, scope: str | None = None,
                    repo: str | None = None) -> dict[str, Any]:
        return _call(tools.get_context, query=query, targets=targets, budget_tokens=budget_tokens,
                     scope=scope, repo=repo)

    @server.tool(description=DESCRIPTIONS["get_symbol"])
    def get_symbol(name: str, path: str | None = None, repo: str | None = None) -> dict[str, Any]:
        return _call(tools.get_symbol, name, path=path, repo=repo)

    @server.tool(description=DESCRIPTIONS["read_file"])
    def read_file(path: str, start_line: int | None = None, end_line: int | None = None,
                  repo: str | None = None) -> dict[str, Any]:
        return _call(tools.read_file, path, start_line=start_line, end_line=end_line, repo=repo)

    @server.tool(description=DESCRIPTIONS["get_repo_structure"])
    def get_repo_structure(scope: str | None = None, repo: str | None = None) -> dict[str, Any]:
        return _call(tools.get_repo_structure, scope=scope, repo=repo)

    @server.tool(description=DESCRIPTIONS["index"])
    def index(paths: list[str] | None = None, prune: bool = False, repo: str | None = None) -> dict[str, Any]:
        return _call(tools.index, paths=paths, prune=prune, repo=repo)

    @server.tool(description=DESCRIPTIONS["remember"])
    def remember(text: str, scope: str | None = None, repo: str | None = None) -> dict[str, Any]:
        return _call(tools.remember, text, scope=scope, repo=repo)

    return server


def run_stdio(tools: Tools) -> None:
    # Importing LanceDB and opening the index overlaps the MCP SDK import and the client's handshake,
    # so the first tool call does not pay for it. The reference graph is left for the first get_context /
    # get_symbol: building it here would compete with the first answer for the CPU.
    tools.warm_in_background(graph=False)
    import answer.search  # noqa: F401  (imported here, not by the first call)

    create_server(tools).run("stdio")


def run_http(tools: Tools, host: str, port: int, token: str | None = None) -> None:
    """Streamable HTTP at /mcp, behind the same bearer-token and body-size guard as the HTTP API."""
    import uvicorn

    from answer.http_api import DEFAULT_MAX_BODY_BYTES, Guard, check_bind, is_loopback

    check_bind(host, token)
    tools.warm_in_background(graph=True)
    app = create_server(tools).streamable_http_app(host=host)
    guarded = Guard(app, token, DEFAULT_MAX_BODY_BYTES, local_only=is_loopback(host) and not token)
    uvicorn.run(guarded, host=host, port=port, log_level="warning")
