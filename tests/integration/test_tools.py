"""The agent tools through their one implementation, against a real LanceDB index of a small repository."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from answer.retrieval.packing import count_tokens
from answer.serving.tools import Tools, build_tree, match_symbols
from generator.index.memos import Memo
from sourcebook.errors import AccessError, NotFoundError, UsageError

CORE = '''"""The engine and its helpers."""


def helper(value):
    """Double a value."""
    return value * 2


class Engine:
    """Runs jobs."""

    def start(self, job):
        """Start a job and return its doubled id."""
        return helper(job.id)

    def stop(self):
        return None
'''

FILES = {
    "sourcebook.toml": '[embed]\nprovider = "none"\n',
    "README.md": "# Demo\n\nA demo package with an engine.\n",
    "pkg/__init__.py": "from pkg.core import Engine\n",
    "pkg/core.py": CORE,
    "pkg/settings.py": ('"""Settings loading."""\n\nimport json\n\n\ndef load_settings(path):\n'
                        '    """Load settings from a JSON file."""\n    with open(path) as fh:\n'
                        '        return json.load(fh)\n'),
    "tests/test_core.py": ("from pkg.core import Engine\n\n\ndef test_start():\n"
                           "    class Job:\n        id = 2\n\n    assert Engine().start(Job()) == 4\n"),
}


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Tools, Path]:
    root = tmp_path_factory.mktemp("tools") / "demo"
    write(root, FILES)
    tools = Tools.for_path(root)
    report = tools.index()
    assert report["report"]["files_indexed"] == len(FILES)
    return tools, root


@pytest.fixture
def fresh(tmp_path: Path) -> tuple[Tools, Path]:
    root = tmp_path / "fresh"
    write(root, FILES)
    return Tools.for_path(root), root


def test_unindexed_repository_is_empty_not_an_error(fresh: tuple[Tools, Path]) -> None:
    tools, _ = fresh
    structure = tools.get_repo_structure()
    assert structure["indexed"] is False
    assert structure["files"] == 0
    assert structure["tree"]["children"] == []
    result = tools.search_codebase("engine")
    assert result["degraded"] is True
    assert result["files"] == []
    with pytest.raises(NotFoundError):
        tools.read_file("pkg/core.py")
    with pytest.raises(NotFoundError):
        tools.get_symbol("Engine")


def test_structure_counts_symbols_per_file(indexed: tuple[Tools, Path]) -> None:
    tools, _ = indexed
    data = tools.get_repo_structure()
    assert data["indexed"] is True
    pkg = next(c for c in data["tree"]["children"] if c["name"] == "pkg")
    core = next(c for c in pkg["children"] if c["name"] == "core.py")
    assert core["symbols"] == 4  # helper, Engine, Engine.start, Engine.stop
    assert pkg["symbols"] == sum(c["symbols"] for c in pkg["children"])
    scoped = tools.get_repo_structure(scope="pkg/")
    assert {c["name"] for c in scoped["tree"]["children"]} == {"pkg"}
    assert tools.get_repo_structure(scope="' OR 1=1 --")["files"] == 0


def test_read_file_returns_indexed_content_and_refuses_escapes(indexed: tuple[Tools, Path]) -> None:
    tools, root = indexed
    data = tools.read_file("pkg/core.py")
    assert data["content"] == CORE.rstrip("\n") or data["content"] == CORE
    part = tools.read_file("./pkg/core.py", start_line=4, end_line=6)
    assert part["content"].splitlines()[0] == "def helper(value):"
    for bad in ("../../etc/passwd", "/etc/passwd", "%2e%2e/%2e%2e/etc/passwd", "pkg/../../x"):
        with pytest.raises(AccessError):
            tools.read_file(bad)
    (root.parent / "outside.txt").write_text("secret")
    os.symlink(root.parent / "outside.txt", root / "leak.txt")
    try:
        with pytest.raises(AccessError):
            tools.read_file("leak.txt")
    finally:
        (root / "leak.txt").unlink()
    with pytest.raises(NotFoundError):
        tools.read_file("pkg/absent.py")
    with pytest.raises(UsageError):
        tools.read_file("pkg/core.py", start_line=500)
    with pytest.raises(UsageError):
        tools.read_file("pkg/core.py", start_line=5, end_line=2)


def test_get_symbol_has_live_body_and_graph_edges(indexed: tuple[Tools, Path]) -> None:
    tools, _ = indexed
    data = tools.get_symbol("Engine.start")
    [d] = data["definitions"]
    assert d["path"] == "pkg/core.py"
    assert d["verified"] is True
    assert d["body"].lstrip().startswith("def start(self, job):")
    assert "Start a job" in d["docstring"]
    assert {"path": "pkg/core.py", "qualname": "helper"} in d["callees"]
    assert {"path": "tests/test_core.py", "qualname": "test_start"} in d["callers"]
    assert d["match"] == "qualname"
    dotted = tools.get_symbol("pkg.core.Engine.start")["definitions"][0]
    assert (dotted["qualname"], dotted["match"]) == ("Engine.start", "module")
    assert tools.get_symbol("Runner.start")["definitions"][0]["match"] == "name"
    assert tools.get_symbol("pkg/core.py::helper")["definitions"][0]["name"] == "helper"
    with pytest.raises(NotFoundError, match="did you mean: helper"):
        tools.get_symbol("helpr")


def test_get_symbol_notices_a_file_changed_since_indexing(tmp_path: Path) -> None:
    root = tmp_path / "changed"
    write(root, FILES)
    tools = Tools.for_path(root)
    tools.index()
    (root / "pkg/core.py").write_text("# a new first line\n# and a second\n" + CORE)
    [d] = tools.get_symbol("Engine.start")["definitions"]
    assert d["changed_since_index"] is True
    assert d["body_start_line"] == d["start_line"] + 2
    assert d["body"].lstrip().startswith("def start")


def test_get_context_for_a_query_respects_the_budget(indexed: tuple[Tools, Path]) -> None:
    tools, _ = indexed
    data = tools.get_context("how are settings loaded from a json file", budget_tokens=400)
    assert data["spans"], "a matched query never comes back empty"
    assert data["spans"][0]["path"] == "pkg/settings.py"
    assert data["used_tokens"] == sum(count_tokens(s["text"]) for s in data["spans"]) <= 400
    tiny = tools.get_context("how are settings loaded from a json file", budget_tokens=5)
    assert len(tiny["spans"]) == 1
    assert tiny["spans"][0]["truncated"] is True
    assert tiny["used_tokens"] <= 5


def test_get_context_for_targets_adds_callees(indexed: tuple[Tools, Path]) -> None:
    tools, _ = indexed
    data = tools.get_context(targets=["Engine.start", "pkg/settings.py:6-9", "nowhere.py"],
                             budget_tokens=2000)
    reasons = [(s["reason"], s["symbol"]) for s in data["spans"]]
    assert ("target", "Engine.start") in reasons
    assert ("callee", "helper") in reasons
    assert any(s["path"] == "pkg/settings.py" and s["start_line"] == 6 for s in data["spans"])
    assert data["missing"] == ["nowhere.py"]
    with pytest.raises(AccessError):
        tools.get_context(targets=["../../etc/passwd"])
    with pytest.raises(NotFoundError):
        tools.get_context(targets=["nowhere.py"])
    with pytest.raises(UsageError):
        tools.get_context()


def test_search_scope_never_widens(indexed: tuple[Tools, Path]) -> None:
    tools, _ = indexed
    everything = tools.search_codebase("engine start job", limit=20)
    assert everything["files"]
    for scope in ("' OR 1=1 --", "%", "pkg%' OR '1'='1", "_"):
        assert tools.search_codebase("engine start job", scope=scope, limit=20)["files"] == []
    scoped = tools.search_codebase("engine start job", scope="tests/", limit=20)
    assert scoped["files"]
    assert all(f["path"].startswith("tests/") for f in scoped["files"])
    with pytest.raises(UsageError):
        tools.search_codebase("(unclosed", type="regex")
    with pytest.raises(UsageError):
        tools.search_codebase("x", type="telepathy")


def test_index_paths_and_prune(tmp_path: Path) -> None:
    root = tmp_path / "idx"
    write(root, FILES)
    tools = Tools.for_path(root)
    first = tools.index(paths=["pkg"])
    assert first["report"]["files_indexed"] == 3
    with pytest.raises(NotFoundError):
        tools.read_file("README.md")
    again = tools.index(paths=["pkg/core.py"])
    assert again["report"]["files_indexed"] == 0  # unchanged content hash: skipped
    tools.index()
    assert tools.read_file("README.md")["content"].startswith("# Demo")
    (root / "pkg/extra.py").write_text("def extra():\n    return 1\n")
    tools.index(paths=["pkg/extra.py"])
    assert tools.get_symbol("extra")["definitions"][0]["path"] == "pkg/extra.py"
    tools.index(paths=["pkg"], prune=True)
    assert _paths(tools) == {"pkg/__init__.py", "pkg/core.py", "pkg/settings.py", "pkg/extra.py"}
    for bad in ("../../etc/passwd", "/etc", "%2e%2e"):
        with pytest.raises(AccessError):
            tools.index(paths=[bad])
    missing = tools.index(paths=["pkg/nope.py"])
    assert missing["not_found"] == ["pkg/nope.py"]
    (root / "pkg/extra.py").unlink()
    removed = tools.index(paths=["pkg/extra.py"])
    assert removed["removed"] == ["pkg/extra.py"]
    assert removed["not_found"] == []
    assert _paths(tools) == {"pkg/__init__.py", "pkg/core.py", "pkg/settings.py"}


def _paths(tools: Tools) -> set[str]:
    out: set[str] = set()

    def walk(node: dict) -> None:
        for child in node.get("children", []):
            if child["type"] == "file":
                out.add(child["path"])
            else:
                walk(child)

    walk(tools.get_repo_structure()["tree"])
    return out


def test_retrieval_outage_is_degraded_not_a_crash(tmp_path: Path) -> None:
    root = tmp_path / "outage"
    write(root, FILES)
    indexer = Tools.for_path(root)
    indexer.index()
    assert indexer.search_codebase("engine")["files"]
    index_dir = Path(indexer.state().config.index_location)
    for table in index_dir.glob("*.lance"):
        shutil.rmtree(table / "data", ignore_errors=True)
    # A fresh process must read the damaged tables (a warm one answers from the version it pinned in memory).
    tools = Tools.for_path(root)
    result = tools.search_codebase("settings json")
    assert result["degraded"] is True
    assert result["files"] == []
    context = tools.get_context("settings json")
    assert context["degraded"] is True
    # The warm instance reads the damaged tables on a file read: degraded and empty, not "not indexed".
    read = indexer.read_file("pkg/core.py")
    assert read["degraded"] is True
    assert read["content"] == ""
    assert "outage" in read["notes"][0]
    tree = indexer.get_repo_structure()
    assert tree["degraded"] is True
    assert tree["indexed"] is True
    assert tree["files"] == 0
    symbol = tools.get_symbol("Engine")
    assert symbol["degraded"] is True
    assert symbol["definitions"] == []


def test_remember_records_an_episode(indexed: tuple[Tools, Path]) -> None:
    tools, _ = indexed
    data = tools.remember("the engine tests need no network", scope="tests/")
    assert data["episode"]["scope"] == "tests"
    stored = (tools.state().config.out_dir / "episodes.jsonl").read_text()
    assert "need no network" in stored
    with pytest.raises(UsageError):
        tools.remember("   ")


def test_unknown_and_all_repo_aliases(indexed: tuple[Tools, Path]) -> None:
    tools, _ = indexed
    with pytest.raises(NotFoundError, match="demo"):
        tools.search_codebase("x", repo="nope")
    with pytest.raises(UsageError, match="one repository at a time"):
        tools.read_file("pkg/core.py", repo="all")


def test_pure_helpers() -> None:
    tree = build_tree([{"path": "a/b.py", "symbol_count": 2}, {"path": "a/c/d.py", "symbol_count": 3},
                       {"path": "e.py", "symbol_count": 1}])
    assert [c["name"] for c in tree["children"]] == ["a", "e.py"]
    assert tree["symbols"] == 6
    assert tree["children"][0]["files"] == 2
    rows = [{"path": "src/x/app.py", "qualname": "App.run", "name": "run", "kind": "method", "start_line": 1},
            {"path": "src/y/run.py", "qualname": "run", "name": "run", "kind": "function", "start_line": 1}]
    assert [r["path"] for r in match_symbols(rows, "x.app.App.run")] == ["src/x/app.py"]
    assert [r["path"] for r in match_symbols(rows, "run")] == ["src/y/run.py"]
    assert len(match_symbols(rows, "run", path=None)) == 1
    assert match_symbols(rows, "missing") == []


def test_identical_searches_are_cached_until_the_index_changes(tmp_path: Path) -> None:
    root = tmp_path / "cache"
    write(root, FILES)
    tools = Tools.for_path(root)
    tools.index()
    first = tools.search_codebase("load settings json")
    assert "cached" not in first
    again = tools.search_codebase("load settings json")
    assert again["cached"] is True
    assert again["files"] == first["files"]
    assert "cached" not in tools.search_codebase("load settings json", limit=3)
    (root / "pkg/more.py").write_text("def load_settings_twice(path):\n    return path\n")
    tools.index(paths=["pkg/more.py"])
    after = tools.search_codebase("load settings json")
    assert "cached" not in after
    assert "pkg/more.py" in {f["path"] for f in after["files"]}


def test_cli_commands_print_json(indexed: tuple[Tools, Path]) -> None:
    import json

    from click.testing import CliRunner

    from sourcebook.cli import cli

    _, root = indexed
    runner = CliRunner()
    for args in (["structure"], ["file", "pkg/core.py", "--lines", "4-4"], ["symbol", "Engine.start"],
                 ["context", "load settings json", "--budget", "60"], ["context", "-t", "helper"]):
        result = runner.invoke(cli, [*args, "--path", str(root), "--json"])
        assert result.exit_code == 0, (args, result.output)
        assert isinstance(json.loads(result.output), dict)
    human = runner.invoke(cli, ["file", "pkg/core.py", "--lines", "4-4", "--path", str(root)])
    assert human.output.strip() == "def helper(value):"
    refused = runner.invoke(cli, ["file", "../../etc/passwd", "--path", str(root)])
    assert refused.exit_code != 0


def test_switching_embedder_reparses_everything(tmp_path: Path) -> None:
    root = tmp_path / "switch"
    write(root, FILES)
    Tools.for_path(root).index()
    (root / "sourcebook.toml").write_text('[embed]\nprovider = "static"\n')
    tools = Tools.for_path(root)
    report = tools.index()["report"]
    assert report["rebuilt"]
    assert report["symbols_written"] > 0  # a rebuild must not drop the symbols of unchanged files
    assert tools.get_symbol("Engine.start")["definitions"][0]["path"] == "pkg/core.py"


def test_a_big_matched_class_is_cut_to_its_header(tmp_path: Path) -> None:
    methods = "".join(f"\n    def step_{i}(self):\n        return {i}\n" for i in range(80))
    root = tmp_path / "big"
    write(root, {"sourcebook.toml": '[embed]\nprovider = "none"\n',
                 "big.py": f'class Pipeline:\n    """Runs every pipeline step in order."""\n{methods}'})
    tools = Tools.for_path(root)
    tools.index()
    data = tools.get_context("Pipeline", budget_tokens=3000)
    header = next(s for s in data["spans"] if s["symbol"] == "Pipeline")
    assert (header["start_line"], header["end_line"]) == (1, 3)  # up to the first method
    assert all(s["end_line"] - s["start_line"] < 120 for s in data["spans"])


def test_warm_up_readies_in_memory_full_text_ranking(indexed: tuple[Tools, Path]) -> None:
    _, root = indexed
    one_shot = Tools.for_path(root)
    one_shot.search_codebase("greeting")
    # a CLI call builds nothing
    assert not any(k.name.startswith("bm25:") for k in one_shot.state().store().memos)
    server = Tools.for_path(root)
    server.warm()  # what serve and mcp do at start
    store = server.state().store()
    assert store.memos.get(Memo("bm25:wanted")) is True
    assert any(k.name.startswith("bm25:chunks:") and store.memos.get(k) is not None for k in store.memos)
