"""The MCP server through the official SDK client: every tool in-process, and one real stdio subprocess."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from answer.serving.mcp_server import DESCRIPTIONS, create_server
from answer.serving.tools import Tools
from answer.serving.workspace import load_workspace
from tests.support.repo_files import write_files

FILES = {
    "sourcebook.toml": '[embed]\nprovider = "none"\n',
    "README.md": "# Demo\n",
    "pkg/__init__.py": "",
    "pkg/core.py": ('def helper(value):\n    """Double a value."""\n    return value * 2\n\n\n'
                    'class Engine:\n    """Runs jobs."""\n\n    def start(self, job):\n'
                    '        """Start a job."""\n        return helper(job)\n'),
}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_files(tmp_path_factory.mktemp("mcp") / "demo", FILES)
    Tools(load_workspace(root, env={})).index()
    return root


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    return dict(json.loads(result.content[0].text))


def test_every_tool_through_the_sdk_client(repo: Path) -> None:
    server = create_server(Tools(load_workspace(repo, env={})))

    async def run() -> None:
        async with Client(server) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert set(listed) == set(DESCRIPTIONS)
            assert "FIRST" in (listed["get_answer"].description or "")
            # one default everywhere: MCP schema, CLI option and the Tools method (HTTP leaves it absent)
            from answer.retrieval.packing import DEFAULT_BUDGET_TOKENS
            from sourcebook.cli.tools import context_command

            budget = listed["get_context"].input_schema["properties"]["budget_tokens"]
            cli_budget = next(p for p in context_command.params if p.name == "budget_tokens")
            assert budget["default"] == cli_budget.default == DEFAULT_BUDGET_TOKENS
            unbudgeted = _data(await client.call_tool("get_context", {"targets": ["Engine.start"]}))
            assert unbudgeted["budget_tokens"] == DEFAULT_BUDGET_TOKENS
            answer = _data(await client.call_tool("get_answer", {"question": "what does helper do?"}))
            assert answer["degraded"] == "no-llm-provider"
            search = _data(await client.call_tool("search_codebase", {"query": "Engine start"}))
            assert search["files"][0]["path"] == "pkg/core.py"
            context = _data(await client.call_tool("get_context", {"targets": ["Engine.start"],
                                                                   "budget_tokens": 200}))
            assert [s["reason"] for s in context["spans"]][:2] == ["target", "callee"]
            symbol = _data(await client.call_tool("get_symbol", {"name": "helper"}))
            assert symbol["definitions"][0]["body"].startswith("def helper")
            file = _data(await client.call_tool("read_file", {"path": "pkg/core.py", "end_line": 1}))
            assert file["content"] == "def helper(value):"
            tree = _data(await client.call_tool("get_repo_structure", {}))
            assert tree["symbols"] == 3  # helper, Engine, Engine.start
            indexed = _data(await client.call_tool("index", {"paths": ["pkg"]}))
            assert indexed["report"]["files_unchanged"] == 2
            remembered = _data(await client.call_tool("remember", {"text": "helper is pure", "scope": "pkg"}))
            assert remembered["episode"]["text"] == "helper is pure"

            refused = await client.call_tool("read_file", {"path": "../../etc/passwd"})
            assert refused.is_error
            assert "AccessError (403)" in refused.content[0].text
            missing = await client.call_tool("read_file", {"path": "pkg/absent.py"})
            assert missing.is_error
            assert "NotFoundError (404)" in missing.content[0].text
            bad = await client.call_tool("search_codebase", {"query": "(x", "type": "regex"})
            assert bad.is_error
            assert "UsageError (400)" in bad.content[0].text
            alias = await client.call_tool("get_repo_structure", {"repo": "all"})
            assert alias.is_error

    asyncio.run(run())


def test_stdio_subprocess_answers(repo: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    params = StdioServerParameters(command=sys.executable, args=["-m", "sourcebook.cli", "mcp", str(repo)],
                                   env=env)

    async def run() -> float:
        started = time.perf_counter()
        async with Client(params) as client:
            data = _data(await client.call_tool("get_repo_structure", {}))
            elapsed = time.perf_counter() - started
            assert data["files"] == len(FILES)
            symbol = _data(await client.call_tool("get_symbol", {"name": "Engine.start"}))
            assert symbol["definitions"][0]["verified"] is True
        return elapsed

    elapsed = asyncio.run(run())
    print(f"mcp stdio start to first answer: {elapsed:.2f}s (measured in bench/http_load.py)")


def test_streamable_http_with_token(repo: Path) -> None:
    import socket
    import subprocess

    import httpx
    from mcp.client.streamable_http import streamable_http_client

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    proc = subprocess.Popen([sys.executable, "-m", "sourcebook.cli", "mcp", str(repo), "--http", "--port",
                             str(port), "--token", "tok"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                assert httpx.post(url, json={}, timeout=5).status_code == 401
                break
            except httpx.TransportError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

        async def run() -> dict[str, Any]:
            async with httpx.AsyncClient(headers={"Authorization": "Bearer tok"}, timeout=30) as http, \
                    Client(streamable_http_client(url, http_client=http)) as client:
                return _data(await client.call_tool("read_file", {"path": "pkg/core.py", "end_line": 1}))

        assert asyncio.run(run())["content"] == "def helper(value):"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
