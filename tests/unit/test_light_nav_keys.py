"""light_nav.NavKeys (the site engine's per-page nav key) equals nav_key(page_nav(nav, page)) on every page of
a real MkDocs navigation: big folders past the window, nested index pages, closed chains, links, and a page
the nav does not list."""

from __future__ import annotations

import json
from pathlib import Path

from mkdocs.config import load_config
from mkdocs.structure.files import get_files
from mkdocs.structure.nav import get_navigation

from generator.site.light_nav import NavKeys, nav_key, page_nav
from tests.support.nav_trees import write_nav_tree


def _navigation(root: Path, cap_folder: int = 60) -> tuple[object, list[object]]:
    nav = write_nav_tree(root / "docs", big=cap_folder, areas=30)
    (root / "mkdocs.yml").write_text(f"site_name: t\nuse_directory_urls: false\nnav: {json.dumps(nav)}\n",
                                     encoding="utf-8")
    config = load_config(str(root / "mkdocs.yml"))
    files = get_files(config)
    navigation = get_navigation(files, config)
    return navigation, [f.page for f in files.documentation_pages()]


def test_nav_keys_equal_nav_key_of_each_pages_own_nav(tmp_path: Path) -> None:
    navigation, pages = _navigation(tmp_path)
    keys = NavKeys(navigation)  # type: ignore[arg-type]
    seen = set()
    for page in pages:
        expected = nav_key(page_nav(navigation, page))  # type: ignore[arg-type]
        assert keys(page) == expected, page  # type: ignore[arg-type]
        seen.add(expected)
    assert len(seen) > len(pages) // 2  # the keys tell pages apart (each shows its own path and window)
    loose = next(p for p in pages if p.file.src_uri == "loose.md")  # type: ignore[attr-defined]
    assert keys(loose) == nav_key(page_nav(navigation, None))  # type: ignore[arg-type]  # every level closed
