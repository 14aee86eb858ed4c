"""The site is named after the project as its manifest names it, not after the checkout's folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.analyze.manifests import manifest_project_name, project_name, site_title


@pytest.mark.parametrize(("files", "expected"), [
    ({"pyproject.toml": '[project]\nname = "httpclient"\nversion = "1"\n'}, "httpclient"),
    ({"pyproject.toml": '[tool.poetry]\nname = "poetic"\n'}, "poetic"),
    ({"package.json": '{"name": "commander", "version": "14.0.0"}'}, "commander"),
    ({"Cargo.toml": '[package]\nname = "walkdir"\nversion = "2.5.0"\n'}, "walkdir"),
    ({"go.mod": "module github.com/go-chi/chi/v5\n\ngo 1.20\n"}, "chi"),
    ({"go.mod": "module example.com/tool\n"}, "tool"),
    ({"setup.cfg": "[metadata]\nname = legacy\n"}, "legacy"),
    ({"pyproject.toml": "[tool.ruff]\nline-length = 1\n", "package.json": '{"name": "web"}'}, "web"),
    ({"pyproject.toml": "not toml = = =", "Cargo.toml": "[workspace]\nmembers = []\n"}, None),
])
def test_the_root_manifest_names_the_project(files: dict[str, str], expected: str | None) -> None:
    assert manifest_project_name(files) == expected


def test_only_the_site_title_falls_back_to_the_folder_and_the_configured_name_wins(tmp_path: Path) -> None:
    repo = tmp_path / "checkout-123"
    repo.mkdir()
    assert project_name(repo) == ""  # prompts and page keys never carry the checkout folder's name
    assert site_title(repo) == "checkout-123"
    (repo / "go.mod").write_text("module github.com/acme/router/v2\n")
    assert project_name(repo) == "router"
    assert project_name(repo, "Configured") == "Configured"


def test_the_root_manifest_describes_the_project() -> None:
    from generator.analyze.manifests import manifest_description

    pyproject = '[project]\nname = "x"\ndescription = "HTTP  for\\nhumans."\n'
    both = {"pyproject.toml": pyproject, "package.json": '{"description": "other"}'}
    assert manifest_description(both) == "HTTP for humans."
    cargo = '[package]\nname = "w"\ndescription = "Walk dirs."\n'
    assert manifest_description({"Cargo.toml": cargo}) == "Walk dirs."
    assert manifest_description({"go.mod": "module a/b\n"}) == ""
