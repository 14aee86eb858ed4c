"""The command line finds the repository from any subdirectory, takes --path everywhere (the positional PATH
stays), prints human `ask` output without the agent's next-call hint, and folds `structure` to --depth."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from sourcebook.cli import cli
from sourcebook.cli.paths import chosen_path, find_root
from sourcebook.errors import UsageError

FILES: dict[str, str | bytes] = {
    "sourcebook.toml": '[embed]\nprovider = "none"\n',
    "README.md": "# Demo\n\nA demo package.\n",
    "pkg/__init__.py": "",
    "pkg/core.py": "from pkg.deep.util import helper\n\n\ndef run():\n    return helper()\n",
    "pkg/deep/__init__.py": "",
    "pkg/deep/util.py": "def helper():\n    '''Help the engine.'''\n    return 1\n",
}


def test_find_root_walks_up_to_the_nearest_marker(tmp_path: Path) -> None:
    (tmp_path / "outer" / ".git").mkdir(parents=True)
    (tmp_path / "outer" / "inner" / ".sourcebook").mkdir(parents=True)
    (tmp_path / "outer" / "inner" / "src" / "a").mkdir(parents=True)
    assert find_root(tmp_path / "outer" / "inner" / "src" / "a") == (tmp_path / "outer" / "inner").resolve()
    assert find_root(tmp_path / "outer" / "other") == (tmp_path / "outer").resolve()
    assert find_root(tmp_path) == tmp_path.resolve()  # no marker anywhere above: the folder itself


def test_two_different_paths_are_refused(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    with pytest.raises(UsageError):
        chosen_path(str(tmp_path), str(tmp_path / "a"))
    assert chosen_path(str(tmp_path), str(tmp_path)) == str(tmp_path)


def test_commands_work_from_a_subdirectory_and_with_path(make_repo: Callable[..., Path],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo(FILES)
    runner = CliRunner()
    built = runner.invoke(cli, ["build", "--path", str(root), "--no-site"])  # --path on build too
    assert built.exit_code == 0, built.output
    assert (root / ".sourcebook" / "docs").is_dir()
    clash = runner.invoke(cli, ["build", str(root), "--path", str(root / "pkg"), "--no-site"])
    assert clash.exit_code != 0

    monkeypatch.chdir(root / "pkg" / "deep")  # every command below finds the repository around it
    check = runner.invoke(cli, ["build", "--check"])
    assert check.exit_code == 0, check.output
    assert not (root / "pkg" / "deep" / ".sourcebook").exists()
    index = runner.invoke(cli, ["index"])
    assert index.exit_code == 0, index.output
    search = runner.invoke(cli, ["search", "helper engine", "--json"])
    assert search.exit_code == 0, search.output
    assert json.loads(search.output)["files"][0]["path"] == "pkg/deep/util.py"

    asked = runner.invoke(cli, ["ask", "where is the helper defined?"])
    assert asked.exit_code == 0, asked.output
    assert "pkg/deep/util.py" in asked.output
    assert "next:" not in asked.output  # the agent's next-tool hint is for agents (it stays in --json)
    assert json.loads(runner.invoke(cli, ["ask", "where is the helper?", "--json"]).output)["_meta"]["hint"]

    full = json.loads(runner.invoke(cli, ["structure", "--json"]).output)
    folded = json.loads(runner.invoke(cli, ["structure", "--json", "--depth", "2"]).output)
    pkg = next(c for c in folded["tree"]["children"] if c["name"] == "pkg")
    assert pkg["files"] == next(c for c in full["tree"]["children"] if c["name"] == "pkg")["files"]
    deep = next(c for c in pkg["children"] if c["name"] == "deep")
    assert "children" not in deep  # folded: its counts stay, its files are not listed
    human = runner.invoke(cli, ["structure", "--depth", "2"])
    assert "deep/" in human.output
    assert "util.py" not in human.output
