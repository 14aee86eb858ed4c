"""A shared index is never emptied by mistake: `index` (CLI, HTTP, MCP) refuses to prune or fill it from a
place that is not the checkout it was built from, and writes nothing; a deliberate reset is a flag.

The index is built for real (LanceDB in a tmp dir) from a git checkout with a GitHub remote; the wrong
places are an empty folder and a checkout of another repository. A fresh clone of the same repository at
another path (what every CI runner is) is not a wrong place.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from mcp import Client

from answer.serving.http_api import create_app
from answer.serving.mcp_server import create_server
from answer.serving.tools import Tools
from answer.serving.workspace import single
from generator.index import store as ix
from generator.index.command import index_repository
from sourcebook.config import load_config
from sourcebook.errors import IndexSourceError
from tests.support.repo_files import write_files

ROOT = Path(__file__).resolve().parents[2]
DEMO = {
    "README.md": "# Demo\n\nLoads settings for the demo app.\n",
    "pkg/__init__.py": '"""The demo package."""\n',
    "pkg/config.py": '"""Settings."""\n\n\ndef load_settings(path):\n    return open(path).read()\n',
    "pkg/app.py": '"""The app."""\n\nfrom pkg.config import load_settings\n\n\ndef create_app():\n'
                  '    return load_settings("app.toml")\n',
}
OTHER = {"tool.py": "def other_tool():\n    return 1\n"}
NO_VECTORS = {"embed": {"provider": "none"}}


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
                   check=True, capture_output=True)


def _checkout(root: Path, files: dict[str, str], remote: str | None) -> Path:
    write_files(root, files)
    _git(root, "init", "-q")
    if remote:
        _git(root, "remote", "add", "origin", remote)
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "first")
    return root


def _cli(args: list[str], cwd: Path, state: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    env.update({"PYTHONPATH": str(ROOT), "NO_COLOR": "1", "XDG_STATE_HOME": str(state),
                "SOURCEBOOK_EMBEDDER": "none"})
    return subprocess.run([sys.executable, "-m", "sourcebook.cli", *args], cwd=cwd, env=env, check=False,
                          capture_output=True, text=True, timeout=300)


def _state(uri: str) -> tuple[dict[str, int], dict[str, Any]]:
    """Rows per data table at the published versions, and the meta row."""
    db = ix.connect(uri)
    meta = ix.read_meta(db)
    assert meta is not None
    return {name: db.open_table(name, version=meta["versions"][name]).count_rows()
            for name in ix.DATA_TABLES}, meta


def _paths(uri: str) -> set[str]:
    db = ix.connect(uri)
    meta = ix.read_meta(db)
    assert meta is not None
    rows = db.open_table("files", version=meta["versions"]["files"]).to_arrow().to_pylist()
    return {r["path"] for r in rows}


class Places:
    def __init__(self, base: Path) -> None:
        self.state = base / "state"
        self.uri = str(base / "shared-index")
        self.demo = _checkout(base / "runner-a" / "demo", DEMO, "https://github.com/acme/demo.git")
        self.other = _checkout(base / "other", OTHER, "git@github.com:acme/other.git")
        self.empty = base / "empty"
        self.empty.mkdir()


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Places:
    p = Places(tmp_path)
    monkeypatch.setenv("XDG_STATE_HOME", str(p.state))
    built = _cli(["index", str(p.demo), "--index-uri", p.uri], p.demo.parent, p.state)
    assert built.returncode == 0, built.stderr
    assert _paths(p.uri) == set(DEMO)
    return p


@pytest.mark.slow
def test_cli_refuses_an_empty_folder_and_another_checkout_and_resets_on_request(places: Places) -> None:
    before = _state(places.uri)
    assert before[1]["source"]["remote"] == "github.com/acme/demo"
    # the reported bug: run from a folder with no checkout, the CLI indexed 0 files and deleted them all
    for cwd, args, says in [
        (places.empty, [], "found no files"),
        (places.other, [], "was built from"),
        (places.other, ["--no-prune"], "github.com/acme/other"),  # would mix the two, then prune by it
    ]:
        refused = _cli(["index", "--index-uri", places.uri, *args], cwd, places.state)
        assert refused.returncode == 2, (cwd, refused.stdout, refused.stderr)
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1, refused.stderr
        assert lines[0].startswith("error: ")
        assert says in lines[0]
        assert "--reset" in lines[0]
        assert _state(places.uri) == before  # no row, no version, no meta field changed

    reset = _cli(["index", "--index-uri", places.uri, "--reset"], places.other, places.state)
    assert reset.returncode == 0, reset.stderr
    assert "4 removed" in reset.stdout
    assert _paths(places.uri) == set(OTHER)
    assert _state(places.uri)[1]["source"]["remote"] == "github.com/acme/other"


def test_a_fresh_clone_elsewhere_prunes_as_before(places: Places, tmp_path: Path) -> None:
    """What every CI runner is: the same remote at another path; files deleted there leave the index, even
    most of them (the remote names the checkout; the path does not)."""
    clone = tmp_path / "runner-b" / "demo"
    clone.parent.mkdir()
    _git(clone.parent, "clone", "-q", str(places.demo), str(clone))
    _git(clone, "remote", "set-url", "origin", "git@github.com:acme/demo")  # ssh and https: one remote
    for gone in ("pkg/app.py", "pkg/config.py", "README.md"):
        (clone / gone).unlink()
    report = index_repository(load_config(clone, overrides={"index_uri": places.uri, **NO_VECTORS}))
    assert report.files_deleted == 3
    assert _paths(places.uri) == {"pkg/__init__.py"}


def test_without_a_remote_another_root_may_not_delete_most(places: Places, tmp_path: Path) -> None:
    """A copy with no git (a tarball): its own files' removals go through, a stranger's scan does not."""
    copy = write_files(tmp_path / "tarball" / "demo", {k: v for k, v in DEMO.items() if k != "README.md"})
    report = index_repository(load_config(copy, overrides={"index_uri": places.uri, **NO_VECTORS}))
    assert report.files_deleted == 1
    stranger = write_files(tmp_path / "stranger", {"pkg/__init__.py": DEMO["pkg/__init__.py"], **OTHER})
    before = _state(places.uri)
    with pytest.raises(IndexSourceError, match="would delete 2 of its 3 files"):
        index_repository(load_config(stranger, overrides={"index_uri": places.uri, **NO_VECTORS}))
    assert _state(places.uri) == before


def test_a_folder_of_the_checkout_is_not_the_checkout(places: Places) -> None:
    before = _state(places.uri)
    with pytest.raises(IndexSourceError, match=r"folder pkg"):
        index_repository(load_config(places.demo / "pkg", overrides={"index_uri": places.uri, **NO_VECTORS}))
    assert _state(places.uri) == before


def _tools(root: Path, uri: str) -> Tools:
    return Tools(single(root, overrides={"index_uri": uri, **NO_VECTORS}))


def test_http_index_refuses_with_409_and_resets_with_the_field(places: Places) -> None:
    before = _state(places.uri)
    for root in (places.empty, places.other):
        client = TestClient(create_app(_tools(root, places.uri)))
        for body in ({"prune": True}, {}):
            refused = client.post("/index", json=body)
            assert refused.status_code == 409, refused.text
            assert refused.json()["error"] == "IndexSourceError"
            assert "reset=true" in refused.json()["message"]
        assert _state(places.uri) == before
    client = TestClient(create_app(_tools(places.empty, places.uri)))
    reset = client.post("/index", json={"prune": True, "reset": True})
    assert reset.status_code == 200, reset.text
    assert reset.json()["reset"] is True
    assert reset.json()["report"]["files_deleted"] == 4
    assert _paths(places.uri) == set()
    # a server reading the emptied index says so instead of "no match, not degraded"
    search = client.get("/search", params={"query": "load_settings"}).json()
    assert search["hits"] == []
    assert search["degraded"] is True
    assert any("holds no files" in n for n in search["notes"])


def test_mcp_index_is_an_error_and_resets_with_the_field(places: Places) -> None:
    before = _state(places.uri)
    server = create_server(_tools(places.other, places.uri))

    async def run() -> dict[str, Any]:
        async with Client(server) as client:
            refused = await client.call_tool("index", {"prune": True})
            assert refused.is_error
            assert "IndexSourceError (409)" in refused.content[0].text
            assert _state(places.uri) == before
            reset = await client.call_tool("index", {"prune": True, "reset": True})
            assert not reset.is_error, reset.content
            return dict(reset.structured_content or json.loads(reset.content[0].text))

    done = asyncio.run(run())
    assert done["report"]["files_deleted"] == 4
    assert done["report"]["files_indexed"] == 1
    assert _paths(places.uri) == set(OTHER)


def test_the_same_checkout_is_never_refused(places: Places) -> None:
    """Deleting files in the index's own checkout, even all but one, is an ordinary prune."""
    shutil.rmtree(places.demo / "pkg")
    report = index_repository(load_config(places.demo, overrides={"index_uri": places.uri, **NO_VECTORS}))
    assert report.files_deleted == 3
    assert _paths(places.uri) == {"README.md"}
