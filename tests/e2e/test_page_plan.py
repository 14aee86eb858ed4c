"""One key recipe per page: the keys `--check` judges a page by are the keys the build wrote, for each page of
a real repository (flask's pinned sdist), and a recipe changed on one path only (the build's or the check's)
is seen as a difference."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generator.analyze.plan import load_state
from generator.build import build, judge_pages
from generator.index.refresh import Checkout, read_source
from generator.pages.writer import ExtractiveWriter
from sourcebook.config import Config, load_config


def _check_keys(config: Config) -> tuple[dict[str, str], set[str]]:
    """(page id -> the key `--check` judged it by, the pages it found stale), reading what a build wrote."""
    analysis = read_source(config, Checkout(save_cache=False))
    check = judge_pages(config, analysis, state=load_state(config.out_dir), writer=ExtractiveWriter())
    return check.keys, check.stale


def _written_keys(config: Config) -> dict[str, str]:
    return {page_id: row.key for page_id, row in load_state(config.out_dir).items()}


def test_check_judges_every_page_of_a_real_repository_by_the_key_the_build_wrote(
        flask_repo: Path, flask_wiki: Path) -> None:
    config = load_config(flask_repo, overrides={"out_dir": str(flask_wiki)})
    written = _written_keys(config)
    kinds = {row.kind for row in load_state(config.out_dir).values()}
    assert {"file", "module", "overview", "api"} <= kinds  # every kind an extractive build writes
    assert len(written) > 100
    keys, stale = _check_keys(config)
    assert keys == written
    assert stale == set()
    assert build(config, check=True, site=False, index=False).stale == []


def _build_small(make_repo: Callable[..., Path], tmp_path: Path) -> Config:
    root = make_repo({"pkg/__init__.py": "", "pkg/a.py": "def f():\n    '''Calls g.'''\n    return g()\n",
                      "pkg/b.py": "from pkg.a import f\n\ndef g():\n    return f()\n",
                      "README.md": "# demo\n\nSee `pkg/a.py`.\n"})
    config = load_config(root, overrides={"out_dir": str(tmp_path / "out")})
    build(config, site=False, index=False)
    return config


def _salted(plan_files: Callable[..., Any]) -> Callable[..., Any]:
    """plan_file_pages with one more input in every file page's key (a recipe changed on one path)."""
    import dataclasses

    def plan(inputs: Any) -> Any:
        planned = plan_files(inputs)
        return dataclasses.replace(planned, jobs=[dataclasses.replace(job, key=job.key + "+salt")
                                                  for job in planned.jobs])

    return plan


def test_a_check_recipe_unlike_the_build_is_a_difference(make_repo: Callable[..., Path], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import generator.pages.kinds as kinds

    config = _build_small(make_repo, tmp_path)
    assert _check_keys(config)[0] == _written_keys(config)
    monkeypatch.setattr(kinds, "plan_file_pages", _salted(kinds.plan_file_pages))
    keys, stale = _check_keys(config)
    written = _written_keys(config)
    differ = {pid for pid in written if keys.get(pid) != written[pid]}
    assert differ == {pid for pid, row in load_state(config.out_dir).items() if row.kind == "file"}
    assert differ <= stale


def test_a_build_recipe_unlike_the_check_is_a_difference(make_repo: Callable[..., Path], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import generator.pages.file_stage as file_stage

    monkeypatch.setattr(file_stage, "plan_file_pages", _salted(file_stage.plan_file_pages))
    config = _build_small(make_repo, tmp_path)
    monkeypatch.undo()
    keys, _ = _check_keys(config)
    written = _written_keys(config)
    assert {pid for pid in written if keys.get(pid) != written[pid]} == {
        pid for pid, row in load_state(config.out_dir).items() if row.kind == "file"}
