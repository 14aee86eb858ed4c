"""One contract per tool, three surfaces: the MCP schema, the HTTP API (OpenAPI and a real server on
127.0.0.1) and the CLI (a subprocess) take the same arguments with the same defaults and return the same
reply, which validates against the tool's reply model."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from answer.serving.mcp_server import create_server
from answer.serving.tool_contracts import BY_NAME, TOOLS
from answer.serving.tools import Tools
from answer.serving.workspace import load_workspace
from sourcebook.cli import answer as cli_answer
from sourcebook.cli import search as cli_search
from sourcebook.cli import tools as cli_tools
from tests.support.repo_files import write_files
from tests.support.servers import sourcebook_serve

FILES = {
    "sourcebook.toml": '[embed]\nprovider = "none"\n',
    "README.md": "# Demo\n\nRuns jobs through an engine.\n",
    "pkg/__init__.py": "",
    "pkg/core.py": ('"""Core."""\n\n\ndef helper(value):\n    """Double a value."""\n'
                    '    return value * 2\n\n\n'
                    'class Engine:\n    """Runs jobs."""\n\n    def start(self, job):\n'
                    '        """Start a job."""\n        return helper(job)\n'),
    "pkg/settings.py": 'import json\n\n\ndef load_settings(path):\n    """Read JSON settings."""\n'
                       '    return json.load(open(path))\n',
}

# the CLI command of each tool; `index` from the shell is the build-side `sourcebook index` (whole tree,
# prunes by default), not this tool
CLI = {"get_answer": (cli_answer.ask_command, "ask"),
       "search_codebase": (cli_search.search_command, "search"),
       "get_context": (cli_tools.context_command, "context"),
       "get_symbol": (cli_tools.symbol_command, "symbol"),
       "read_file": (cli_tools.file_command, "file"),
       "remember": (cli_answer.remember_command, "remember"),
       "get_repo_structure": (cli_tools.structure_command, "structure")}

# the same request on every surface, defaults left out (so each surface's defaults are what is compared)
CALLS: list[tuple[str, dict[str, Any], list[str]]] = [
    ("search_codebase", {"query": "engine start job"}, ["engine start job"]),
    ("search_codebase", {"query": "load_settings", "type": "lexical", "limit": 3},
     ["load_settings", "--type", "lexical", "--limit", "3"]),
    ("get_context", {"targets": ["Engine.start", "pkg/settings.py:4-6"]},
     ["-t", "Engine.start", "-t", "pkg/settings.py:4-6"]),
    ("get_context", {"query": "read json settings", "budget_tokens": 60},
     ["read json settings", "--budget", "60"]),
    ("get_symbol", {"name": "helper"}, ["helper"]),
    ("read_file", {"path": "pkg/core.py", "start_line": 4, "end_line": 6},
     ["pkg/core.py", "--start-line", "4", "--end-line", "6"]),
    ("get_repo_structure", {"scope": "pkg"}, ["--scope", "pkg"]),
    ("get_answer", {"question": "what does helper do?"}, ["what does helper do?"]),
]
VOLATILE = {"seconds", "cached", "_meta"}  # timings and cache flags differ from call to call


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_files(tmp_path_factory.mktemp("surfaces") / "demo", FILES)
    Tools(load_workspace(root, env={})).index()
    return root


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}


def _stable(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in VOLATILE}


def _mcp(repo: Path, calls: list[tuple[str, dict[str, Any]]]) -> tuple[dict[str, Any], list[Any]]:
    server = create_server(Tools(load_workspace(repo, env={})))

    async def run() -> tuple[dict[str, Any], list[Any]]:
        async with Client(server) as client:
            listed = {t.name: t.input_schema for t in (await client.list_tools()).tools}
            results = []
            for name, args in calls:
                result = await client.call_tool(name, args)
                results.append(result)
            return listed, results

    return asyncio.run(run())


def _mcp_data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    return dict(json.loads(result.content[0].text))


def _cli(repo: Path, args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sourcebook.cli", *args, "--path", str(repo)],
                          capture_output=True, text=True, env=_env(), timeout=120, check=False)


def test_every_surface_declares_the_request_model(repo: Path) -> None:
    listed, _ = _mcp(repo, [])
    from fastapi.testclient import TestClient

    from answer.serving.http_api import create_app

    schema = TestClient(create_app(Tools(load_workspace(repo, env={})), serve_wiki=False)).get(
        "/openapi.json").json()
    assert {spec.name for spec in TOOLS} == set(listed)
    for spec in TOOLS:
        model = spec.request.model_json_schema()
        mcp = listed[spec.name]
        assert set(mcp["properties"]) == set(model["properties"]), spec.name
        assert set(mcp.get("required", [])) == set(model.get("required", [])), spec.name
        for field, prop in model["properties"].items():
            for key in ("default", "minimum", "maximum", "enum", "description"):
                assert mcp["properties"][field].get(key) == prop.get(key), (spec.name, field, key)
        route = schema["paths"][spec.http_path]
        if spec.http_get:
            names = {p["name"] for p in route["get"]["parameters"]}
            assert set(model["properties"]) <= names, spec.name
        if spec.http_post:
            ref = route["post"]["requestBody"]["content"]["application/json"]["schema"]
            ref = ref.get("$ref") or next(a["$ref"] for a in ref["anyOf"] if "$ref" in a)
            body = schema["components"]["schemas"][ref.rsplit("/", 1)[-1]]
            assert set(model["properties"]) <= set(body["properties"]), spec.name
        for method in ("get", "post"):
            if method in route:  # the reply model documents the response
                reply = route[method]["responses"]["200"]["content"]["application/json"]["schema"]
                assert reply["$ref"].endswith("/" + spec.reply.__name__), spec.name
        if spec.name in CLI:
            params = {p.name: p for p in CLI[spec.name][0].params}
            for field, info in spec.request.model_fields.items():
                assert field in params, (spec.name, field)
                if info.is_required():
                    assert params[field].required, (spec.name, field)
                    continue
                default = info.get_default(call_default_factory=True)
                given = params[field].default
                if params[field].multiple:
                    given = list(given)
                assert given == default, (spec.name, field)


def test_the_same_call_answers_the_same_on_mcp_http_and_cli(repo: Path) -> None:
    _, results = _mcp(repo, [(name, args) for name, args, _ in CALLS])
    with sourcebook_serve(repo) as url:
        for (name, args, cli_args), mcp_result in zip(CALLS, results, strict=True):
            spec = BY_NAME[name]
            from_mcp = _mcp_data(mcp_result)
            spec.reply.model_validate(from_mcp)
            if spec.http_post:
                posted = httpx.post(url + spec.http_path, json=args, timeout=60)
                assert posted.status_code == 200, (name, posted.text)
                assert _stable(posted.json()) == _stable(from_mcp), name
            query = {k: ",".join(v) if isinstance(v, list) else v for k, v in args.items()}
            got = httpx.get(url + spec.http_path, params=query, timeout=60)
            assert got.status_code == 200, (name, got.text)
            assert _stable(got.json()) == _stable(from_mcp), name
            shell = _cli(repo, [CLI[name][1], *cli_args, "--json"])
            assert shell.returncode == 0, (name, shell.stderr)
            assert _stable(json.loads(shell.stdout)) == _stable(from_mcp), name
        # the defaults that once differed (budget_tokens: 4000 over MCP, absent over HTTP) now agree
        assert httpx.get(f"{url}/context", params={"targets": "Engine.start"}, timeout=60).json()[
            "budget_tokens"] == BY_NAME["get_context"].request.model_fields["budget_tokens"].default


def test_bad_arguments_are_refused_alike(repo: Path) -> None:
    bad = {"search_codebase": {"query": "x", "limit": 0},
           "get_context": {"targets": ["x"], "budget_tokens": 0}}
    _, results = _mcp(repo, list(bad.items()))
    assert all(result.is_error for result in results)
    from fastapi.testclient import TestClient

    from answer.serving.http_api import create_app

    client = TestClient(create_app(Tools(load_workspace(repo, env={})), serve_wiki=False))
    for name, args in bad.items():
        spec = BY_NAME[name]
        reply = client.post(spec.http_path, json=args)
        assert reply.status_code == 400, reply.text
        assert reply.json()["error"] == "UsageError"
    assert _cli(repo, ["search", "x", "--limit", "0"]).returncode == 2
    assert _cli(repo, ["context", "-t", "x", "--budget", "0"]).returncode == 2


def test_mutating_tools_reply_as_declared(repo: Path) -> None:
    _, results = _mcp(repo, [("remember", {"text": "jobs run in order", "scope": "pkg"}),
                             ("index", {"paths": ["pkg/core.py"]})])
    for (name, result) in zip(("remember", "index"), results, strict=True):
        BY_NAME[name].reply.model_validate(_mcp_data(result))
    shell = _cli(repo, ["remember", "settings are JSON", "--scope", "pkg"])
    assert shell.returncode == 0, shell.stderr
    assert "for pkg: settings are JSON" in shell.stdout
