"""The packages whose private internals sourcebook patches are pinned, and installed at the pinned version."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

# every package whose private API the site engine or the markup stage touches (MkDocs' page loop, Material's
# templates and search, Jinja's blocks, Python-Markdown's stash and block parser, pymdown's superfences,
# Pygments' lexers' state, docutils' role and directive registries)
PATCHED = ("mkdocs", "mkdocs-material", "jinja2", "Markdown", "pymdown-extensions", "Pygments", "docutils")


def _pins() -> dict[str, str]:
    project = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    pins = {}
    for requirement in project["project"]["dependencies"]:
        match = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^;\s]+)", requirement.strip())
        if match:
            pins[match.group(1).lower()] = match.group(2)
    return pins


def test_every_patched_package_is_pinned_to_the_patch() -> None:
    pins = _pins()
    assert [name for name in PATCHED if name.lower() not in pins] == []


def test_the_installed_versions_are_the_tested_ones() -> None:
    pins = _pins()
    wrong = [f"{name} {importlib.metadata.version(name)} is installed, sourcebook was tested with "
             f"{pins[name.lower()]}: reinstall (make setup) or re-test the patches of its internals"
             for name in PATCHED if importlib.metadata.version(name) != pins[name.lower()]]
    assert wrong == []
