"""generator/site/material/theme_blocks.py: the theme's folder-only blocks from the per-folder memo give every
page (and the 404 page, rendered without it) the bytes the templates render without it; super() still
reaches the parent block (sourcebook's main.html rewrites Material's config block)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.site.material import theme_blocks
from tests.support.nav_trees import built_pages, nav_project


def test_memo_renders_the_templates_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = nav_project(tmp_path / "p", features=["navigation.prune", "navigation.indexes", "toc.integrate"],
                      hooks=True)
    installed: list[bool] = []
    install = theme_blocks.install
    monkeypatch.setattr(theme_blocks, "install", lambda env: installed.append(install(env)) or installed[-1])
    with_memo = built_pages(config, tmp_path / "memo")
    assert installed == [True]
    assert "sourcebook/search-worker.js?material=" in with_memo["big/m03.html"].decode()  # main's super()
    monkeypatch.setattr(theme_blocks, "install", lambda env: False)
    assert built_pages(config, tmp_path / "plain") == with_memo
    assert "404.html" in with_memo


def test_another_themes_templates_are_left_alone(tmp_path: Path) -> None:
    from jinja2 import DictLoader, Environment

    env = Environment(loader=DictLoader({"base.html": "{% block config %}{{ page }}{% endblock %}",
                                         "main.html": "{% extends 'base.html' %}"}))
    assert not theme_blocks.install(env)
