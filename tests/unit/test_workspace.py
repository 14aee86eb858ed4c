"""Workspaces: aliases pick a repository's Config; unknown aliases and 'all' are clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from answer.serving.workspace import WORKSPACE_FILE, load_workspace, single
from sourcebook.errors import ConfigError, NotFoundError, UsageError


@pytest.fixture
def two_repos(tmp_path: Path) -> Path:
    for name in ("alpha", "beta"):
        (tmp_path / "repos" / name).mkdir(parents=True)
        (tmp_path / "repos" / name / "a.py").write_text("x = 1\n")
    (tmp_path / WORKSPACE_FILE).write_text(
        'default = "beta"\n'
        '[repos.alpha]\npath = "repos/alpha"\n'
        '[repos.beta]\npath = "repos/beta"\nout_dir = "/tmp/beta-sourcebook"\n')
    return tmp_path


def test_workspace_file_resolves_each_alias_to_its_own_config(two_repos: Path) -> None:
    ws = load_workspace(two_repos, env={})
    assert ws.aliases == ["alpha", "beta"]
    alpha, beta = ws.resolve("alpha"), ws.resolve("beta")
    assert alpha.root == (two_repos / "repos" / "alpha").resolve()
    assert alpha.index_location != beta.index_location
    assert beta.out_dir == Path("/tmp/beta-sourcebook")
    assert ws.resolve(None) is beta  # the declared default, and cached


def test_unknown_alias_lists_the_known_ones(two_repos: Path) -> None:
    ws = load_workspace(two_repos / WORKSPACE_FILE, env={})
    with pytest.raises(NotFoundError, match="alpha, beta") as info:
        ws.resolve("gamma")
    assert info.value.http_status == 404


@pytest.mark.parametrize("name", ["all", "ALL", " all "])
def test_all_is_refused_clearly(two_repos: Path, name: str) -> None:
    ws = load_workspace(two_repos, env={})
    with pytest.raises(UsageError, match="one repository at a time"):
        ws.resolve(name)


def test_single_repository_default(make_repo) -> None:
    root = make_repo({"a.py": "x = 1\n"}, name="my repo")
    ws = load_workspace(root, env={})
    assert ws.aliases == ["my-repo"]
    assert ws.resolve().root == root.resolve()
    assert ws.resolve("my-repo").root == root.resolve()
    assert single(root, alias="x").aliases == ["x"]


def test_bad_workspace_reports_every_problem(tmp_path: Path) -> None:
    (tmp_path / WORKSPACE_FILE).write_text(
        '[repos.all]\npath = "."\n[repos.missing]\npath = "nope"\n[repos.nopath]\nx = 1\n')
    with pytest.raises(ConfigError) as info:
        load_workspace(tmp_path, env={})
    assert len(info.value.problems) == 3


def test_not_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        load_workspace(tmp_path / "missing", env={})
