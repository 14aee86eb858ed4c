"""The MkDocs hooks on a real build: the error page and `__init__.py` pages link only to what exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.build import build
from sourcebook.config import load_config

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("repo")
    (root / "pkg").mkdir()
    (root / "README.md").write_text("# Demo\n\nA demo.\n")
    (root / "pkg" / "__init__.py").write_text('"""The package."""\n\nfrom .core import run\n')
    (root / "pkg" / "core.py").write_text('"""Core."""\n\n\ndef run(x):\n    """Run x."""\n    return x\n')
    assert build(load_config(root), index=False).site_built
    return root / ".sourcebook" / "site"


def test_the_404_page_has_no_root_absolute_links(site: Path) -> None:
    page = (site / "404.html").read_text()
    # `/assets/...` breaks from disk and under a sub-path; the page sits at the root, relative links work
    assert not re.findall(r'(?:href|src)="/(?!/)', page)
    assert 'href="./assets/' in page or 'href="assets/' in page


def test_an_init_py_page_links_to_ids_it_has(site: Path) -> None:
    page = (site / "files" / "pkg" / "__init__.py.html").read_text()
    ids = set(re.findall(r'\bid="([^"]+)"', page))
    own = set(re.findall(r'href="#([^"]+)"', page))
    assert own
    assert own <= ids, own - ids  # Material's "skip to content" and the title's permalink included
